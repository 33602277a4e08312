//! kube-openapi's `schemaSliceValidator` (`validate/slice_validator.go`):
//! `items`, `minItems`, `maxItems` and `uniqueItems`.

use serde_json::Value;

use super::result::GoResult;
use super::{errors, go, ratchet, schema};
use crate::schema::Schema;

/// Validates the list `items` at `path`; `old` is its correlated old value
/// when ratcheting.
pub(crate) fn validate(
    schema: &Schema,
    path: &str,
    items: &[Value],
    old: Option<&Value>,
) -> GoResult {
    let mut result = GoResult::new();
    let size = items.len() as i64;

    if let Some(item_schema) = &schema.items {
        for (i, item) in items.iter().enumerate() {
            let old_item = old.and_then(|old| ratchet::correlate_item(schema, old, item));
            let item_path = format!("{path}[{i}]");
            result.merge(ratchet::validate_child(
                item_schema,
                &item_path,
                item,
                old_item,
            ));
        }
    }
    // `items` as a list of schemas (refused in a CRD, validated if there):
    // each item against the schema at its index, never ratcheted.
    if let Some(schemas) = &schema.items_list {
        for ((i, item_schema), item) in schemas.iter().enumerate().zip(items) {
            let item_path = format!("{path}[{i}]");
            result.merge(schema::validate(item_schema, &item_path, item, None));
        }
    }

    if let Some(min) = schema.min_items
        && size < min
    {
        result.add(errors::too_few_items(path, min, size));
    }
    if let Some(max) = schema.max_items
        && size > max
    {
        result.add(errors::too_many_items(path, max, size));
    }
    if schema.unique_items {
        let duplicate = items
            .iter()
            .enumerate()
            .any(|(i, a)| items[..i].iter().any(|b| go::deep_equal(a, b)));
        if duplicate {
            result.add(errors::duplicate_items(path));
        }
    }
    result.inc();
    result
}

#[cfg(test)]
mod tests {
    use super::super::validate as validate_object;
    use crate::schema::Schema;
    use serde_json::{Value, json};

    fn messages(schema: Value, object: Value) -> Vec<String> {
        let schema = Schema::from_json(&schema);
        validate_object(&schema, &object)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn unique_items_compares_as_go_deep_equal() {
        let schema =
            json!({"type": "object", "properties": {"l": {"type": "array", "uniqueItems": true}}});
        assert_eq!(
            messages(schema.clone(), json!({"l": [{"a": 1}, {"a": 1}]})),
            ["l: Invalid value: \"\": l in body shouldn't contain duplicates"]
        );
        assert!(messages(schema, json!({"l": [1, 1.0]})).is_empty());
    }

    #[test]
    fn items_as_a_list_check_each_index() {
        let schema = json!({"type": "object", "properties": {"l": {"type": "array",
            "items": [{"type": "string"}, {"type": "integer"}]}}});
        assert_eq!(
            messages(schema, json!({"l": ["a", "b", true]})),
            ["l[1]: Invalid value: \"string\": l[1] in body must be of type integer: \"string\""]
        );
    }

    #[test]
    fn too_few_items_is_invalid_and_too_many_is_too_many() {
        let schema = json!({"type": "object", "properties": {"l": {"type": "array", "minItems": 2, "maxItems": 1}}});
        assert_eq!(
            messages(schema.clone(), json!({"l": ["a"]})),
            ["l: Invalid value: 1: l in body should have at least 2 items"]
        );
        assert_eq!(
            messages(schema, json!({"l": ["a", "b"]})),
            ["l: Too many: 2: must have at most 1 item"]
        );
    }
}
