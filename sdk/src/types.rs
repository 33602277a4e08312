//! The types of the contract, owned by the SDK so guest code never touches
//! generated bindings.

use std::fmt;

/// A Kubernetes kind: API group (`""` for the core group), version and kind.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Gvk {
    /// API group; the empty string for the core group.
    pub group: String,
    /// API version within the group, e.g. `v1`.
    pub version: String,
    /// Kind in CamelCase, e.g. `Deployment`.
    pub kind: String,
}

impl Gvk {
    /// A kind from its group, version and kind.
    pub fn new(
        group: impl Into<String>,
        version: impl Into<String>,
        kind: impl Into<String>,
    ) -> Self {
        Gvk {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
        }
    }

    /// The kind of a k8s-openapi resource type, e.g. `Gvk::of::<Deployment>()`.
    pub fn of<K: k8s_openapi::Resource>() -> Self {
        Gvk::new(K::GROUP, K::VERSION, K::KIND)
    }

    /// The `apiVersion` string: `group/version`, or `version` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The kind of a JSON object, from its `apiVersion` and `kind`.
    pub fn from_object(object: &serde_json::Value) -> Option<Self> {
        let api_version = object.get("apiVersion")?.as_str()?;
        let kind = object.get("kind")?.as_str()?;
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", api_version),
        };
        Some(Gvk::new(group, version, kind))
    }
}

impl fmt::Display for Gvk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.api_version(), self.kind)
    }
}

/// Names one object, which may or may not exist.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ObjectRef {
    /// The kind of the object.
    pub kind: Gvk,
    /// Namespace; `None` for cluster-scoped kinds.
    pub namespace: Option<String>,
    /// `metadata.name`.
    pub name: String,
}

impl ObjectRef {
    /// A reference from its parts.
    pub fn new(kind: Gvk, namespace: Option<&str>, name: impl Into<String>) -> Self {
        ObjectRef {
            kind,
            namespace: namespace.map(str::to_owned),
            name: name.into(),
        }
    }

    /// A reference to an object of a k8s-openapi resource type.
    pub fn of<K: k8s_openapi::Resource>(namespace: Option<&str>, name: impl Into<String>) -> Self {
        ObjectRef::new(Gvk::of::<K>(), namespace, name)
    }

    /// The reference of a JSON object (`apiVersion`, `kind`, `metadata.namespace`, `metadata.name`).
    pub fn from_object(object: &serde_json::Value) -> Option<Self> {
        let kind = Gvk::from_object(object)?;
        let metadata = object.get("metadata")?;
        let name = metadata.get("name")?.as_str()?;
        let namespace = metadata.get("namespace").and_then(|n| n.as_str());
        Some(ObjectRef::new(kind, namespace, name))
    }
}

impl fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{} {}/{}", self.kind, ns, self.name),
            None => write!(f, "{} {}", self.kind, self.name),
        }
    }
}

/// A failed API call, as the API server (or the host) reported it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    /// HTTP status code: 404, 409, 403, 422...
    pub code: u16,
    /// The Kubernetes `Status.reason`: `NotFound`, `Conflict`, `Forbidden`...
    pub reason: String,
    /// Human-readable message.
    pub message: String,
}

impl ApiError {
    /// An error from its parts.
    pub fn new(code: u16, reason: impl Into<String>, message: impl Into<String>) -> Self {
        ApiError {
            code,
            reason: reason.into(),
            message: message.into(),
        }
    }

    /// The object does not exist (404).
    pub fn is_not_found(&self) -> bool {
        self.code == 404
    }

    /// The object changed since it was read, or a field is owned by another
    /// manager (409 `Conflict`).
    pub fn is_conflict(&self) -> bool {
        self.code == 409 && self.reason != "AlreadyExists"
    }

    /// The object already exists (409 `AlreadyExists`).
    pub fn is_already_exists(&self) -> bool {
        self.code == 409 && self.reason == "AlreadyExists"
    }

    /// The call is outside the reconciler's permissions (403).
    pub fn is_forbidden(&self) -> bool {
        self.code == 403
    }

    /// The object is invalid (422).
    pub fn is_invalid(&self) -> bool {
        self.code == 422
    }

    /// The namespace is being deleted, so nothing new may be created in it
    /// (403 with the API server's "is being terminated" message). A
    /// reconciler should treat it as "nothing to do": the namespace's
    /// objects are on their way out.
    pub fn is_namespace_terminating(&self) -> bool {
        self.code == 403 && self.message.contains("because it is being terminated")
    }
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}", self.code, self.reason, self.message)
    }
}

impl std::error::Error for ApiError {}

/// The kinds of patch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PatchType {
    /// JSON merge patch (RFC 7386).
    Merge,
    /// JSON patch (RFC 6902).
    Json,
    /// Server-side apply: the body is the full intent.
    Apply {
        /// Field manager; the host defaults it to `rekon-<module name>`.
        field_manager: Option<String>,
        /// Take ownership of fields other managers own.
        force: bool,
    },
}

/// How dependents are handled when an object is deleted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Propagation {
    /// Delete dependents in the background.
    Background,
    /// Delete dependents first, then the object.
    Foreground,
    /// Keep dependents, removing their ownerReferences.
    Orphan,
}

/// The type of an Event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    /// Something worth knowing happened.
    Normal,
    /// Something went wrong.
    Warning,
}

/// Log severity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Very detailed.
    Trace,
    /// Debugging detail.
    Debug,
    /// Normal operation.
    Info,
    /// Something unexpected, but handled.
    Warn,
    /// Something failed.
    Error,
}

/// Why a request was queued.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    /// The primary object was seen for the first time.
    Added,
    /// The primary object changed.
    Updated,
    /// The primary object is gone; the request carries no object.
    Deleted,
    /// The primary is being deleted and still carries the finalizer.
    Finalizing,
    /// An owned object changed.
    OwnedChanged,
    /// A watched object changed.
    WatchedChanged,
    /// The reconciler asked to be called again.
    Requeued,
    /// A previous reconcile failed and is being retried.
    Retry,
    /// Periodic resync.
    Resync,
    /// A new version of the module was loaded.
    ModuleReloaded,
    /// Run by hand (`rekon reconcile`, tests).
    Manual,
}

/// One reconcile request.
#[derive(Clone, Debug)]
pub struct Request {
    /// The primary object to reconcile.
    pub target: ObjectRef,
    /// The primary object as JSON from the cache, or `None` if it is gone.
    pub object: Option<String>,
    /// Why this request was queued.
    pub reason: Reason,
    /// How many times in a row this object's reconcile has failed before.
    pub attempt: u32,
}

impl Request {
    /// The object parsed into `T` (a k8s-openapi type, your own custom
    /// resource struct, or `serde_json::Value`); `None` if it is gone.
    pub fn object_as<T: serde::de::DeserializeOwned>(&self) -> Result<Option<T>, Error> {
        match &self.object {
            None => Ok(None),
            Some(json) => serde_json::from_str(json)
                .map(Some)
                .map_err(|e| Error::permanent(format!("cannot parse {}: {e}", self.target))),
        }
    }

    /// The object as a JSON value; `None` if it is gone.
    pub fn json(&self) -> Result<Option<serde_json::Value>, Error> {
        self.object_as()
    }

    /// The target's namespace, or `""` for a cluster-scoped target.
    pub fn namespace(&self) -> &str {
        self.target.namespace.as_deref().unwrap_or("")
    }

    /// The target's name.
    pub fn name(&self) -> &str {
        &self.target.name
    }
}

/// What to do after a successful reconcile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Nothing more until something changes.
    Done,
    /// Reconcile again after this many milliseconds.
    RequeueAfter(u64),
}

impl Action {
    /// Reconcile again after `duration`.
    pub fn requeue(duration: std::time::Duration) -> Self {
        Action::RequeueAfter(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX))
    }
}

/// A failed reconcile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// What went wrong, for logs and Events.
    pub message: String,
    /// Retry with exponential backoff (`true`), or wait for the next change.
    pub retry: bool,
}

impl Error {
    /// A failure worth retrying (with backoff).
    pub fn retry(message: impl Into<String>) -> Self {
        Error {
            message: message.into(),
            retry: true,
        }
    }

    /// A failure that retrying will not fix (e.g. an invalid spec): wait
    /// for the object to change.
    pub fn permanent(message: impl Into<String>) -> Self {
        Error {
            message: message.into(),
            retry: false,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

impl From<ApiError> for Error {
    /// API failures are retried, except those retrying cannot fix
    /// (403 Forbidden, 422 Invalid, 400 BadRequest).
    fn from(e: ApiError) -> Self {
        let retry = !matches!(e.code, 400 | 403 | 422);
        Error {
            message: e.to_string(),
            retry,
        }
    }
}

impl From<serde_json::Error> for Error {
    fn from(e: serde_json::Error) -> Self {
        Error::permanent(format!("JSON: {e}"))
    }
}

/// The usual resource name of a kind: lower case, plural (`App` -> `apps`,
/// `Policy` -> `policies`, `Ingress` -> `ingresses`); one rule with
/// `#[derive(CustomResource)]`'s, in [`crate::crd::plural`].
pub(crate) fn plural(kind: &str) -> String {
    crate::crd::names::plural(kind)
}
