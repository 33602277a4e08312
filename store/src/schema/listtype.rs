//! `x-kubernetes-list-type: set` and `map`: no duplicates, as
//! apiextensions-apiserver checks them (`pkg/apiserver/schema/listtype`
//! `ValidateListSetsAndMaps`).
//!
//! In a set, the second appearance of an item is a `Duplicate value`
//! (`spec.tags[2]: Duplicate value: "a"`; a third is not reported again);
//! items compare as Go compares them: scalars by type and value (`1` and
//! `1.0` differ), lists and objects by their JSON. In a map list, items
//! must be objects (or `null`), and the second item with the same keys is
//! a `Duplicate value` of those keys (`spec.ports[1]: Duplicate value:
//! {"name":"http"}`), a missing key being a value of its own (`{}`).
//!
//! The real server checks the new object on create; on update, only when
//! the old object had no duplicates (ratcheting, the caller's part).

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::Schema;
use super::props::Additional;
use crate::go::json::encode::go_json;
use crate::machinery::field::{ErrorList, FieldError, Path};

/// The duplicates in the sets and map lists of a whole object.
pub fn validate_lists(value: &Value, schema: &Schema) -> ErrorList {
    validate_lists_at(&Path::none(), value, schema)
}

/// The duplicates in the sets and map lists of `value`, an object at
/// `path` (`ValidateListSetsAndMaps`).
pub fn validate_lists_at(path: &Path, value: &Value, schema: &Schema) -> ErrorList {
    let mut errors = ErrorList::new();
    if let Value::Object(map) = value {
        validate_object(path, schema, map, &mut errors);
    }
    errors
}

fn validate_object(path: &Path, schema: &Schema, map: &Map<String, Value>, errors: &mut ErrorList) {
    if let Some(values) = schema
        .additional_properties
        .as_ref()
        .and_then(Additional::schema)
    {
        for (key, child) in map {
            validate_value(&path.key(key), values, child, errors);
        }
    }
    if !schema.properties.is_empty() {
        for (key, child) in map {
            if let Some(property) = schema.properties.get(key) {
                validate_value(&path.child(key), property, child, errors);
            }
        }
    }
}

fn validate_value(path: &Path, schema: &Schema, value: &Value, errors: &mut ErrorList) {
    match value {
        Value::Array(items) => validate_array(path, schema, items, errors),
        Value::Object(map) => validate_object(path, schema, map, errors),
        _ => {}
    }
}

fn validate_array(path: &Path, schema: &Schema, items: &[Value], errors: &mut ErrorList) {
    match schema.list_type.as_deref() {
        Some("set") => {
            let keys: Vec<Key> = items.iter().map(Key::of).collect();
            for index in non_unique(&keys) {
                errors.push(FieldError::duplicate(
                    &path.index(index),
                    items[index].clone(),
                ));
            }
        }
        Some("map") => validate_map_list(path, schema, items, errors),
        _ => {}
    }
    if let Some(item_schema) = schema.items.as_deref() {
        for (index, item) in items.iter().enumerate() {
            validate_value(&path.index(index), item_schema, item, errors);
        }
    }
}

/// An item as Go tells items apart: scalars by their dynamic type and
/// value, compound values by their JSON, a missing map key by itself.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    /// A key field that is not there (`unspecifiedKeyValue{}`).
    Unspecified,
    Null,
    Bool(bool),
    Int(i64),
    /// A float, by its bits (`-0` is `0`).
    Float(u64),
    Text(String),
    /// An object or a list, by `json.Marshal`.
    Compound(String),
}

impl Key {
    fn of(value: &Value) -> Key {
        match value {
            Value::Null => Key::Null,
            Value::Bool(flag) => Key::Bool(*flag),
            Value::Number(number) => match number.as_i64() {
                Some(int) => Key::Int(int),
                None => {
                    let float = number.as_f64().unwrap_or_default();
                    Key::Float(if float == 0.0 { 0 } else { float.to_bits() })
                }
            },
            Value::String(text) => Key::Text(text.clone()),
            Value::Array(_) | Value::Object(_) => Key::Compound(go_json(value)),
        }
    }
}

/// `validateListSet`: the indices where an item is seen the second time.
fn non_unique(keys: &[Key]) -> Vec<usize> {
    if keys.len() <= 1 {
        return Vec::new();
    }
    let mut seen: HashMap<&Key, usize> = HashMap::new();
    let mut indices = Vec::new();
    for (index, key) in keys.iter().enumerate() {
        let times = seen.entry(key).or_insert(0);
        *times += 1;
        if *times == 2 {
            indices.push(index);
        }
    }
    indices
}

/// `validateListMap`.
fn validate_map_list(path: &Path, schema: &Schema, items: &[Value], errors: &mut ErrorList) {
    if let Some(index) = items.iter().position(|x| !x.is_null() && !x.is_object()) {
        errors.push(FieldError::invalid(
            &path.index(index),
            items[index].clone(),
            "must be an object for an array of list-type map",
        ));
        return;
    }
    if items.len() <= 1 {
        return;
    }
    if let [key_field] = schema.list_map_keys.as_slice() {
        let keys: Vec<Option<&Value>> = items
            .iter()
            .map(|item| item.as_object().and_then(|map| map.get(key_field)))
            .collect();
        let compared: Vec<Key> = keys
            .iter()
            .map(|key| key.map_or(Key::Unspecified, Key::of))
            .collect();
        for index in non_unique(&compared) {
            let mut duplicate = Map::new();
            if let Some(key) = keys[index] {
                duplicate.insert(key_field.clone(), key.clone());
            }
            errors.push(FieldError::duplicate(
                &path.index(index),
                Value::Object(duplicate),
            ));
        }
        return;
    }
    let keys: Vec<Value> = items
        .iter()
        .map(|item| {
            let mut key = Map::new();
            if let Some(map) = item.as_object() {
                for field in &schema.list_map_keys {
                    if let Some(value) = map.get(field) {
                        key.insert(field.clone(), value.clone());
                    }
                }
            }
            Value::Object(key)
        })
        .collect();
    let compared: Vec<Key> = keys.iter().map(Key::of).collect();
    for index in non_unique(&compared) {
        errors.push(FieldError::duplicate(
            &path.index(index),
            keys[index].clone(),
        ));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn check(object: Value, schema: Value) -> Vec<String> {
        let errors = validate_lists_at(&Path::new(["root"]), &object, &Schema::from_json(&schema));
        let mut rendered: Vec<String> = errors.iter().map(ToString::to_string).collect();
        rendered.sort();
        rendered
    }

    fn set() -> Value {
        json!({"type": "array", "x-kubernetes-list-type": "set"})
    }

    fn map_list(keys: &[&str]) -> Value {
        json!({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": keys,
               "items": {"type": "object", "additionalProperties": {"x-kubernetes-preserve-unknown-fields": true}}})
    }

    /// The answers of the real server (`crd-lists-maps` recordings).
    #[test]
    fn duplicates_are_the_real_servers() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                      "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}},
        }}}});
        let schema = Schema::from_json(&schema);
        let errors = validate_lists(&json!({"spec": {"tags": ["a", "b", "a"]}}), &schema);
        assert_eq!(errors.len(), 1);
        assert_eq!(
            errors[0].to_string(),
            "spec.tags[2]: Duplicate value: \"a\""
        );
        assert_eq!(errors[0].kind.reason(), "FieldValueDuplicate");
        let errors = validate_lists(
            &json!({"spec": {"ports": [{"name": "http", "port": 80}, {"name": "http", "port": 81}]}}),
            &schema,
        );
        assert_eq!(errors.len(), 1);
        assert_eq!(
            errors[0].to_string(),
            "spec.ports[1]: Duplicate value: {\"name\":\"http\"}"
        );
        assert!(validate_lists(&json!({"spec": {"tags": ["b", "a"]}}), &schema).is_empty());
        // A map list item without its key is for the schema's `required`.
        assert!(validate_lists(&json!({"spec": {"ports": [{"port": 80}]}}), &schema).is_empty());
    }

    #[test]
    fn lists_without_a_list_type_or_schema_are_not_checked() {
        assert!(check(json!({"array": ["a", "b", "a"]}), json!({})).is_empty());
        assert!(
            check(
                json!({"array": ["a", "b", "a"]}),
                json!({"type": "object", "properties": {"array": {"type": "array", "items": {"type": "string"}}}})
            )
            .is_empty()
        );
        assert!(
            check(
                json!("not an object"),
                json!({"properties": {"array": set()}})
            )
            .is_empty()
        );
    }

    #[test]
    fn a_set_reports_each_item_seen_twice_once() {
        assert_eq!(
            check(
                json!({"array": ["a", "a", "b", "c", "d", "c"]}),
                json!({"properties": {"array": set()}})
            ),
            [
                "root.array[1]: Duplicate value: \"a\"",
                "root.array[5]: Duplicate value: \"c\""
            ]
        );
        assert_eq!(
            check(
                json!({"array": ["a", "a", "a"]}),
                json!({"properties": {"array": set()}})
            ),
            ["root.array[1]: Duplicate value: \"a\""]
        );
    }

    #[test]
    fn sets_are_found_under_maps_items_and_sets() {
        let schema = json!({"properties": {
            "map": {"additionalProperties": set()},
            "items": {"items": set()},
            "nested": {"x-kubernetes-list-type": "set", "items": set()},
        }});
        assert_eq!(
            check(
                json!({"map": {"k": [1, 1]}, "items": [[true, true]], "nested": [["a", "a"], ["a", "a"]]}),
                schema
            ),
            [
                "root.items[0][1]: Duplicate value: true",
                "root.map[k][1]: Duplicate value: 1",
                "root.nested[0][1]: Duplicate value: \"a\"",
                "root.nested[1]: Duplicate value: [\"a\",\"a\"]",
                "root.nested[1][1]: Duplicate value: \"a\"",
            ]
        );
    }

    /// "set list with compound map items" of listtype/validation_test.go.
    #[test]
    fn set_items_compare_as_go_compares_them() {
        let object = json!({
            "strings": ["a", "b", "a"],
            "integers": [1, 2, 1],
            "booleans": [false, true, true],
            "float64": [1.0, 2.0, 2.0],
            "nil": ["a", null, null],
            "empty maps": [{"a": "b"}, {}, {}],
            "map values": [{"a": "b"}, {"a": "c"}, {"a": "b"}],
            "nil values": [{"a": null}, {"b": "c", "a": null}],
            "array": [[], ["a"], ["b"], ["a"]],
            "nil array": [[], [null], [null, null], [null], ["a"]],
            "multiple duplicates": [{"a": "b"}, {"a": "c"}, {"a": "b"}, {"a": "c"}, {"a": "c"}],
            "int and float": [1, 1.0],
            "floats as json": [[1.0], [1]],
        });
        let names = [
            "strings",
            "integers",
            "booleans",
            "float64",
            "nil",
            "empty maps",
            "map values",
            "nil values",
            "array",
            "nil array",
            "multiple duplicates",
            "int and float",
            "floats as json",
        ];
        let properties: serde_json::Map<String, Value> =
            names.iter().map(|n| (n.to_string(), set())).collect();
        let errors = check(object, json!({"properties": properties}));
        let paths: Vec<&str> = errors
            .iter()
            .map(|e| e.split_once(':').unwrap().0)
            .collect();
        assert_eq!(
            paths,
            [
                "root.array[3]",
                "root.booleans[2]",
                "root.empty maps[2]",
                "root.float64[2]",
                "root.floats as json[1]",
                "root.integers[2]",
                "root.map values[2]",
                "root.multiple duplicates[2]",
                "root.multiple duplicates[3]",
                "root.nil array[3]",
                "root.nil[2]",
                "root.strings[2]",
            ]
        );
        assert!(errors.contains(&"root.nil[2]: Duplicate value: null".to_string()));
        assert!(errors.contains(&"root.empty maps[2]: Duplicate value: {}".to_string()));
    }

    /// "map list with compound map items" of listtype/validation_test.go.
    #[test]
    fn map_list_keys_compare_as_go_compares_them() {
        let object = json!({
            "strings": ["a"],
            "nil": [null],
            "one key": [{"a": "0", "c": "2"}, {"a": "1", "c": "1"}, {"a": "1", "c": "2"}, {}],
            "two keys": [{"a": "1", "b": "1", "c": "1"}, {"a": "1", "b": "2", "c": "2"}, {"a": "1", "b": "2", "c": "3"}, {}],
            "undefined key": [{"a": "1", "b": "1", "c": "1"}, {"a": "1", "c": "2"}, {"a": "1", "c": "3"}, {}],
            "compound key": [{"a": [], "c": "1"}, {"a": null, "c": "1"}, {"a": ["a"], "c": "1"},
                             {"a": ["a", 42], "c": "2"}, {"a": ["a", 42], "c": ["3"]}],
            "nil key": [{"a": [], "c": "1"}, {"a": null, "c": "1"}, {"c": "1"}, {"a": null}],
            "nil item": [null, {"a": "0", "c": "1"}, {"a": null}, {"c": "1"}],
            "nil item multiple keys": [null, {"b": "0", "c": "1"}, {"a": null}, {"c": "1"}],
        });
        let schema = json!({"properties": {
            "strings": map_list(&["a"]),
            "nil": map_list(&["a"]),
            "one key": map_list(&["a"]),
            "two keys": map_list(&["a", "b"]),
            "undefined key": map_list(&["a", "b"]),
            "compound key": map_list(&["a"]),
            "nil key": map_list(&["a"]),
            "nil item": map_list(&["a"]),
            "nil item multiple keys": map_list(&["a", "b"]),
        }});
        assert_eq!(
            check(object, schema),
            [
                "root.compound key[4]: Duplicate value: {\"a\":[\"a\",42]}",
                "root.nil item multiple keys[3]: Duplicate value: {}",
                "root.nil item[3]: Duplicate value: {}",
                "root.nil key[3]: Duplicate value: {\"a\":null}",
                "root.one key[2]: Duplicate value: {\"a\":\"1\"}",
                "root.strings[0]: Invalid value: \"a\": must be an object for an array of list-type map",
                "root.two keys[2]: Duplicate value: {\"a\":\"1\",\"b\":\"2\"}",
                "root.undefined key[2]: Duplicate value: {\"a\":\"1\"}",
            ]
        );
    }
}
