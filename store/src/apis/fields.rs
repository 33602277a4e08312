//! The fields each built-in kind declares, as a real kube-apiserver 1.36
//! publishes them in its OpenAPI v3 documents (`fields.json`, written by
//! `tools/builtin-fields.py` from a real server's documents).
//!
//! The real server decodes a body of a built-in kind into its Go type: a
//! field the type does not have is dropped, and reported as
//! `fieldValidation` says (`Strict`: `400 ... strict decoding error:
//! unknown field "spec.replica"`; `Warn`: a `Warning` header each). [`prune`]
//! does the same to an object of a kind the file knows, in the body's
//! order, with the real server's paths (`spec.template.spec.containers[0].
//! imagePullPolicyy`). What a type holds without declaring fields
//! (`RawExtension`, `FieldsV1`, quantities, int-or-string) is not looked
//! into.
//!
//! The same shapes tell a strategic merge patch how to merge each list
//! ([`Shape`]): item by item by its merge key, as a set, or replaced.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::Value;

use crate::resource::info::ResourceInfo;

/// What a field holds.
#[derive(Debug)]
enum Node {
    /// A value whose insides are not checked.
    Any,
    /// An object of a type (an index into [`Shapes::types`]).
    Type(usize),
    /// A list of items, and how a strategic merge patch merges it: by the
    /// items' merge key (`Some("")` for a list of scalars, as a set), or
    /// not at all (`None`: replaced).
    List(Box<Node>, Option<String>),
    /// A map of values.
    Map(Box<Node>),
    /// A `metav1.Time` (`false`) or `metav1.MicroTime` (`true`).
    Time(bool),
}

/// Every type's fields, and each kind's type.
#[derive(Debug, Default)]
struct Shapes {
    types: Vec<HashMap<String, Node>>,
    kinds: HashMap<String, Node>,
    /// Whether each type holds a time somewhere (only those are walked
    /// for [`times`]).
    timed: Vec<bool>,
}

/// Whether `node` holds a time, given what is known of the types so far.
fn holds_time(node: &Node, timed: &[bool]) -> bool {
    match node {
        Node::Time(_) => true,
        Node::Type(ty) => timed[*ty],
        Node::List(item, _) | Node::Map(item) => holds_time(item, timed),
        Node::Any => false,
    }
}

/// The shapes of `fields.json`, read once.
fn shapes() -> &'static Shapes {
    static SHAPES: OnceLock<Shapes> = OnceLock::new();
    SHAPES.get_or_init(|| {
        let doc: Value = serde_json::from_str(include_str!("fields.json")).unwrap_or_default();
        let empty = serde_json::Map::new();
        let types = doc
            .get("types")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let index: HashMap<&str, usize> = types
            .keys()
            .enumerate()
            .map(|(i, name)| (name.as_str(), i))
            .collect();
        let node = |v: &Value| read_node(v, &index);
        let types = types
            .values()
            .map(|fields| {
                fields
                    .as_object()
                    .map(|f| f.iter().map(|(k, v)| (k.clone(), node(v))).collect())
                    .unwrap_or_default()
            })
            .collect();
        let kinds = doc
            .get("kinds")
            .and_then(Value::as_object)
            .unwrap_or(&empty)
            .iter()
            .filter_map(|(kind, ty)| Some((kind.clone(), Node::Type(*index.get(ty.as_str()?)?))))
            .collect();
        // Until nothing changes: a type holds a time when a field does.
        let types: Vec<HashMap<String, Node>> = types;
        let mut timed = vec![false; types.len()];
        loop {
            let next: Vec<bool> = types
                .iter()
                .map(|fields| fields.values().any(|node| holds_time(node, &timed)))
                .collect();
            if next == timed {
                break;
            }
            timed = next;
        }
        Shapes {
            types,
            kinds,
            timed,
        }
    })
}

fn read_node(v: &Value, index: &HashMap<&str, usize>) -> Node {
    match v {
        Value::String(name) => index
            .get(name.as_str())
            .map_or(Node::Any, |&i| Node::Type(i)),
        Value::Array(items) => match items.first() {
            Some(item) => Node::List(Box::new(read_node(item, index)), None),
            None => Node::Any,
        },
        Value::Object(map) => match (map.get("*"), map.get("l")) {
            (Some(value), _) => Node::Map(Box::new(read_node(value, index))),
            (None, Some(item)) => Node::List(
                Box::new(read_node(item, index)),
                Some(
                    map.get("k")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                ),
            ),
            (None, None) => Node::Any,
        },
        Value::Number(n) => match n.as_u64() {
            Some(1) => Node::Time(false),
            Some(2) => Node::Time(true),
            _ => Node::Any,
        },
        _ => Node::Any,
    }
}

/// The shape of `res`'s kind, when it is a built-in kind the real server
/// publishes.
fn kind_type(res: &ResourceInfo) -> Option<&'static Node> {
    if res.custom.is_some() {
        return None;
    }
    let key = if res.group.is_empty() {
        format!("{}/{}", res.version, res.kind)
    } else {
        format!("{}/{}/{}", res.group, res.version, res.kind)
    };
    shapes().kinds.get(&key)
}

/// A node of a built-in kind's shape: what a strategic merge patch needs
/// to know of a field.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shape(&'static Node);

impl Shape {
    /// The shape of `res`'s kind, when it is known here.
    pub(crate) fn of(res: &ResourceInfo) -> Option<Shape> {
        kind_type(res).map(Shape)
    }

    /// The shape of the field `name` of an object (or of a map's values).
    pub(crate) fn field(self, name: &str) -> Option<Shape> {
        match self.0 {
            Node::Type(ty) => shapes().types[*ty].get(name).map(Shape),
            Node::Map(value) => Some(Shape(value)),
            _ => None,
        }
    }

    /// The shape of a list's items.
    pub(crate) fn item(self) -> Option<Shape> {
        match self.0 {
            Node::List(item, _) => Some(Shape(item)),
            _ => None,
        }
    }

    /// How a strategic merge patch merges this list: by this merge key
    /// (`""` for scalars, as a set), or, when `None`, not at all.
    pub(crate) fn merge_key(self) -> Option<&'static str> {
        match self.0 {
            Node::List(_, key) => key.as_deref(),
            _ => None,
        }
    }
}

/// Removes from `obj` the fields its kind (`res`'s) does not declare, and
/// returns their paths, in the body's order, as the real server names them;
/// `None` for a kind not known here (the object is left as it is).
pub(crate) fn prune(res: &ResourceInfo, obj: &mut Value) -> Option<Vec<String>> {
    let node = kind_type(res)?;
    let mut unknown = Vec::new();
    // Most objects have nothing to prune: they are only read, unless they do.
    if !declares_all(obj, node, shapes()) {
        walk(obj, node, shapes(), &mut String::new(), &mut unknown);
    }
    Some(unknown)
}

/// Reads the times of `obj` (but its metadata's) as the real server's
/// decoding reads them — `metav1.Time` as RFC 3339, `metav1.MicroTime`
/// with six fractional digits — and writes them as it serves them, in UTC
/// (a Time to the second; the zero time as `null`); Go's parse error for
/// the first that does not read.
pub(crate) fn times(res: &ResourceInfo, obj: &mut Value) -> Result<(), String> {
    let Some(Node::Type(ty)) = kind_type(res) else {
        return Ok(());
    };
    let Some(map) = obj.as_object_mut() else {
        return Ok(());
    };
    let fields = &shapes().types[*ty];
    for (key, value) in map.iter_mut() {
        if key == "metadata" {
            continue;
        }
        if let Some(node) = fields.get(key) {
            read_times(value, node, shapes())?;
        }
    }
    Ok(())
}

fn read_times(value: &mut Value, node: &Node, shapes: &Shapes) -> Result<(), String> {
    use crate::go::time::parse::{Layout, format_utc, format_utc_micro, parse};
    match (node, value) {
        (Node::Time(micro), value) => {
            if let Value::String(text) = value {
                let layout = if *micro {
                    Layout::Rfc3339Micro
                } else {
                    Layout::Rfc3339
                };
                let parsed = parse(layout, text)?;
                let served = if *micro {
                    format_utc_micro(&parsed)
                } else {
                    format_utc(&parsed)
                };
                *value = served.map_or(Value::Null, Value::String);
            }
            Ok(())
        }
        (Node::Type(ty), Value::Object(map)) if shapes.timed[*ty] => {
            let fields = &shapes.types[*ty];
            for (key, value) in map.iter_mut() {
                if let Some(node) = fields.get(key) {
                    read_times(value, node, shapes)?;
                }
            }
            Ok(())
        }
        (Node::List(item, _), Value::Array(items)) => items
            .iter_mut()
            .try_for_each(|value| read_times(value, item, shapes)),
        (Node::Map(item), Value::Object(map)) => map
            .values_mut()
            .try_for_each(|value| read_times(value, item, shapes)),
        _ => Ok(()),
    }
}

/// The paths of the fields of `obj` its kind does not declare (nothing is
/// removed).
pub(crate) fn undeclared(res: &ResourceInfo, obj: &Value) -> Vec<String> {
    match kind_type(res) {
        Some(node) if !declares_all(obj, node, shapes()) => {
            let mut unknown = Vec::new();
            walk(
                &mut obj.clone(),
                node,
                shapes(),
                &mut String::new(),
                &mut unknown,
            );
            unknown
        }
        _ => Vec::new(),
    }
}

/// Whether every field of `value` is declared by `node`.
fn declares_all(value: &Value, node: &Node, shapes: &Shapes) -> bool {
    match (node, value) {
        (Node::Type(ty), Value::Object(map)) => {
            let fields = &shapes.types[*ty];
            map.iter().all(|(key, value)| {
                fields
                    .get(key)
                    .is_some_and(|node| declares_all(value, node, shapes))
            })
        }
        (Node::List(item, _), Value::Array(items)) => {
            items.iter().all(|value| declares_all(value, item, shapes))
        }
        (Node::Map(item), Value::Object(map)) => {
            map.values().all(|value| declares_all(value, item, shapes))
        }
        _ => true,
    }
}

fn walk(value: &mut Value, node: &Node, shapes: &Shapes, path: &mut String, out: &mut Vec<String>) {
    match (node, value) {
        (Node::Type(ty), Value::Object(map)) => {
            let fields = &shapes.types[*ty];
            map.retain(|key, value| {
                let len = path.len();
                if !path.is_empty() {
                    path.push('.');
                }
                path.push_str(key);
                let keep = match fields.get(key) {
                    Some(node) => {
                        walk(value, node, shapes, path, out);
                        true
                    }
                    None => {
                        out.push(path.clone());
                        false
                    }
                };
                path.truncate(len);
                keep
            });
        }
        (Node::List(item, _), Value::Array(items)) => {
            for (i, value) in items.iter_mut().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                walk(value, item, shapes, path, out);
                path.truncate(len);
            }
        }
        (Node::Map(item), Value::Object(map)) => {
            for (key, value) in map.iter_mut() {
                let len = path.len();
                path.push_str(&format!("[{key}]"));
                walk(value, item, shapes, path, out);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A built-in resource, or one like it for a kind not built in.
    fn res(group: &str, version: &str, kind: &str) -> ResourceInfo {
        let all = crate::resource::builtin::builtin_resources();
        let found = all
            .iter()
            .find(|r| r.group == group && r.version == version && r.kind == kind);
        let mut res = found.unwrap_or(&all[0]).clone();
        (res.group, res.version, res.kind) = (group.into(), version.into(), kind.into());
        res
    }

    #[test]
    fn unknown_fields_are_dropped_and_named_as_the_real_server_names_them() {
        let mut deployment = json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "d", "bogus": 1, "labels": {"a": "b"}},
            "spec": {"replica": 3, "selector": {"matchLabels": {"a": "b"}}, "template": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {"containers": [{"name": "c", "image": "x", "imagePullPolicyy": "x",
                    "resources": {"limits": {"cpu": "1"}},
                    "ports": [{"containerPort": 80, "foo": 1}]}]}}},
            "extra": {"x": 1}
        });
        let unknown = prune(&res("apps", "v1", "Deployment"), &mut deployment).unwrap();
        assert_eq!(
            unknown,
            [
                "metadata.bogus",
                "spec.replica",
                "spec.template.spec.containers[0].imagePullPolicyy",
                "spec.template.spec.containers[0].ports[0].foo",
                "extra"
            ]
        );
        assert_eq!(deployment.get("extra"), None);
        assert_eq!(deployment.pointer("/spec/replica"), None);
        assert_eq!(
            deployment.pointer("/spec/template/spec/containers/0"),
            Some(
                &json!({"name": "c", "image": "x", "resources": {"limits": {"cpu": "1"}},
                "ports": [{"containerPort": 80}]})
            )
        );
    }

    #[test]
    fn what_a_type_holds_without_fields_is_kept() {
        // A ControllerRevision's data is a RawExtension; a ConfigMap's data a
        // map of strings.
        let mut revision =
            json!({"metadata": {"name": "r"}, "data": {"anything": {"at": "all"}}, "revision": 1});
        assert_eq!(
            prune(&res("apps", "v1", "ControllerRevision"), &mut revision),
            Some(vec![])
        );
        assert_eq!(revision["data"], json!({"anything": {"at": "all"}}));
        let mut config = json!({"metadata": {"name": "c", "managedFields": [{"fieldsV1": {"f:data": {}}}]}, "data": {"any key": "v"}});
        assert_eq!(
            prune(&res("", "v1", "ConfigMap"), &mut config),
            Some(vec![])
        );
    }

    #[test]
    fn kinds_not_known_here_are_left_alone() {
        let mut obj = json!({"metadata": {"name": "w"}, "spec": {"anything": 1}});
        let custom = res("example.org", "v1", "Widget");
        assert_eq!(prune(&custom, &mut obj), None);
        assert_eq!(obj["spec"]["anything"], 1);
    }
}
