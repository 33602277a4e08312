//! Field paths and sets as `fieldsV1` writes them, and their order.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::typed::element_display;

/// A path: each element as `fieldsV1` writes it (`f:spec`, `k:{...}`, `v:...`).
pub(crate) type FieldPath = Vec<String>;

/// A set of paths, each one owned as a whole (a field, a list item).
pub(crate) type FieldSet = BTreeSet<FieldPath>;

/// The element of the field `name`.
pub(crate) fn field(name: &str) -> String {
    format!("f:{name}")
}

/// A path as structured-merge-diff prints it: `.spec.users[name="x"].roles`.
pub(crate) fn display(path: &[String]) -> String {
    path.iter().map(|e| element_display(e)).collect()
}

/// The paths of `set` in the order structured-merge-diff iterates them:
/// at each level the paths that end there, then those below.
pub(crate) fn ordered(set: &FieldSet) -> Vec<FieldPath> {
    fn go(tree: &Tree, path: &mut FieldPath, out: &mut Vec<FieldPath>) {
        for (element, node) in &tree.children {
            if node.member {
                path.push(element.clone());
                out.push(path.clone());
                path.pop();
            }
        }
        for (element, node) in &tree.children {
            if !node.children.is_empty() {
                path.push(element.clone());
                go(node, path, out);
                path.pop();
            }
        }
    }
    let mut out = Vec::new();
    go(&Tree::of(set), &mut Vec::new(), &mut out);
    out
}

/// A field set as a `fieldsV1` document: `{}` for a path in the set, `.`
/// for one in the set with paths below it.
pub(crate) fn fields_v1(set: &FieldSet) -> Value {
    fn render(tree: &Tree) -> Value {
        let mut out = Map::new();
        if tree.member && !tree.children.is_empty() {
            out.insert(".".into(), Value::Object(Map::new()));
        }
        for (element, node) in &tree.children {
            out.insert(element.clone(), render(node));
        }
        Value::Object(out)
    }
    render(&Tree::of(set))
}

/// A `fieldsV1` document read back into a field set.
pub(crate) fn parse_fields_v1(doc: &Value) -> FieldSet {
    fn go(node: &Value, path: &mut FieldPath, out: &mut FieldSet) {
        let Some(map) = node.as_object() else { return };
        for (element, child) in map {
            if element == "." {
                continue;
            }
            path.push(element.clone());
            let children = child.as_object();
            if children.is_none_or(|c| c.is_empty() || c.contains_key(".")) {
                out.insert(path.clone());
            }
            go(child, path, out);
            path.pop();
        }
    }
    let mut out = FieldSet::new();
    go(doc, &mut Vec::new(), &mut out);
    out
}

/// A field set as a tree: whether each node is in the set, and below it.
#[derive(Debug, Default)]
pub(crate) struct Tree {
    pub(crate) member: bool,
    pub(crate) children: BTreeMap<String, Tree>,
}

impl Tree {
    pub(crate) fn of(set: &FieldSet) -> Tree {
        let mut root = Tree::default();
        for path in set {
            let node = path.iter().fold(&mut root, |node, element| {
                node.children.entry(element.clone()).or_default()
            });
            node.member = true;
        }
        root
    }
}
