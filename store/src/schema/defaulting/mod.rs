//! `default:` values, as apiextensions-apiserver applies them
//! (`pkg/apiserver/schema/defaulting`):
//!
//! - [`default`] (`algorithm.go`): a property that is absent, or `null`
//!   where the schema is not `nullable`, takes its default; then the walk
//!   goes on into every value, so a default object gets the defaults of
//!   its own properties. Map values (`additionalProperties`) and list
//!   items that are a non-nullable `null` take the default of their
//!   schema. Only the structural part of a schema counts, and
//!   `x-kubernetes-preserve-unknown-fields` changes nothing: the
//!   properties it specifies are defaulted all the same.
//! - [`prune_nulls`] (`prunenulls.go`): before defaulting, the decoder
//!   drops the `null` values of object fields whose schema is neither
//!   `nullable` nor has a default (list items stay).
//! - [`prune_defaults`] (`prune.go`): the defaults themselves are pruned
//!   of unknown fields, and their metadata coerced, once, when the CRD's
//!   schema is read, as the real server does before it serves a version.
//!
//! A `default: null` in a schema is no default at all.

mod prune;
pub(crate) mod validation;

use serde_json::Value;

use super::Schema;

use crate::schema::props::Additional;
pub use prune::prune_defaults;

/// The default of a schema node (`Default.Object`, which a JSON `null`
/// leaves unset).
fn default_of(schema: &Schema) -> Option<&Value> {
    schema.default.as_ref().filter(|value| !value.is_null())
}

/// `isNonNullableNull`: `null` where the schema does not allow it.
fn is_non_nullable_null(value: &Value, schema: Option<&Schema>) -> bool {
    value.is_null() && schema.is_some_and(|s| !s.nullable)
}

/// Fills the defaults of `schema` into `value` (`Default`): absent fields,
/// non-nullable `null` fields, map values and list items, all the way
/// down. Defaults are copied.
pub fn default(value: &mut Value, schema: &Schema) {
    default_node(value, Some(schema));
}

fn default_node(value: &mut Value, schema: Option<&Schema>) {
    let Some(schema) = schema else {
        return;
    };
    match value {
        Value::Object(map) => {
            for (key, property) in &schema.properties {
                let Some(default) = default_of(property) else {
                    continue;
                };
                match map.get_mut(key) {
                    None => {
                        map.insert(key.clone(), default.clone());
                    }
                    Some(present) if is_non_nullable_null(present, Some(property)) => {
                        *present = default.clone();
                    }
                    Some(_) => {}
                }
            }
            for (key, child) in map.iter_mut() {
                if let Some(property) = schema.properties.get(key) {
                    default_node(child, Some(property));
                } else if let Some(additional) = &schema.additional_properties {
                    let values = additional.schema();
                    if is_non_nullable_null(child, values) {
                        *child = values.and_then(default_of).cloned().unwrap_or(Value::Null);
                    }
                    default_node(child, values);
                }
            }
        }
        Value::Array(items) => {
            let item_schema = schema.items.as_deref();
            for item in items.iter_mut() {
                if is_non_nullable_null(item, item_schema) {
                    *item = item_schema
                        .and_then(default_of)
                        .cloned()
                        .unwrap_or(Value::Null);
                }
                default_node(item, item_schema);
            }
        }
        _ => {}
    }
}

/// Drops the `null` values of object fields whose schema is neither
/// `nullable` nor has a default (`PruneNonNullableNullsWithoutDefaults`);
/// those with a default are left for [`default`] to fill. A field the
/// schema does not know (no property, no `additionalProperties` schema)
/// keeps its `null`, and so does a list item.
pub fn prune_nulls(value: &mut Value, schema: &Schema) {
    prune_nulls_node(value, Some(schema));
}

/// `getSchemaForField`.
fn schema_for_field<'a>(field: &str, schema: Option<&'a Schema>) -> Option<&'a Schema> {
    let schema = schema?;
    if let Some(property) = schema.properties.get(field) {
        return Some(property);
    }
    schema
        .additional_properties
        .as_ref()
        .and_then(Additional::schema)
}

fn prune_nulls_node(value: &mut Value, schema: Option<&Schema>) {
    match value {
        Value::Object(map) => {
            map.retain(|key, child| {
                let field = schema_for_field(key, schema);
                let drop = child.is_null()
                    && field.is_some_and(|s| !s.nullable && default_of(s).is_none());
                if !drop {
                    prune_nulls_node(child, field);
                }
                !drop
            });
        }
        Value::Array(items) => {
            let item_schema = schema.and_then(|s| s.items.as_deref());
            for item in items.iter_mut() {
                prune_nulls_node(item, item_schema);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests;
