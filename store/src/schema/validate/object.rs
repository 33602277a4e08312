//! kube-openapi's `objectValidator` (`validate/object_validator.go`):
//! `minProperties`, `maxProperties`, `additionalProperties`, `properties`
//! and `required`. (`patternProperties` is refused in a CRD's schema and
//! not read.)
//!
//! Paths are built as Go builds them: a property is `path.name` (just
//! `name` at the root), a required one `path.name` even at the root
//! (`.spec`), an additional property `path.key` even at the root.

use serde_json::{Map, Value};

use super::result::GoResult;
use super::{errors, ratchet};
use crate::schema::{Additional, Schema};

/// Validates the object `map` at `path`; `old` is its correlated old value
/// when ratcheting.
pub(crate) fn validate(
    schema: &Schema,
    path: &str,
    map: &Map<String, Value>,
    old: Option<&Value>,
) -> GoResult {
    let mut res = GoResult::new();
    let size = map.len() as i64;
    if let Some(min) = schema.min_properties
        && size < min
    {
        res.add(errors::too_few_properties(path, min, size));
    }
    if let Some(max) = schema.max_properties
        && size > max
    {
        res.add(errors::too_many_properties(path, max, size));
    }

    match &schema.additional_properties {
        Some(Additional::Allows(false)) => {
            for key in map.keys() {
                if !schema.properties.contains_key(key) {
                    res.add(errors::property_not_allowed(path, key));
                }
            }
        }
        Some(Additional::Schema(additional)) => {
            for (key, value) in map {
                if !schema.properties.contains_key(key) {
                    let child_path = format!("{path}.{key}");
                    res.merge(child(additional, &child_path, path, key, value, old));
                }
            }
        }
        _ => {}
    }

    for (name, property) in &schema.properties {
        if let Some(value) = map.get(name) {
            let child_path = if path.is_empty() {
                name.clone()
            } else {
                format!("{path}.{name}")
            };
            res.merge(child(property, &child_path, path, name, value, old));
        }
    }

    for name in &schema.required {
        if !map.contains_key(name) {
            res.add(errors::required(&format!("{path}.{name}")));
        }
    }
    res
}

/// The validator of one property: ratcheting when its old value can be
/// correlated (`ratchetingValueValidator.SubPropertyValidator`), except
/// for `kind` and `apiVersion` at the root.
fn child(
    schema: &Schema,
    child_path: &str,
    parent_path: &str,
    key: &str,
    value: &Value,
    old_parent: Option<&Value>,
) -> GoResult {
    let type_meta = parent_path.is_empty() && (key == "kind" || key == "apiVersion");
    let old = old_parent
        .and_then(Value::as_object)
        .and_then(|o| o.get(key))
        .filter(|_| !type_meta);
    ratchet::validate_child(schema, child_path, value, old)
}

#[cfg(test)]
mod tests {
    use super::super::validate as validate_object;
    use crate::schema::Schema;
    use serde_json::{Value, json};

    fn messages(schema: Value, object: Value) -> Vec<String> {
        let schema = Schema::from_json(&schema);
        let mut m: Vec<String> = validate_object(&schema, &object)
            .iter()
            .map(ToString::to_string)
            .collect();
        m.sort();
        m
    }

    #[test]
    fn additional_properties_false_forbids_each_other_key() {
        let schema = json!({"type": "object", "properties": {"closed": {
            "type": "object", "additionalProperties": false, "x-kubernetes-preserve-unknown-fields": true}}});
        assert_eq!(
            messages(schema, json!({"closed": {"a": 1, "b": 2}})),
            [
                "closed: Invalid value: \"a\": closed.a in body is a forbidden property",
                "closed: Invalid value: \"b\": closed.b in body is a forbidden property",
            ]
        );
    }

    #[test]
    fn root_paths_are_written_as_go_writes_them() {
        let schema = json!({"type": "object", "required": ["spec"],
            "additionalProperties": {"type": "string"}, "minProperties": 2});
        assert_eq!(
            messages(schema, json!({"x": 1})),
            [
                "<nil>: Invalid value: 1:  in body should have at least 2 properties",
                "spec: Required value",
                "x: Invalid value: \"integer\": .x in body must be of type string: \"integer\"",
            ]
        );
    }

    #[test]
    fn a_required_name_listed_twice_is_one_error() {
        let schema = json!({"type": "object", "properties": {"o": {"type": "object", "required": ["a", "a"]}}});
        assert_eq!(messages(schema, json!({"o": {}})), ["o.a: Required value"]);
    }
}
