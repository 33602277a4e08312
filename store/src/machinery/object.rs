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
