//! Where the SDK's calls go on native targets: the [`Backend`] of the
//! current thread ([`with_backend`]). The raw call layer calls it; the test
//! harness ([`testing`](crate::testing)) provides one. It calls nothing of
//! the SDK's.

use std::cell::RefCell;
use std::rc::Rc;

use crate::{ApiError, EventType, Gvk, Level, ObjectRef, PatchType, Propagation};

thread_local! {
    static CURRENT: RefCell<Option<Rc<dyn Backend>>> = const { RefCell::new(None) };
}

/// Makes `backend` the current backend of this thread until dropped.
pub(crate) struct Current {
    previous: Option<Rc<dyn Backend>>,
}

impl Current {
    pub(crate) fn enter(backend: Rc<dyn Backend>) -> Current {
        let previous = CURRENT.with(|c| c.replace(Some(backend)));
        Current { previous }
    }
}

impl Drop for Current {
    fn drop(&mut self) {
        let previous = self.previous.take();
        CURRENT.with(|c| *c.borrow_mut() = previous);
    }
}

/// What serves the SDK's calls on native targets: one method per host
/// import (the functions of [`raw`](crate::raw), which every helper of
/// [`api`](crate::api) goes through). A [`FakeCluster`](crate::testing::FakeCluster) is one; implement it
/// to run a reconciler natively against something else (a real cluster, a
/// host's cache), with [`with_backend`].
///
/// Objects travel as JSON text, as they do between a guest and the host.
/// Permission checks and the field manager are the backend's business.
pub trait Backend {
    /// Reads one object; a missing object is a 404 `NotFound` error.
    fn get(&self, target: &ObjectRef) -> Result<String, ApiError>;
    /// Lists objects of a kind in one namespace (all with `None`),
    /// optionally filtered by a label selector.
    fn list(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        label_selector: Option<&str>,
    ) -> Result<Vec<String>, ApiError>;
    /// Lists the objects whose key in the index `index` (declared in the
    /// reconciler's manifest) is `value`. The default refuses: a backend
    /// that knows the manifest's indexes answers.
    fn list_by_index(
        &self,
        index: &str,
        value: &str,
        namespace: Option<&str>,
    ) -> Result<Vec<String>, ApiError> {
        let _ = (value, namespace);
        Err(ApiError::new(
            400,
            "BadRequest",
            format!("this backend serves no index ({index:?})"),
        ))
    }
    /// Creates an object; returns it as stored.
    fn create(&self, kind: &Gvk, namespace: Option<&str>, object: &str)
    -> Result<String, ApiError>;
    /// Replaces an object, or its status subresource when `status` is set.
    fn replace(&self, target: &ObjectRef, object: &str, status: bool) -> Result<String, ApiError>;
    /// Patches an object, or its status subresource when `status` is set.
    fn patch(
        &self,
        target: &ObjectRef,
        patch_type: &PatchType,
        body: &str,
        status: bool,
    ) -> Result<String, ApiError>;
    /// Deletes an object.
    fn delete(&self, target: &ObjectRef, propagation: Option<Propagation>) -> Result<(), ApiError>;
    /// Records an Event about an object.
    fn record_event(
        &self,
        regarding: &ObjectRef,
        event_type: EventType,
        reason: &str,
        message: &str,
    ) -> Result<(), ApiError>;
    /// Writes one log record (default: printed to stderr).
    fn log(&self, level: Level, message: &str, fields: &[(String, String)]) {
        eprintln!("[{level:?}] {message} {fields:?}");
    }
}

/// Runs `f` with `backend` serving the SDK's calls made on this thread (as
/// [`FakeCluster::run`](crate::testing::FakeCluster::run) does with a fake cluster), and returns what `f`
/// returns. Calls nest: the previous backend, if any, is restored after.
///
/// ```
/// use std::rc::Rc;
/// use rekon_sdk::testing::{Backend, FakeCluster, with_backend};
/// use rekon_sdk::raw;
/// # use rekon_sdk::prelude::*;
///
/// /// Serves every read from a fake cluster and refuses every write.
/// struct ReadOnly(FakeCluster);
///
/// impl Backend for ReadOnly {
///     fn get(&self, target: &ObjectRef) -> Result<String, ApiError> {
///         self.0.object(&target.kind, target.namespace.as_deref(), &target.name)
///             .map(|o| o.to_string())
///             .ok_or_else(|| ApiError::new(404, "NotFound", "not found"))
///     }
///     fn list(&self, kind: &Gvk, ns: Option<&str>, _: Option<&str>) -> Result<Vec<String>, ApiError> {
///         Ok(self.0.list(kind, ns).iter().map(|o| o.to_string()).collect())
///     }
///     fn create(&self, _: &Gvk, _: Option<&str>, _: &str) -> Result<String, ApiError> {
///         Err(ApiError::new(403, "Forbidden", "read-only"))
///     }
///     fn replace(&self, _: &ObjectRef, _: &str, _: bool) -> Result<String, ApiError> {
///         Err(ApiError::new(403, "Forbidden", "read-only"))
///     }
///     fn patch(&self, _: &ObjectRef, _: &PatchType, _: &str, _: bool) -> Result<String, ApiError> {
///         Err(ApiError::new(403, "Forbidden", "read-only"))
///     }
///     fn delete(&self, _: &ObjectRef, _: Option<rekon_sdk::Propagation>) -> Result<(), ApiError> {
///         Err(ApiError::new(403, "Forbidden", "read-only"))
///     }
///     fn record_event(&self, _: &ObjectRef, _: EventType, _: &str, _: &str) -> Result<(), ApiError> {
///         Ok(())
///     }
/// }
///
/// let fake = FakeCluster::from_yaml("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\n")
///     .expect("valid fixtures");
/// let target = ObjectRef::new(Gvk::new("", "v1", "ConfigMap"), Some("default"), "c");
/// let (read, write) = with_backend(Rc::new(ReadOnly(fake)), || {
///     (raw::get(&target), api::patch_dyn(&target, &PatchType::Merge, &json!({"data": {"a": "b"}})))
/// });
/// assert!(read.is_ok());
/// assert!(write.expect_err("refused").is_forbidden());
/// ```
pub fn with_backend<T>(backend: Rc<dyn Backend>, f: impl FnOnce() -> T) -> T {
    let _current = Current::enter(backend);
    f()
}

/// Calls `f` with the current backend of this thread.
pub(crate) fn call_backend<T>(
    f: impl FnOnce(&dyn Backend) -> Result<T, ApiError>,
) -> Result<T, ApiError> {
    let current = CURRENT.with(|c| c.borrow().clone());
    match current {
        Some(backend) => f(&*backend),
        None => Err(ApiError::new(
            500,
            "InternalError",
            "no cluster: outside wasm32, SDK calls run inside FakeCluster::reconcile, \
             FakeCluster::run or testing::with_backend",
        )),
    }
}

/// Sends a log line to the current backend (printed when there is none).
pub(crate) fn log(level: Level, message: &str, fields: &[(String, String)]) {
    let current = CURRENT.with(|c| c.borrow().clone());
    match current {
        Some(backend) => backend.log(level, message, fields),
        None => eprintln!("[{level:?}] {message} {fields:?}"),
    }
}
