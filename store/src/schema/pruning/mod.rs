//! Unknown fields, as apiextensions-apiserver prunes them
//! (`pkg/apiserver/schema/pruning/algorithm.go`): every field the
//! structural schema does not specify is dropped, except beneath
//! `x-kubernetes-preserve-unknown-fields`, and except `apiVersion`, `kind`
//! and `metadata` of the resource root and of
//! `x-kubernetes-embedded-resource` objects (their metadata is the business
//! of [`objectmeta`](super::objectmeta)).
//!
//! Only the structural part of a schema counts: `properties`, `items` and
//! `additionalProperties` of each node, never those inside `allOf`,
//! `anyOf`, `oneOf` or `not`. An `additionalProperties: true` or `false`
//! keeps every key, and prunes whatever is beneath it as a value without a
//! schema (every field of an object in it goes, scalars stay).
//!
//! The pruned fields come back as the real server prints them in
//! `unknown field "spec.ports[0].color"`: field names joined by `.`, list
//! items as `[i]`, map values by their key after a `.` (`spec.labels.a.b`
//! for the key `a` of `labels`, whatever dots it has), sorted as Go sorts
//! strings (byte order), as `PruneWithOptions` sorts them.
//!
//! [`crate::schema::coerce`] is the whole of what the decoder does to a
//! custom resource (pruning among it), and lists its unknown fields in the
//! real server's order.

use serde_json::Value;

use super::Schema;

/// The fields every resource has that a schema does not list.
const META_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

fn is_meta_field(key: &str) -> bool {
    META_FIELDS.contains(&key)
}

/// Removes from `value` the fields `schema` does not know, and returns
/// their paths, sorted. With `is_resource_root`, `value` is a whole object:
/// its `apiVersion`, `kind` and `metadata` stay, as if the root were an
/// embedded resource (`PruneWithOptions`).
pub fn prune(value: &mut Value, schema: &Schema, is_resource_root: bool) -> Vec<String> {
    let mut tracker = Tracker::default();
    let embedded = is_resource_root || schema.embedded_resource;
    prune_node(value, Some(schema), embedded, &mut tracker);
    tracker.unknown.sort();
    tracker.unknown
}

/// The path being walked and the unknown fields met (Go's
/// `UnknownFieldPathOptions`).
#[derive(Default)]
struct Tracker {
    /// The pieces of the path: names, `.` between them, `[i]` for items.
    parent: Vec<String>,
    /// The paths of the fields pruned.
    unknown: Vec<String>,
}

impl Tracker {
    fn append_key(&mut self, key: &str) {
        if !self.parent.is_empty() {
            self.parent.push(".".into());
        }
        self.parent.push(key.into());
    }

    fn append_index(&mut self, index: usize) {
        self.parent.push(format!("[{index}]"));
    }

    fn record(&mut self, key: &str) {
        let len = self.parent.len();
        self.append_key(key);
        self.unknown.push(self.parent.concat());
        self.parent.truncate(len);
    }
}

/// `prune`: `embedded` says whether the node is an embedded resource (the
/// root of an object is one).
fn prune_node(value: &mut Value, schema: Option<&Schema>, embedded: bool, t: &mut Tracker) {
    if let Some(schema) = schema
        && schema.preserves_unknown_fields()
    {
        skip_prune(value, Some(schema), embedded, t);
        return;
    }
    let depth = t.parent.len();
    match value {
        Value::Object(map) => {
            let Some(schema) = schema else {
                for key in map.keys() {
                    t.record(key);
                }
                map.clear();
                return;
            };
            let mut unknown = Vec::new();
            for (key, child) in map.iter_mut() {
                if embedded && is_meta_field(key) {
                    continue;
                }
                if let Some(property) = schema.properties.get(key) {
                    t.append_key(key);
                    prune_node(child, Some(property), property.embedded_resource, t);
                    t.parent.truncate(depth);
                } else if let Some(additional) = &schema.additional_properties {
                    t.append_key(key);
                    let values = additional.schema();
                    let child_embedded = values.is_some_and(|s| s.embedded_resource);
                    prune_node(child, values, child_embedded, t);
                    t.parent.truncate(depth);
                } else {
                    // The root's own apiVersion, kind and metadata go
                    // without a word when the root is not a resource.
                    if !is_meta_field(key) || !t.parent.is_empty() {
                        t.record(key);
                    }
                    unknown.push(key.clone());
                }
            }
            if !unknown.is_empty() {
                map.retain(|key, _| !unknown.contains(key));
            }
        }
        Value::Array(items) => {
            let item_schema = schema.and_then(|s| s.items.as_deref());
            let item_embedded = item_schema.is_some_and(|s| s.embedded_resource);
            for (index, item) in items.iter_mut().enumerate() {
                t.append_index(index);
                prune_node(item, item_schema, item_embedded, t);
                t.parent.truncate(depth);
            }
        }
        _ => {}
    }
}

/// `skipPrune`: beneath `x-kubernetes-preserve-unknown-fields`, unknown
/// fields stay, and the fields the schema specifies are pruned by their
/// own schema.
fn skip_prune(value: &mut Value, schema: Option<&Schema>, embedded: bool, t: &mut Tracker) {
    let Some(schema) = schema else {
        return;
    };
    let depth = t.parent.len();
    match value {
        Value::Object(map) => {
            for (key, child) in map.iter_mut() {
                if embedded && is_meta_field(key) {
                    continue;
                }
                if let Some(property) = schema.properties.get(key) {
                    t.append_key(key);
                    prune_node(child, Some(property), property.embedded_resource, t);
                    t.parent.truncate(depth);
                } else if let Some(additional) = &schema.additional_properties {
                    t.append_key(key);
                    let values = additional.schema();
                    let child_embedded = values.is_some_and(|s| s.embedded_resource);
                    prune_node(child, values, child_embedded, t);
                    t.parent.truncate(depth);
                }
            }
        }
        Value::Array(items) => {
            let item_schema = schema.items.as_deref();
            let item_embedded = item_schema.is_some_and(|s| s.embedded_resource);
            for (index, item) in items.iter_mut().enumerate() {
                t.append_index(index);
                skip_prune(item, item_schema, item_embedded, t);
                t.parent.truncate(depth);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests;
