//! An object's fields as JSON, as apimachinery's `meta.Accessor` and
//! `unstructured` helpers read and write them: its metadata, finalizers,
//! owners, deletion; the field order of Go's `ObjectMeta`; the time a
//! write stamps.

use serde_json::{Map, Value, json};

pub(crate) fn now() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

pub(crate) fn meta(o: &Value, field: &str) -> Option<String> {
    o.get("metadata")
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
        .map(str::to_string)
}

pub(crate) fn meta_mut(o: &mut Value) -> &mut Map<String, Value> {
    if !o.is_object() {
        *o = json!({});
    }
    let obj = o.as_object_mut().expect("made an object above");
    let md = obj.entry("metadata").or_insert_with(|| json!({}));
    if !md.is_object() {
        *md = json!({});
    }
    md.as_object_mut().expect("made an object above")
}

/// A string field of a JSON object (`""` when absent or not a string).
pub(crate) fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The string at a JSON pointer (`""` when absent or not a string).
pub(crate) fn text_at<'a>(value: &'a Value, pointer: &str) -> &'a str {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// The items of a JSON array member of an object (none when it is absent
/// or not an array).
pub(crate) fn items<'a>(value: &'a Value, key: &str) -> &'a [Value] {
    value
        .get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The items of the JSON array at a pointer (none when it is absent or not
/// an array).
pub(crate) fn items_at<'a>(value: &'a Value, pointer: &str) -> &'a [Value] {
    value
        .pointer(pointer)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The strings of a JSON array (none when it is absent or not an array).
pub(crate) fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// An object's finalizers.
pub(crate) fn finalizers(o: &Value) -> Vec<String> {
    strings(o.pointer("/metadata/finalizers"))
}

pub(crate) fn is_deleting(o: &Value) -> bool {
    o.pointer("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null())
}

pub(crate) fn owner_uids(o: &Value) -> Vec<String> {
    o.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|r| r.get("uid").and_then(Value::as_str))
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

pub(crate) const META_ORDER: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

/// `NestedStringMap`: none unless every value is a string.
pub(crate) fn string_map<'a>(meta: &'a Value, key: &str) -> Vec<(&'a str, &'a str)> {
    let Some(map) = meta.get(key).and_then(Value::as_object) else {
        return Vec::new();
    };
    let pairs: Option<Vec<(&str, &str)>> = map
        .iter()
        .map(|(k, v)| v.as_str().map(|v| (k.as_str(), v)))
        .collect();
    pairs.unwrap_or_default()
}

/// `NestedStringSlice`: none unless every item is a string.
pub(crate) fn string_list<'a>(meta: &'a Value, key: &str) -> Vec<&'a str> {
    let Some(items) = meta.get(key).and_then(Value::as_array) else {
        return Vec::new();
    };
    let strings: Option<Vec<&str>> = items.iter().map(Value::as_str).collect();
    strings.unwrap_or_default()
}
