//! Ratcheting (feature CRDValidationRatcheting): apiextensions'
//! `RatchetingSchemaValidator` (`pkg/apiserver/validation/ratcheting.go`)
//! and the correlation of old and new values it walks with
//! (`apiserver/pkg/cel/common/equality.go`, `maplist.go`).
//!
//! A node whose old value can be correlated is validated as usual, and if
//! it has errors but is equal to its old value, the errors are dropped.
//! A property correlates with the same key of the old object (except
//! `kind` and `apiVersion` at the root); an item of a list correlates only
//! in an `x-kubernetes-list-type: map` list, with the old item of the same
//! keys. Equality is Go's deep equality, computed through the correlation:
//! a map-list in another order is equal, an object with a field the
//! schema does not declare is not.

use serde_json::Value;

use super::go::{self, Num};
use super::result::GoResult;
use super::schema;
use crate::go::strconv::go_quote;
use crate::schema::{Additional, Schema};

/// Validates a child: with ratcheting when it has a correlated old value.
pub(crate) fn validate_child(
    schema: &Schema,
    path: &str,
    new: &Value,
    old: Option<&Value>,
) -> GoResult {
    match old {
        Some(old) => validate(schema, path, new, old),
        None => schema::validate(schema, path, new, None),
    }
}

/// `ratchetingValueValidator.Validate`: the errors of `new`, unless it
/// equals `old`.
pub(crate) fn validate(schema: &Schema, path: &str, new: &Value, old: &Value) -> GoResult {
    let result = schema::validate(schema, path, new, Some(old));
    if !result.is_valid() && equal(schema, new, old) {
        return result.into_warnings();
    }
    result
}

/// The old item an item of a list correlates with: in a list of type map,
/// the first old item with the same keys (`MapList.Get`).
pub(crate) fn correlate_item<'a>(
    schema: &Schema,
    old: &'a Value,
    item: &Value,
) -> Option<&'a Value> {
    let old_items = old.as_array()?;
    if schema.list_type.as_deref() != Some("map")
        || schema.type_.as_deref() != Some("array")
        || schema.list_map_keys.is_empty()
        || old_items.is_empty()
    {
        return None;
    }
    let key = map_key(&schema.list_map_keys, item)?;
    old_items
        .iter()
        .find(|old_item| map_key(&schema.list_map_keys, old_item).as_ref() == Some(&key))
}

/// The key of a map-list item: the value of its one key, or the values
/// of all its keys written as Go writes them; none when a key is missing
/// or not a scalar.
#[derive(Debug, PartialEq)]
enum Key {
    Bool(bool),
    Int(i64),
    Float(u64),
    Text(String),
    Composite(String),
}

fn map_key(keys: &[String], item: &Value) -> Option<Key> {
    let object = item.as_object()?;
    if let [key] = keys {
        let value = object.get(key)?;
        return match value {
            Value::Bool(b) => Some(Key::Bool(*b)),
            Value::String(s) => Some(Key::Text(s.clone())),
            Value::Number(_) => match Num::of(value)? {
                Num::Int(i) => Some(Key::Int(i)),
                // +0 and -0 are the same key.
                Num::Float(f) => Some(Key::Float(if f == 0.0 { 0 } else { f.to_bits() })),
            },
            _ => None,
        };
    }
    let mut composite = String::new();
    for key in keys {
        let value = object.get(key)?;
        composite.push('\0');
        match value {
            Value::Bool(b) => composite.push_str(&b.to_string()),
            Value::String(s) => composite.push_str(&go_quote(s)),
            Value::Number(_) => match Num::of(value)? {
                Num::Int(i) => composite.push_str(&i.to_string()),
                Num::Float(f) => composite.push_str(&format!("{f:.6}")),
            },
            _ => return None,
        }
    }
    Some(Key::Composite(composite))
}

/// `CorrelatedObject.CachedDeepEqual`.
fn equal(schema: &Schema, new: &Value, old: &Value) -> bool {
    match (new, old) {
        (Value::Null, Value::Null) => true,
        (Value::Null, _) | (_, Value::Null) => false,
        (Value::Array(items), Value::Array(old_items)) => {
            if items.len() != old_items.len() {
                return false;
            }
            if schema.list_type.as_deref() != Some("map") {
                return go::deep_equal(new, old);
            }
            let Some(item_schema) = &schema.items else {
                return items.is_empty();
            };
            items.iter().all(|item| {
                correlate_item(schema, old, item)
                    .is_some_and(|old_item| equal(item_schema, item, old_item))
            })
        }
        (Value::Object(map), Value::Object(old_map)) => {
            map.len() == old_map.len()
                && map.iter().all(|(key, value)| {
                    let property =
                        schema
                            .properties
                            .get(key)
                            .or(match &schema.additional_properties {
                                Some(Additional::Schema(s)) => Some(s.as_ref()),
                                _ => None,
                            });
                    match (property, old_map.get(key)) {
                        (Some(property), Some(old_value)) => equal(property, value, old_value),
                        _ => false,
                    }
                })
        }
        (Value::Array(_) | Value::Object(_), _) | (_, Value::Array(_) | Value::Object(_)) => false,
        _ => go::deep_equal(new, old),
    }
}

#[cfg(test)]
mod tests {
    use super::super::{validate_update, validate_update_at};
    use super::*;
    use crate::machinery::field::Path;
    use serde_json::json;

    fn schema(value: Value) -> Schema {
        Schema::from_json(&value)
    }

    fn valid(schema: &Schema, new: Value, old: Value) -> bool {
        validate_update(schema, &new, &old).is_empty()
    }

    /// The schemas of apiextensions' `ratcheting_test.go`.
    fn numbers() -> Schema {
        schema(json!({"type": "object", "properties": {
            "zero": {"type": "number", "minimum": 0, "maximum": 0},
            "small": {"type": "number", "maximum": 50},
            "medium": {"type": "number", "minimum": 50, "maximum": 10000},
            "large": {"type": "number", "minimum": 10000},
        }}))
    }

    #[test]
    fn an_unchanged_scalar_keeps_its_error_silent() {
        let medium = schema(json!({"type": "number", "minimum": 50, "maximum": 10000}));
        assert!(valid(&medium, json!(1), json!(1)));
        assert!(!valid(&medium, json!(1), json!(2)));
    }

    #[test]
    fn unchanged_fields_of_objects_are_ratcheted() {
        let object = numbers();
        assert!(valid(&object, json!({"small": 500}), json!({"small": 500})));
        assert!(valid(
            &object,
            json!({"small": 501}),
            json!({"small": 501, "medium": 500})
        ));
        assert!(!valid(
            &object,
            json!({"small": 500}),
            json!({"small": 501})
        ));
        let nested = schema(json!({"type": "object", "properties": {"nested": {
            "type": "object", "properties": {"small": {"type": "number", "maximum": 50}, "medium": {"type": "number"}}
        }}}));
        assert!(valid(
            &nested,
            json!({"nested": {"small": 500}}),
            json!({"nested": {"small": 500}})
        ));
        assert!(valid(
            &nested,
            json!({"nested": {"small": 501}}),
            json!({"nested": {"small": 501, "medium": 500}})
        ));
        assert!(!valid(
            &nested,
            json!({"nested": {"small": 500}}),
            json!({"nested": {"small": 501}})
        ));
    }

    #[test]
    fn a_numeric_format_error_is_ratcheted_while_unchanged() {
        let s = schema(json!({"type": "object", "properties": {
            "intThirtyTwo": {"type": "integer", "format": "int32"},
            "unrelated": {"type": "string"},
        }}));
        let over = json!(2147483648i64);
        assert!(valid(
            &s,
            json!({"intThirtyTwo": over}),
            json!({"intThirtyTwo": over})
        ));
        assert!(valid(
            &s,
            json!({"intThirtyTwo": over, "unrelated": "changed"}),
            json!({"intThirtyTwo": over, "unrelated": "original"})
        ));
        assert!(!valid(
            &s,
            json!({"intThirtyTwo": 2147483649i64}),
            json!({"intThirtyTwo": over})
        ));
    }

    #[test]
    fn map_list_items_correlate_by_key_in_any_order() {
        let s = schema(json!({"type": "object", "properties": {"ports": {
            "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer", "maximum": 10}}}
        }, "other": {"type": "string"}}}));
        let old = json!({"ports": [{"name": "a", "port": 99}], "other": "x"});
        let moved =
            json!({"ports": [{"name": "b", "port": 1}, {"name": "a", "port": 99}], "other": "y"});
        assert!(valid(&s, moved, old.clone()));
        let changed = json!({"ports": [{"name": "a", "port": 98}], "other": "x"});
        assert_eq!(
            validate_update(&s, &changed, &old)[0].to_string(),
            "ports[0].port: Invalid value: 98: ports[0].port in body should be less than or equal to 10"
        );
        // Two errors in another order are the same list.
        let two =
            json!({"ports": [{"name": "a", "port": 99}, {"name": "b", "port": 99}], "other": "x"});
        let swapped =
            json!({"ports": [{"name": "b", "port": 99}, {"name": "a", "port": 99}], "other": "y"});
        assert!(valid(&s, swapped, two));
    }

    #[test]
    fn composite_keys_write_floats_with_six_decimals() {
        // As a real server answers: 1.0000002 and 1.0000001 are one key.
        let s = schema(json!({"type": "object", "properties": {"l": {
            "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["a", "b"],
            "items": {"type": "object", "required": ["a", "b"], "properties": {
                "a": {"type": "string"}, "b": {"type": "number"}, "v": {"type": "integer", "maximum": 10}}}
        }, "o": {"type": "string"}}}));
        let old = json!({"l": [{"a": "x", "b": 1.0000001, "v": 99}], "o": "1"});
        assert!(valid(
            &s,
            json!({"l": [{"a": "x", "b": 1.0000002, "v": 99}], "o": "2"}),
            old.clone()
        ));
        assert_eq!(
            validate_update(
                &s,
                &json!({"l": [{"a": "x", "b": 1.0000012, "v": 99}], "o": "2"}),
                &old
            )[0]
            .to_string(),
            "l[0].v: Invalid value: 99: l[0].v in body should be less than or equal to 10"
        );
    }

    #[test]
    fn items_of_an_atomic_list_ratchet_only_with_the_whole_list() {
        let s = schema(json!({"type": "object", "properties": {
            "tags": {"type": "array", "items": {"type": "string", "maxLength": 1}},
            "other": {"type": "string"},
        }}));
        let old = json!({"tags": ["long", "b"], "other": "x"});
        assert!(valid(
            &s,
            json!({"tags": ["long", "b"], "other": "y"}),
            old.clone()
        ));
        assert!(!valid(
            &s,
            json!({"tags": ["long", "c"], "other": "x"}),
            old
        ));
    }

    #[test]
    fn kind_and_api_version_at_the_root_are_not_ratcheted() {
        let s = schema(json!({"type": "object", "properties": {
            "kind": {"type": "string", "maxLength": 1},
            "spec": {"type": "object", "properties": {"kind": {"type": "string", "maxLength": 1}}},
            "other": {"type": "string"},
        }}));
        let old = json!({"kind": "Widget", "spec": {"kind": "Widget"}, "other": "x"});
        let new = json!({"kind": "Widget", "spec": {"kind": "Widget"}, "other": "y"});
        let errors = validate_update(&s, &new, &old);
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].field.to_string(), "kind");
        // The whole object unchanged is still ratcheted at the root.
        assert!(valid(&s, old.clone(), old));
    }

    #[test]
    fn an_object_with_undeclared_fields_never_equals_its_old_value() {
        let s = schema(json!({"type": "object", "properties": {"config": {
            "type": "object", "x-kubernetes-preserve-unknown-fields": true, "maxProperties": 1
        }}}));
        let old = json!({"config": {"a": 1, "b": 2}});
        assert_eq!(
            validate_update(&s, &old, &old)[0].to_string(),
            "config: Too many: 2: must have at most 1 item"
        );
    }

    #[test]
    fn errors_found_through_all_of_ratchet_only_with_the_node_holding_it() {
        let s = schema(json!({"type": "object", "properties": {"spec": {
            "type": "object",
            "properties": {"x": {"type": "string"}, "y": {"type": "string"}},
            "allOf": [{"properties": {"x": {"maxLength": 1}}}]
        }}}));
        let old = json!({"spec": {"x": "long", "y": "a"}});
        assert!(valid(&s, old.clone(), old.clone()));
        let errors = validate_update(&s, &json!({"spec": {"x": "long", "y": "b"}}), &old);
        assert_eq!(errors.len(), 2, "{errors:?}");
    }

    #[test]
    fn a_no_op_update_keeps_errors_the_correlation_cannot_see_through() {
        // The answers of a real server after a CRD was tightened over a
        // stored object.
        let s = schema(json!({"type": "object", "properties": {"spec": {
            "type": "object",
            "allOf": [{"properties": {"x": {"maxLength": 1}}}],
            "properties": {
                "x": {"type": "string"}, "y": {"type": "string"},
                "z": {"type": "string", "maxLength": 1},
                "config": {"type": "object", "x-kubernetes-preserve-unknown-fields": true, "maxProperties": 1},
                "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "required": ["name"], "properties": {
                        "name": {"type": "string"}, "port": {"type": "integer", "maximum": 10}}}},
            }
        }}}));
        let object = |spec: Value| json!({"apiVersion": "v", "kind": "Ratchet", "metadata": {"name": "r"}, "spec": spec});
        let old = object(
            json!({"x": "long", "y": "a", "z": "long", "config": {"a": 1, "b": 2},
            "ports": [{"name": "a", "port": 99}, {"name": "b", "port": 1}]}),
        );
        let messages = |new: &Value| {
            let mut m: Vec<String> = validate_update(&s, new, &old)
                .iter()
                .map(ToString::to_string)
                .collect();
            m.sort();
            m
        };
        assert_eq!(
            messages(&old),
            [
                "<nil>: Invalid value: \"\": \"spec\" must validate all the schemas (allOf). None validated",
                "spec.config: Too many: 2: must have at most 1 item",
                "spec.x: Too long: may not be more than 1 byte",
            ]
        );
        let reordered = object(json!({"x": "long", "y": "b", "z": "long",
            "ports": [{"name": "b", "port": 1}, {"name": "a", "port": 99}]}));
        assert_eq!(
            messages(&reordered),
            [
                "<nil>: Invalid value: \"\": \"spec\" must validate all the schemas (allOf). None validated",
                "spec.x: Too long: may not be more than 1 byte",
            ]
        );
    }

    #[test]
    fn a_status_update_ratchets_against_the_old_status() {
        let status = schema(
            json!({"type": "object", "properties": {"phase": {"type": "string", "enum": ["A"]}, "n": {"type": "integer"}}}),
        );
        let field = Path::new(["status"]);
        let old = json!({"phase": "B", "n": 1});
        assert!(
            validate_update_at(&field, &status, &json!({"phase": "B", "n": 2}), &old).is_empty()
        );
        assert_eq!(
            validate_update_at(&field, &status, &json!({"phase": "C"}), &old)[0].to_string(),
            "status.phase: Unsupported value: \"C\": supported values: \"A\""
        );
    }
}
