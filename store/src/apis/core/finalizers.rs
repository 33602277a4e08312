//! `pkg/apis/core/validation`'s check of finalizer names, which every
//! built-in kind's metadata gets on top of apimachinery's: a name without a
//! `/` must be one of Kubernetes' own.

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
