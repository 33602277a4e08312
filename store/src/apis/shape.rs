//! What storing does to a built-in object's shape, as the real server's
//! typed objects and protobuf storage give it: a `spec` struct always
//! written, empty lists and maps dropped.

use serde_json::Value;

/// `obj`'s `spec`, made `{}` when absent or null: a struct field without
/// `omitempty`, which the real server always writes.
pub(crate) fn spec_mut(obj: &mut Value) -> Option<&mut serde_json::Map<String, Value>> {
    let spec = obj
        .as_object_mut()?
        .entry("spec")
        .or_insert_with(|| Value::Object(Default::default()));
    if spec.is_null() {
        *spec = Value::Object(Default::default());
    }
    spec.as_object_mut()
}

/// What storing a built-in object does to its empty lists and maps (the
/// real server stores protobuf, where `[]` and `{}` are no value): each of
/// `keys` of `map` holding one is dropped, as the object reads back
/// (`omitempty` fields only; structs are kept).
pub(crate) fn drop_empty(map: &mut serde_json::Map<String, Value>, keys: &[&str]) {
    for key in keys {
        let empty = match map.get(*key) {
            Some(Value::Array(items)) => items.is_empty(),
            Some(Value::Object(fields)) => fields.is_empty(),
            _ => false,
        };
        if empty {
            map.remove(*key);
        }
    }
}

/// [`drop_empty`] in a label selector: its `matchLabels`,
/// `matchExpressions` and requirements' `values`.
pub(crate) fn drop_empty_in_selector(selector: Option<&mut Value>) {
    let Some(selector) = selector.and_then(Value::as_object_mut) else {
        return;
    };
    drop_empty(selector, &["matchLabels", "matchExpressions"]);
    let requirements = selector
        .get_mut("matchExpressions")
        .and_then(Value::as_array_mut);
    for requirement in requirements.into_iter().flatten() {
        if let Some(requirement) = requirement.as_object_mut() {
            drop_empty(requirement, &["values"]);
        }
    }
}
