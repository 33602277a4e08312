//! `pkg/apis/core/validation`'s check of finalizer names, which every
//! built-in kind's metadata gets on top of apimachinery's: a name without a
//! `/` must be one of Kubernetes' own; and a finalizer an admission
//! plugin adds to a new object (`StorageObjectInUseProtection`'s).

use serde_json::{Value, json};

use crate::machinery::field::{FieldError, Path};

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

/// Adds `finalizer` to `obj`'s finalizers unless it is there already, as
/// an admission plugin appends it to a new object's
/// (`StorageObjectInUseProtection`'s `admitPV`, `admitPVC`).
pub(crate) fn add_finalizer(obj: &mut Value, finalizer: &str) {
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let finalizers = meta.entry("finalizers").or_insert_with(|| json!([]));
    if !finalizers.is_array() {
        *finalizers = json!([]);
    }
    if let Some(list) = finalizers.as_array_mut()
        && !list.iter().any(|f| f == finalizer)
    {
        list.push(json!(finalizer));
    }
}
