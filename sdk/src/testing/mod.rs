//! The native test harness: run a reconciler's code with `cargo test`,
//! against an in-memory cluster, and assert on what it did.
//!
//! The cluster is the project's one in-memory object store
//! ([`rekon_store::Store`]), with the same Kubernetes semantics the
//! host's tests and `rekon reconcile` rely on: resourceVersions and
//! conflicts, generation, the status subresource, finalizers and
//! `deletionTimestamp`, server-side apply, owner-reference garbage
//! collection. The manifest's permissions are enforced as the host does.
//!
//! ```
//! use rekon_sdk::testing::{FakeCluster, Verb};
//! # use rekon_sdk::prelude::*;
//! # struct MyReconciler;
//! # impl Reconciler for MyReconciler {
//! #     fn manifest() -> Manifest { Manifest::new("my", Gvk::new("", "v1", "ConfigMap")) }
//! #     fn reconcile(req: Request) -> Result<Action, Error> {
//! #         api::patch_dyn(&req.target, &PatchType::Merge, &json!({"data": {"seen": "yes"}}))?;
//! #         Ok(Action::Done)
//! #     }
//! # }
//! let cluster = FakeCluster::from_yaml(r#"
//! apiVersion: v1
//! kind: ConfigMap
//! metadata: {name: settings, namespace: default}
//! data: {mode: fast}
//! "#).expect("valid fixtures");
//!
//! let action = cluster.reconcile::<MyReconciler>(Some("default"), "settings").expect("reconciles");
//! assert_eq!(action, Action::Done);
//! let writes = cluster.writes();
//! assert_eq!(writes.len(), 1);
//! assert_eq!(writes[0].verb, Verb::MergePatch);
//! assert_eq!(writes[0].name, "settings");
//! ```

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use rekon_store::calls;
use rekon_store::{ListOptions, ResourceInfo, Store, StoreConfig};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::Reconciler;
use crate::backend::Current;
pub use crate::backend::{Backend, with_backend};
use crate::manifest::Manifest;
use crate::types::{Action, ApiError, Error, EventType, Gvk, Level, ObjectRef, Reason, Request};
use crate::webhook::{AdmissionRequest, Verdict, Webhook};

mod host;

use host::{Inner, api_error};

/// What kind of write a reconciler made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verb {
    /// `create`.
    Create,
    /// `replace` (PUT), or `replace-status`.
    Replace,
    /// A JSON merge patch (`patch` or `patch-status`).
    MergePatch,
    /// A JSON patch (RFC 6902).
    JsonPatch,
    /// A server-side apply.
    Apply {
        /// The field manager used.
        field_manager: String,
        /// Whether conflicts were forced.
        force: bool,
    },
    /// `delete`.
    Delete,
}

/// One write a reconciler made (successful or not), in call order. Calls
/// refused by the permission check never reach the store and are not
/// recorded; the reconciler sees their 403 error.
#[derive(Clone, Debug)]
pub struct Write {
    /// What was done.
    pub verb: Verb,
    /// The kind written.
    pub kind: Gvk,
    /// The namespace written, `None` for cluster-scoped kinds.
    pub namespace: Option<String>,
    /// The object's name.
    pub name: String,
    /// Whether the write went to the status subresource.
    pub status: bool,
    /// What was sent: the object or the patch (`Null` for a delete).
    pub body: Value,
    /// What came back: the object after the write (`Null` for a delete), or the error.
    pub result: Result<Value, ApiError>,
}

impl Write {
    /// Whether this is a write of `kind` (e.g. `"Deployment"`) named `name`.
    pub fn is(&self, kind: &str, name: &str) -> bool {
        self.kind.kind == kind && self.name == name
    }

    /// Whether this is a server-side apply.
    pub fn is_apply(&self) -> bool {
        matches!(self.verb, Verb::Apply { .. })
    }
}

/// An Event a reconciler recorded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RecordedEvent {
    /// The object the Event is about.
    pub regarding: ObjectRef,
    /// Normal or Warning.
    pub event_type: EventType,
    /// Short CamelCase reason.
    pub reason: String,
    /// Human-readable message.
    pub message: String,
}

/// A log record a reconciler wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogRecord {
    /// Severity.
    pub level: Level,
    /// Message.
    pub message: String,
    /// Key/value fields.
    pub fields: Vec<(String, String)>,
}

/// An in-memory cluster that runs reconcilers natively.
///
/// Seed it from YAML, run [`reconcile`](Self::reconcile), then assert on
/// [`writes`](Self::writes), [`events`](Self::events) and the objects
/// ([`object`](Self::object), [`get`](Self::get), [`list`](Self::list)).
pub struct FakeCluster {
    inner: Rc<Inner>,
}

impl std::fmt::Debug for FakeCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeCluster")
            .field("writes", &self.inner.writes.borrow().len())
            .finish_non_exhaustive()
    }
}

impl Default for FakeCluster {
    fn default() -> Self {
        FakeCluster::new()
    }
}

impl FakeCluster {
    /// An empty cluster (with the namespaces `default`, `kube-system`,
    /// `kube-public` and `kube-node-lease`).
    pub fn new() -> Self {
        FakeCluster {
            inner: Rc::new(Inner {
                store: Store::new(StoreConfig::default()),
                recording: Cell::new(true),
                read_only: Cell::new(false),
                manifest: RefCell::new(None),
                writes: RefCell::new(Vec::new()),
                events: RefCell::new(Vec::new()),
                logs: RefCell::new(Vec::new()),
            }),
        }
    }

    /// A cluster seeded with the objects of a multi-document YAML string
    /// (see [`seed_yaml`](Self::seed_yaml)).
    pub fn from_yaml(yaml: &str) -> Result<Self, ApiError> {
        let cluster = FakeCluster::new();
        cluster.seed_yaml(yaml)?;
        Ok(cluster)
    }

    /// Adds (or replaces) the objects of a multi-document YAML string.
    ///
    /// Namespaces the objects live in are created if missing. A
    /// CustomResourceDefinition makes its kind served; a custom kind with no
    /// CRD is served anyway (plural: lower-case kind + `s`, namespaced if the
    /// object has a namespace, with a status subresource). A `status` in
    /// the fixture is stored too. Seeding is not recorded as writes.
    pub fn seed_yaml(&self, yaml: &str) -> Result<(), ApiError> {
        use serde::Deserialize;
        for doc in serde_yaml_ng::Deserializer::from_str(yaml) {
            let value = Value::deserialize(doc)
                .map_err(|e| ApiError::new(400, "BadRequest", format!("fixture YAML: {e}")))?;
            if value.is_null() {
                continue;
            }
            self.seed(value)?;
        }
        Ok(())
    }

    /// Adds (or replaces) one object, as [`seed_yaml`](Self::seed_yaml) does.
    pub fn seed(&self, object: Value) -> Result<Value, ApiError> {
        calls::seed(&self.inner.store, object).map_err(api_error)
    }

    /// Runs one reconcile of `R` for its primary object `namespace/name`,
    /// as the host would: the request carries the object as stored (or
    /// none), with reason `Finalizing` if it is being deleted, `Deleted` if
    /// it is gone, `Manual` otherwise.
    pub fn reconcile<R: Reconciler>(
        &self,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Action, Error> {
        let manifest = R::manifest();
        let target = ObjectRef::new(manifest.primary.clone(), namespace, name);
        let object = self.object(&target.kind, namespace, name);
        let reason = match &object {
            None => Reason::Deleted,
            Some(o) if crate::api::is_deleting(o) => Reason::Finalizing,
            Some(_) => Reason::Manual,
        };
        let request = Request {
            target,
            object: object.map(|o| o.to_string()),
            reason,
            attempt: 0,
        };
        self.reconcile_request::<R>(request)
    }

    /// Runs one reconcile of `R` with a request you built.
    pub fn reconcile_request<R: Reconciler>(&self, request: Request) -> Result<Action, Error> {
        let previous = self.inner.manifest.replace(Some(R::manifest()));
        let result = {
            let _current = Current::enter(self.inner.clone());
            R::reconcile(request)
        };
        self.inner.manifest.replace(previous);
        result
    }

    /// Runs the validating webhook of `W` on `request`, as the host does
    /// during a review: reads are served by this cluster (within the
    /// permissions of `W::webhooks()` when it names the module), writes
    /// and Events are refused with 403.
    pub fn validate<W: Webhook>(&self, request: &AdmissionRequest) -> Verdict {
        self.review::<W, _>(|| crate::webhook::validate::<W>(request))
    }

    /// Runs the defaulting (mutating) webhook of `W` on `request`, as
    /// [`validate`](Self::validate) does: the verdict, and the changed
    /// object if it changed.
    pub fn mutate<W: Webhook>(&self, request: &AdmissionRequest) -> (Verdict, Option<Value>) {
        self.review::<W, _>(|| crate::webhook::mutate::<W>(request))
    }

    /// Converts `objects` to `api_version` with `W`, as the host does for a
    /// ConversionReview (reads only).
    pub fn convert<W: Webhook>(
        &self,
        objects: Vec<Value>,
        api_version: &str,
    ) -> Result<Vec<Value>, String> {
        self.review::<W, _>(|| crate::webhook::convert::<W>(objects, api_version))
    }

    fn review<W: Webhook, T>(&self, f: impl FnOnce() -> T) -> T {
        let declared = W::webhooks();
        let manifest = (!declared.name.is_empty()).then(|| {
            let mut m = Manifest::new(declared.name, Gvk::new("", "v1", "None"));
            m.permissions = declared.permissions;
            m
        });
        let previous = self.inner.manifest.replace(manifest);
        self.inner.read_only.set(true);
        let result = {
            let _current = Current::enter(self.inner.clone());
            f()
        };
        self.inner.read_only.set(false);
        self.inner.manifest.replace(previous);
        result
    }

    /// Runs `f` with this cluster as the target of the SDK's calls, with no
    /// permission checks (to test helpers outside a reconciler).
    pub fn run<T>(&self, f: impl FnOnce() -> T) -> T {
        let previous = self.inner.manifest.replace(None);
        let result = {
            let _current = Current::enter(self.inner.clone());
            f()
        };
        self.inner.manifest.replace(previous);
        result
    }

    /// Turns the recording of writes, Events and logs on (the default) or
    /// off — off for benchmarks that reconcile many times.
    pub fn set_recording(&self, on: bool) {
        self.inner.recording.set(on);
    }

    /// Every write reconcilers made so far (including failed ones), in order.
    pub fn writes(&self) -> Vec<Write> {
        self.inner.writes.borrow().clone()
    }

    /// The successful writes, in order.
    pub fn successful_writes(&self) -> Vec<Write> {
        self.inner
            .writes
            .borrow()
            .iter()
            .filter(|w| w.result.is_ok())
            .cloned()
            .collect()
    }

    /// Returns the writes so far and forgets them (to look at the next
    /// reconcile alone).
    pub fn take_writes(&self) -> Vec<Write> {
        self.inner.writes.take()
    }

    /// The Events reconcilers recorded.
    pub fn events(&self) -> Vec<RecordedEvent> {
        self.inner.events.borrow().clone()
    }

    /// The log records reconcilers wrote.
    pub fn logs(&self) -> Vec<LogRecord> {
        self.inner.logs.borrow().clone()
    }

    /// One object as JSON, or `None` if it does not exist.
    pub fn object(&self, kind: &Gvk, namespace: Option<&str>, name: &str) -> Option<Value> {
        let res = self.resource(kind).ok()?;
        self.inner.store.get(&res, namespace, name).ok()
    }

    /// One object of a k8s-openapi type, or `None` if it does not exist.
    ///
    /// # Panics
    /// If the stored object does not decode into `K`.
    pub fn get<K: k8s_openapi::Resource + DeserializeOwned>(
        &self,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<K> {
        self.object(&Gvk::of::<K>(), namespace, name).map(|o| {
            serde_json::from_value(o).expect("the stored object decodes into its k8s-openapi type")
        })
    }

    /// The objects of a kind in `namespace` (`None`: all), by namespace then name.
    pub fn list(&self, kind: &Gvk, namespace: Option<&str>) -> Vec<Value> {
        let Ok(res) = self.resource(kind) else {
            return Vec::new();
        };
        let opts = ListOptions {
            namespace: namespace.map(str::to_owned),
            ..ListOptions::default()
        };
        self.inner
            .store
            .list(&res, &opts)
            .map(|l| l.items)
            .unwrap_or_default()
    }

    /// Deletes an object as a user would (not recorded as a write): with
    /// finalizers it gets a `deletionTimestamp` and stays until they are removed.
    pub fn delete(&self, kind: &Gvk, namespace: Option<&str>, name: &str) -> Result<(), ApiError> {
        let res = self.resource(kind)?;
        self.inner
            .store
            .delete(&res, namespace, name, None)
            .map(|_| ())
            .map_err(api_error)
    }

    /// The underlying object store, for anything else.
    pub fn store(&self) -> &Store {
        &self.inner.store
    }

    fn resource(&self, kind: &Gvk) -> Result<ResourceInfo, ApiError> {
        self.inner.resource(kind)
    }
}
