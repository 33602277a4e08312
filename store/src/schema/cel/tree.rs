//! The tree of compiled rules that validates objects, as `NewValidator`
//! builds it (`apiserver/schema/cel/validation.go`): a node for each
//! schema node with rules or with rules below it, and the rules of its
//! `allOf` entries compiled against it.

use std::collections::BTreeMap;

use super::rule::{self, Compiled};
use super::types::{Ty, decl_type, escape};
use crate::schema::Schema;

/// The compiled rules of one schema node and of the nodes below it that
/// have rules (the real server's `Validator`).
#[derive(Debug, Default)]
pub(crate) struct Node {
    /// The node is the root of a resource (the object, or an embedded one).
    pub resource_root: bool,
    /// The rules of this node.
    pub rules: Vec<Compiled>,
    /// Why no rule of this node could be compiled.
    pub init_error: Option<String>,
    /// The nodes of properties, by property name.
    pub properties: BTreeMap<String, Node>,
    /// The node of a map's values.
    pub additional: Option<Box<Node>>,
    /// The node of a list's items.
    pub items: Option<Box<Node>>,
    /// The rules of `allOf` entries, compiled against this node.
    pub all_of: Vec<Node>,
}

/// A name for the type of `self` that rules cannot rely on
/// (`generateUniqueSelfTypeName`).
pub(crate) fn self_type_name() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("selfType{nanos}")
}

fn has_rules(schema: &Schema) -> bool {
    !schema.validations.is_empty()
        || schema.items.as_deref().is_some_and(has_rules)
        || schema.additional_schema().is_some_and(has_rules)
        || schema.properties.values().any(has_rules)
}

/// The compiled rules below the root of a resource, or `None` without any
/// (`NewValidator`).
pub(crate) fn runtime_tree(schema: &Schema) -> Option<Node> {
    if !has_rules(schema) {
        return None;
    }
    let ty = decl_type(schema, true, &self_type_name());
    runtime_node(schema, schema, true, ty)
}

/// The node for the rules of `validation` over the values of `node`
/// (`validator`): `validation` is `node` itself, or one of its `allOf`.
fn runtime_node(validation: &Schema, node: &Schema, root: bool, ty: Option<Ty>) -> Option<Node> {
    let mut out = Node {
        resource_root: root,
        ..Node::default()
    };
    if !validation.validations.is_empty() {
        match &ty {
            None => {
                out.init_error =
                    Some("failed to convert to declType for CEL validation rules".into());
            }
            Some(t) => {
                out.rules = validation
                    .validations
                    .iter()
                    .map(|r| rule::compile(r, t, node, None))
                    .collect();
            }
        }
    }
    let name = self_type_name();
    if let (Some(v), Some(n)) = (validation.items.as_deref(), node.items.as_deref()) {
        let elem = decl_type(n, n.embedded_resource, &name);
        out.items = runtime_node(v, n, n.embedded_resource, elem).map(Box::new);
    }
    for (key, v) in &validation.properties {
        let Some(n) = node.properties.get(key) else {
            continue;
        };
        let field = decl_type(n, n.embedded_resource, &name);
        if field.is_none() && escape(key).is_some() {
            continue;
        }
        if let Some(child) = runtime_node(v, n, n.embedded_resource, field) {
            out.properties.insert(key.clone(), child);
        }
    }
    if let (Some(v), Some(n)) = (validation.additional_schema(), node.additional_schema()) {
        let elem = decl_type(n, n.embedded_resource, &name);
        out.additional = runtime_node(v, n, n.embedded_resource, elem).map(Box::new);
    }
    for entry in &validation.all_of {
        if let Some(child) = runtime_node(entry, node, root, ty.clone()) {
            out.all_of.push(child);
        }
    }
    let empty = out.rules.is_empty()
        && out.init_error.is_none()
        && out.items.is_none()
        && out.additional.is_none()
        && out.properties.is_empty()
        && out.all_of.is_empty();
    (!empty).then_some(out)
}
