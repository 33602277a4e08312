//! Go's `omitempty` on scalars held by value: a zero (`0`, `""`, `false`)
//! is not written, so the real server neither stores it nor lets the
//! field manager see it (a Deployment status's `replicas: 0`). The fields
//! are the `"e"` lists of `types.json`.

use serde_json::{Map, Value};

use super::builtin::{Node, Type, shape, types};

/// The fields of `map` (a struct of type `ty`) that Go does not write:
/// its `omitempty` scalars held by value, when zero.
pub(super) fn drop_zeros(ty: &Type, map: &mut Map<String, Value>) {
    map.retain(|name, value| !(ty.omitted.contains(name) && zero_scalar(value)));
}

/// Whether `value` is a scalar's zero (`0`, `""`, `false`).
fn zero_scalar(value: &Value) -> bool {
    match value {
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        _ => false,
    }
}

impl Node {
    /// `value` (of this node) without the zero scalars Go does not write
    /// (`omitempty` on a field held by value: a Deployment status's
    /// `replicas: 0`, a spec's `paused: false`), in every struct below.
    pub(crate) fn drop_zero_scalars(&'static self, value: &mut Value) {
        match (self, value) {
            (Node::Struct(i), Value::Object(map)) => {
                let ty = &types().types[*i];
                drop_zeros(ty, map);
                for (name, value) in map.iter_mut() {
                    if name != "metadata"
                        && let Some(node) = ty.fields.get(name)
                    {
                        node.drop_zero_scalars(value);
                    }
                }
            }
            (Node::List { item, .. }, Value::Array(items)) => {
                items.iter_mut().for_each(|v| item.drop_zero_scalars(v));
            }
            (Node::Map { value: node, .. }, Value::Object(map)) => {
                map.values_mut().for_each(|v| node.drop_zero_scalars(v));
            }
            _ => {}
        }
    }
}

/// An object of a built-in kind without the zero scalars Go does not
/// write ([`Node::drop_zero_scalars`]), as the real server decodes and
/// writes it, and as its field manager sees it.
pub(crate) fn without_zero_scalars(group: &str, version: &str, kind: &str, object: &mut Value) {
    if let Some(node) = shape(group, version, kind) {
        node.drop_zero_scalars(object);
    }
}

impl Node {
    /// `config` (of this node) without the null struct fields whose live
    /// value is a struct with fields: structured-merge-diff merges a null
    /// map into a non-empty one by keeping the live one (a null scalar, or
    /// a null where nothing lives, is set as null).
    fn drop_null_structs(&'static self, config: &mut Value, live: Option<&Value>) {
        match (self, config) {
            (Node::Struct(i), Value::Object(map)) => {
                let ty = &types().types[*i];
                let lives = |name: &str| live.and_then(|l| l.get(name));
                map.retain(|name, value| {
                    let kept_live = matches!(ty.fields.get(name), Some(Node::Struct(_)))
                        && lives(name)
                            .and_then(Value::as_object)
                            .is_some_and(|m| !m.is_empty());
                    !(value.is_null() && kept_live)
                });
                for (name, value) in map.iter_mut() {
                    if let Some(node) = ty.fields.get(name) {
                        node.drop_null_structs(value, lives(name));
                    }
                }
            }
            (Node::Map { value: node, .. }, Value::Object(map)) => {
                for (key, value) in map.iter_mut() {
                    node.drop_null_structs(value, live.and_then(|l| l.get(key)));
                }
            }
            _ => {}
        }
    }
}

/// An apply configuration of a built-in kind as structured-merge-diff
/// merges its nulls into `live` ([`Node::drop_null_structs`]): a null
/// struct over a live one keeps it (a Deployment's defaulted
/// `rollingUpdate` stays, and `Recreate` is refused).
pub(crate) fn without_null_structs(
    group: &str,
    version: &str,
    kind: &str,
    config: &mut Value,
    live: Option<&Value>,
) {
    if let Some(node) = shape(group, version, kind) {
        node.drop_null_structs(config, live);
    }
}
