//! Checks several built-in kinds share (`apimachinery`'s and `pkg/apis/core`'s
//! helpers): data keys, finalizer names, immutability, label selectors.

use serde_json::Value;

use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::names::is_path_segment_name;

/// `validateKubeFinalizerName`: a finalizer name without a `/` must be
/// one of Kubernetes' own (`kubernetes`, `orphan`, `foregroundDeletion`).
pub(crate) fn kube_finalizer_name(path: &Path, name: &str) -> Option<FieldError> {
    (!name.contains('/') && !["kubernetes", "orphan", "foregroundDeletion"].contains(&name)).then(
        || {
            FieldError::invalid(
                path,
                name,
                "name is neither a standard finalizer name nor is it fully qualified",
            )
        },
    )
}

/// A reference's `kind` or `name`: required, and a path segment
/// (`IsPathSegmentName`), as object references of several kinds check them.
pub(crate) fn required_path_segment(value: &str, path: &Path) -> ErrorList {
    if value.is_empty() {
        return vec![FieldError::required(path, "")];
    }
    is_path_segment_name(value)
        .into_iter()
        .map(|message| FieldError::invalid(path, value, message))
        .collect()
}

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
