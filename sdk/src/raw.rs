//! The raw call layer: one function per import of the `cluster` and `log`
//! interfaces, JSON strings in and out.
//!
//! On `wasm32` these call the host. On other targets they call the
//! [`Backend`](crate::backend::Backend) of this thread: the
//! [`FakeCluster`](crate::testing::FakeCluster) running the current
//! reconcile, or one given to [`with_backend`](crate::testing::with_backend),
//! so the same reconciler code runs in native tests.
//! Most reconcilers use the typed helpers of [`api`](crate::api) instead.

use crate::{ApiError, EventType, Gvk, Level, ObjectRef, PatchType, Propagation};

#[cfg(target_arch = "wasm32")]
use crate::bindings::rekon::reconciler::{cluster as host, log as host_log};
#[cfg(target_arch = "wasm32")]
use crate::convert as c;

#[cfg(not(target_arch = "wasm32"))]
use crate::backend::call_backend;

/// Reads one object. A missing object is a 404 `NotFound` error.
pub fn get(target: &ObjectRef) -> Result<String, ApiError> {
    #[cfg(target_arch = "wasm32")]
    {
        host::get(&c::object_ref(target)).map_err(c::api_error)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        call_backend(|b| b.get(target))
    }
}

/// Lists objects of a kind in one namespace (or all with `None`),
/// optionally filtered by a label selector.
pub fn list(
    kind: &Gvk,
    namespace: Option<&str>,
    label_selector: Option<&str>,
) -> Result<Vec<String>, ApiError> {
    #[cfg(target_arch = "wasm32")]
    {
        host::list(&c::gvk(kind), namespace, label_selector).map_err(c::api_error)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        call_backend(|b| b.list(kind, namespace, label_selector))
    }
}

/// Lists from the cache the objects whose key in the manifest's index
/// `index` is `value`, in `namespace` (all with `None`). An undeclared index
/// is a 400 `BadRequest`.
pub fn list_by_index(
    index: &str,
    value: &str,
    namespace: Option<&str>,
) -> Result<Vec<String>, ApiError> {
    #[cfg(target_arch = "wasm32")]
    {
        host::list_by_index(index, value, namespace).map_err(c::api_error)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        call_backend(|b| b.list_by_index(index, value, namespace))
    }
}

/// Creates an object in `namespace`; returns the created object.
pub fn create(kind: &Gvk, namespace: Option<&str>, object: &str) -> Result<String, ApiError> {
    #[cfg(target_arch = "wasm32")]
    {
        host::create(&c::gvk(kind), namespace, object).map_err(c::api_error)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        call_backend(|b| b.create(kind, namespace, object))
    }
}

/// Replaces an object (PUT); fails with 409 if `metadata.resourceVersion`
/// is set and stale.
pub fn replace(target: &ObjectRef, object: &str) -> Result<String, ApiError> {
    #[cfg(target_arch = "wasm32")]
    {
        host::replace(&c::object_ref(target), object).map_err(c::api_error)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        call_backend(|b| b.replace(target, object, false))
    }
}

/// Patches an object; returns the object after the patch.
pub fn patch(target: &ObjectRef, patch_type: &PatchType, body: &str) -> Result<String, ApiError> {
    #[cfg(target_arch = "wasm32")]
    {
        host::patch(&c::object_ref(target), &c::patch_type(patch_type), body).map_err(c::api_error)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        call_backend(|b| b.patch(target, patch_type, body, false))
    }
}

/// Replaces the status subresource of an object.
pub fn replace_status(target: &ObjectRef, object: &str) -> Result<String, ApiError> {
    #[cfg(target_arch = "wasm32")]
    {
        host::replace_status(&c::object_ref(target), object).map_err(c::api_error)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        call_backend(|b| b.replace(target, object, true))
    }
}

/// Patches the status subresource of an object.
pub fn patch_status(
    target: &ObjectRef,
    patch_type: &PatchType,
    body: &str,
) -> Result<String, ApiError> {
    #[cfg(target_arch = "wasm32")]
    {
        host::patch_status(&c::object_ref(target), &c::patch_type(patch_type), body)
            .map_err(c::api_error)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        call_backend(|b| b.patch(target, patch_type, body, true))
    }
}

/// Deletes an object. Deleting a missing object is a 404 `NotFound` error.
pub fn delete(target: &ObjectRef, propagation: Option<Propagation>) -> Result<(), ApiError> {
    #[cfg(target_arch = "wasm32")]
    {
        host::delete(&c::object_ref(target), propagation.map(c::propagation)).map_err(c::api_error)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        call_backend(|b| b.delete(target, propagation))
    }
}

/// Records a Kubernetes Event about an object; `reason` is a short CamelCase word.
pub fn record_event(
    regarding: &ObjectRef,
    event_type: EventType,
    reason: &str,
    message: &str,
) -> Result<(), ApiError> {
    #[cfg(target_arch = "wasm32")]
    {
        host::record_event(
            &c::object_ref(regarding),
            c::event_type(event_type),
            reason,
            message,
        )
        .map_err(c::api_error)
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        call_backend(|b| b.record_event(regarding, event_type, reason, message))
    }
}

/// Writes one structured log record into the host's log.
pub fn log(level: Level, message: &str, fields: &[(String, String)]) {
    #[cfg(target_arch = "wasm32")]
    {
        host_log::log(c::level(level), message, fields);
    }
    #[cfg(not(target_arch = "wasm32"))]
    {
        crate::backend::log(level, message, fields);
    }
}
