//! The host side of the WIT contract: the generated bindings, the state of
//! one guest instance, the permission check, and the [`Cluster`] seam behind
//! which the host imports are served (the in-memory store offline, the
//! informer cache and API client in a cluster).

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tracing::Instrument as _;
use wasmtime::component::{HasSelf, Linker, ResourceTable};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

#[allow(missing_docs)]
mod generated {
    wasmtime::component::bindgen!({
        path: "../wit",
        world: "reconciler",
        imports: { default: async },
        exports: { default: async },
    });
}

pub use generated::{Action, Manifest, ReconcileError, Request};
pub(crate) use generated::{Reconciler, ReconcilerPre, rekon};

pub use rekon::reconciler::types::{
    ApiError, ApplyOptions, EventType, Gvk, Level, Mapping, ObjectRef, PatchType, Permission,
    Propagation, Reason, Verbs, Watch,
};

/// Largest object or patch body a guest may send in one call.
pub const MAX_CALL_PAYLOAD: usize = 3 << 20;
/// Longest log message or reconcile error message kept from a guest.
pub const MAX_MESSAGE: usize = 8 << 10;
/// Longest Event reason (the API server's limit).
pub const MAX_EVENT_REASON: usize = 128;
/// How much of a guest's stderr is kept (panic messages land there).
const STDERR_CAPACITY: usize = 16 << 10;

/// The cluster a guest's host calls are served from. Two implementations
/// ship with rekon: the in-memory store ([`crate::MemoryCluster`]) for offline
/// runs and tests, and the informer cache + API client in a cluster.
///
/// Objects travel as JSON text so a backend can pass them on without
/// re-encoding. Permissions are checked before a call reaches the backend.
#[async_trait::async_trait]
pub trait Cluster: Send + Sync + 'static {
    /// Reads one object.
    async fn get(&self, target: &ObjectRef) -> Result<String, ApiError>;
    /// Lists objects of a kind, ordered by namespace then name.
    async fn list(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        label_selector: Option<&str>,
    ) -> Result<Vec<String>, ApiError>;
    /// Creates an object.
    async fn create(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        object: &str,
        field_manager: &str,
    ) -> Result<String, ApiError>;
    /// Replaces an object, or its status subresource when `status` is set.
    async fn replace(
        &self,
        target: &ObjectRef,
        object: &str,
        status: bool,
        field_manager: &str,
    ) -> Result<String, ApiError>;
    /// Patches an object, or its status subresource when `status` is set.
    async fn patch(
        &self,
        target: &ObjectRef,
        patch_type: &PatchType,
        body: &str,
        status: bool,
        field_manager: &str,
    ) -> Result<String, ApiError>;
    /// Deletes an object.
    async fn delete(
        &self,
        target: &ObjectRef,
        propagation: Option<Propagation>,
    ) -> Result<(), ApiError>;
    /// Records an Event about an object, reported by `component`. Best
    /// effort: a backend hands the Event over and returns without waiting
    /// for the API server, and answers an error only for an Event it
    /// refuses itself.
    async fn record_event(
        &self,
        regarding: &ObjectRef,
        event_type: EventType,
        reason: &str,
        message: &str,
        component: &str,
    ) -> Result<(), ApiError>;
}

/// Every verb with its name, as manifests, logs and the operator's
/// configuration spell it.
pub(crate) const VERBS: [(Verbs, &str); 7] = [
    (Verbs::GET, "get"),
    (Verbs::LIST, "list"),
    (Verbs::WATCH, "watch"),
    (Verbs::CREATE, "create"),
    (Verbs::UPDATE, "update"),
    (Verbs::PATCH, "patch"),
    (Verbs::DELETE, "delete"),
];

/// The name of a single verb.
fn verb_name(verb: Verbs) -> &'static str {
    VERBS
        .iter()
        .find(|(v, _)| *v == verb)
        .map_or("?", |(_, name)| name)
}

/// Whether `permissions` allow `verb` on `kind` in `namespace`. Versions are
/// not compared (like RBAC): a grant covers every version of a group/kind.
pub fn is_allowed(
    permissions: &[Permission],
    verb: Verbs,
    kind: &Gvk,
    namespace: Option<&str>,
) -> bool {
    permissions.iter().any(|p| {
        p.kind.group == kind.group
            && p.kind.kind == kind.kind
            && p.verbs.contains(verb)
            && (p.namespaces.is_empty()
                || namespace.is_some_and(|ns| p.namespaces.iter().any(|n| n == ns)))
    })
}

/// One host call a guest made, and what came back. `rekon reconcile`
/// prints these; tests assert on them.
#[derive(Clone, Debug, serde::Serialize)]
pub struct CallRecord {
    /// The import called: `get`, `list`, `create`, `patch`, `log`...
    pub call: &'static str,
    /// Its arguments.
    pub args: Value,
    /// What the host answered: `{"ok": ...}` or `{"error": {...}}`.
    pub result: Value,
}

/// Who is calling: the module's identity and permissions.
#[derive(Clone, Debug)]
pub(crate) struct Caller {
    pub name: String,
    pub version: String,
    /// What the manifest declares.
    pub permissions: Vec<Permission>,
    /// What the operator allows this module, if they narrowed it: a call
    /// must then be allowed by both.
    pub operator_limit: Option<Vec<Permission>>,
}

impl Caller {
    fn allows(&self, verb: Verbs, kind: &Gvk, namespace: Option<&str>) -> bool {
        is_allowed(&self.permissions, verb, kind, namespace)
            && self
                .operator_limit
                .as_ref()
                .is_none_or(|limit| is_allowed(limit, verb, kind, namespace))
    }
}

impl Caller {
    fn field_manager(&self) -> String {
        format!("rekon-{}", self.name)
    }
}

/// What a reconcile may reach: present while `reconcile` runs, absent while
/// the module describes itself.
pub(crate) struct CallContext {
    pub cluster: Arc<dyn Cluster>,
    pub caller: Arc<Caller>,
    pub record: bool,
}

/// Memory accounting of one instance.
pub(crate) struct Limits {
    pub max_memory: usize,
    pub hit: bool,
}

impl wasmtime::ResourceLimiter for Limits {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.max_memory {
            self.hit = true;
            return Ok(false);
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= 100_000)
    }
}

/// The data of one guest instance's store.
pub struct HostState {
    wasi: WasiCtx,
    table: ResourceTable,
    pub(crate) limits: Limits,
    pub(crate) context: Option<CallContext>,
    pub(crate) stderr: MemoryOutputPipe,
    pub(crate) calls: Vec<CallRecord>,
    /// Every host call: its name and `ok` or the error reason (for metrics).
    pub(crate) call_results: Vec<(&'static str, String)>,
    /// Panic message the guest logged (the SDK's panic hook) before trapping.
    pub(crate) panic_message: Option<String>,
    /// Calls refused for lack of permission, as messages.
    pub(crate) denied: Vec<String>,
    /// The host calls that failed, oldest first (at most [`MAX_FAILED_CALLS`]).
    pub(crate) failed_calls: Vec<FailedCall>,
    /// Time spent in host calls: not charged to the guest's CPU budget.
    pub(crate) host_time: Duration,
    pub(crate) started: Instant,
    pub(crate) budget: Duration,
    pub(crate) timed_out: bool,
}

impl HostState {
    pub(crate) fn new(max_memory: usize, budget: Duration, context: Option<CallContext>) -> Self {
        let stderr = MemoryOutputPipe::new(STDERR_CAPACITY);
        // No preopened directories, no environment, no arguments, no
        // sockets: the guest has no ambient authority.
        let wasi = WasiCtx::builder().stderr(stderr.clone()).build();
        HostState {
            wasi,
            table: ResourceTable::new(),
            limits: Limits {
                max_memory,
                hit: false,
            },
            context,
            stderr,
            calls: Vec::new(),
            call_results: Vec::new(),
            panic_message: None,
            denied: Vec::new(),
            failed_calls: Vec::new(),
            host_time: Duration::ZERO,
            started: Instant::now(),
            budget,
            timed_out: false,
        }
    }

    /// CPU time the guest used so far (wall time minus host calls).
    pub(crate) fn guest_time(&self) -> Duration {
        self.started.elapsed().saturating_sub(self.host_time)
    }

    /// The guest's stderr, lossily decoded.
    pub(crate) fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr.contents()).into_owned()
    }

    fn record(&mut self, call: &'static str, args: impl FnOnce() -> Value, result: Value) {
        if self.context.as_ref().is_some_and(|c| c.record) {
            self.calls.push(CallRecord {
                call,
                args: args(),
                result,
            });
        }
    }

    /// Checks the caller's permissions and runs `op` against the cluster,
    /// timing it as host time, recording it, inside a `host.cluster.<op>` span.
    /// A failure is remembered with `name` (the object's, when the call
    /// names one) for the reconcile's error report.
    #[allow(clippy::too_many_arguments)]
    async fn call<T, F, Fut>(
        &mut self,
        call: &'static str,
        verb: Verbs,
        kind: &Gvk,
        namespace: Option<&str>,
        name: Option<&str>,
        args: impl FnOnce() -> Value,
        op: F,
    ) -> Result<T, ApiError>
    where
        T: serde::Serialize,
        F: FnOnce(Arc<dyn Cluster>, String) -> Fut,
        Fut: std::future::Future<Output = Result<T, ApiError>>,
    {
        let started = Instant::now();
        let result = match &self.context {
            None => Err(api_error(
                403,
                "Forbidden",
                "the cluster cannot be reached while a module describes itself (manifest)",
            )),
            Some(ctx) if !ctx.caller.allows(verb, kind, namespace) => {
                let by = if is_allowed(&ctx.caller.permissions, verb, kind, namespace) {
                    "the operator's configuration does not grant it"
                } else {
                    "its manifest does not grant it"
                };
                let message = format!(
                    "module {:?} may not {} {} in {}: {by}",
                    ctx.caller.name,
                    verb_name(verb),
                    display_kind(kind),
                    namespace.map_or("the cluster scope".to_string(), |ns| format!(
                        "namespace {ns:?}"
                    )),
                );
                tracing::warn!(
                    module = %ctx.caller.name,
                    verb = verb_name(verb),
                    kind = %display_kind(kind),
                    namespace,
                    "host call denied: outside the module's permissions"
                );
                self.denied.push(message.clone());
                Err(api_error(403, "Forbidden", &message))
            }
            Some(ctx) => {
                let span = tracing::debug_span!(
                    "host.cluster",
                    op = call,
                    kind = %kind.kind,
                    namespace,
                );
                op(ctx.cluster.clone(), ctx.caller.field_manager())
                    .instrument(span)
                    .await
            }
        };
        self.host_time += started.elapsed();
        self.call_results.push((
            call,
            match &result {
                Ok(_) => "ok".to_string(),
                Err(error) => error.reason.clone(),
            },
        ));
        if let Err(error) = &result {
            self.remember_failure(FailedCall {
                call,
                target: describe_target(kind, namespace, name),
                error: error.clone(),
            });
        }
        // Parsing the answer back into JSON costs as much as the call's own
        // JSON work: only when recording.
        if self.context.as_ref().is_some_and(|c| c.record) {
            let recorded = match &result {
                Ok(value) => json!({ "ok": value_of(value) }),
                Err(error) => json!({ "error": api_error_json(error) }),
            };
            self.record(call, args, recorded);
        }
        result
    }
}

impl HostState {
    fn remember_failure(&mut self, failed: FailedCall) {
        if self.failed_calls.len() == MAX_FAILED_CALLS {
            self.failed_calls.remove(0);
        }
        self.failed_calls.push(failed);
    }

    /// The failed host call a guest's error is put down to: the latest
    /// whose API message the guest's message repeats (it passed the error
    /// on), else the latest that is not a read of a missing object (which
    /// guests usually handle).
    pub(crate) fn blamed_call(&self, guest_message: &str) -> Option<&FailedCall> {
        let failed = self.failed_calls.iter().rev();
        failed
            .clone()
            .find(|f| !f.error.message.is_empty() && guest_message.contains(&f.error.message))
            .or_else(|| {
                failed
                    .clone()
                    .find(|f| !(f.error.code == 404 && matches!(f.call, "get" | "list")))
            })
    }
}

/// Most failed host calls remembered per reconcile.
const MAX_FAILED_CALLS: usize = 16;

/// A host call that failed during a reconcile.
#[derive(Clone, Debug)]
pub(crate) struct FailedCall {
    /// The import: `get`, `patch`, `record-event`...
    pub call: &'static str,
    /// What it was about: `Deployment.apps/v1 default/web`.
    pub target: String,
    /// What the API server (or the host) answered.
    pub error: ApiError,
}

impl std::fmt::Display for FailedCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {}: {} {}: {}",
            self.call, self.target, self.error.code, self.error.reason, self.error.message
        )
    }
}

/// `Deployment.apps/v1 default/web`, `Namespace/v1 tenant-a`,
/// `ConfigMap/v1 in default` (no name), `ConfigMap/v1 in every namespace`.
fn describe_target(kind: &Gvk, namespace: Option<&str>, name: Option<&str>) -> String {
    let kind = display_kind(kind);
    match (namespace, name) {
        (Some(ns), Some(name)) => format!("{kind} {ns}/{name}"),
        (None, Some(name)) => format!("{kind} {name}"),
        (Some(ns), None) => format!("{kind} in {ns}"),
        (None, None) => format!("{kind} in every namespace"),
    }
}

/// Objects travel as JSON text; in call records they appear as JSON.
fn value_of<T: serde::Serialize>(value: &T) -> Value {
    match serde_json::to_value(value).unwrap_or(Value::Null) {
        Value::String(s) => serde_json::from_str(&s).unwrap_or(Value::String(s)),
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|item| match item {
                    Value::String(s) => serde_json::from_str(&s).unwrap_or(Value::String(s)),
                    other => other,
                })
                .collect(),
        ),
        other => other,
    }
}

/// An [`ApiError`] from its parts.
pub fn api_error(code: u16, reason: &str, message: &str) -> ApiError {
    ApiError {
        code,
        reason: reason.to_string(),
        message: message.to_string(),
    }
}

/// An [`ApiError`] as JSON (for call records and logs).
pub fn api_error_json(error: &ApiError) -> Value {
    json!({ "code": error.code, "reason": error.reason, "message": error.message })
}

/// `Deployment.apps/v1`, `ConfigMap/v1`.
pub fn display_kind(kind: &Gvk) -> String {
    if kind.group.is_empty() {
        format!("{}/{}", kind.kind, kind.version)
    } else {
        format!("{}.{}/{}", kind.kind, kind.group, kind.version)
    }
}

/// The group and version of an apiVersion (`v1` -> `("", "v1")`).
pub(crate) fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.rsplit_once('/').unwrap_or(("", api_version))
}

/// An [`ObjectRef`] as JSON.
pub fn object_ref_json(target: &ObjectRef) -> Value {
    json!({
        "apiVersion": api_version(&target.kind),
        "kind": target.kind.kind,
        "namespace": target.namespace,
        "name": target.name,
    })
}

/// `v1` or `apps/v1`.
pub fn api_version(kind: &Gvk) -> String {
    if kind.group.is_empty() {
        kind.version.clone()
    } else {
        format!("{}/{}", kind.group, kind.version)
    }
}

/// `metadata.name` of an object's JSON, if it has one.
fn object_name(object: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Meta {
        name: Option<String>,
    }
    #[derive(serde::Deserialize)]
    struct Named {
        metadata: Option<Meta>,
    }
    serde_json::from_str::<Named>(object).ok()?.metadata?.name
}

fn patch_type_json(patch_type: &PatchType) -> Value {
    match patch_type {
        PatchType::Merge => json!("merge"),
        PatchType::Json => json!("json"),
        PatchType::Apply(options) => {
            json!({ "apply": { "fieldManager": options.field_manager, "force": options.force } })
        }
    }
}

fn too_large(body: &str) -> Option<ApiError> {
    (body.len() > MAX_CALL_PAYLOAD).then(|| {
        api_error(
            413,
            "RequestEntityTooLarge",
            &format!(
                "request body of {} bytes exceeds the limit of {MAX_CALL_PAYLOAD} bytes",
                body.len()
            ),
        )
    })
}

/// Cuts `text` to at most `max` bytes on a character boundary, saying so.
pub(crate) fn truncate(mut text: String, max: usize) -> String {
    if text.len() > max {
        let total = text.len();
        let mut cut = max;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        let _ = write!(text, "... ({total} bytes, truncated)");
    }
    text
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl rekon::reconciler::types::Host for HostState {}

impl rekon::reconciler::cluster::Host for HostState {
    async fn get(&mut self, target: ObjectRef) -> Result<String, ApiError> {
        let (kind, ns, name) = (
            target.kind.clone(),
            target.namespace.clone(),
            target.name.clone(),
        );
        let args = object_ref_json(&target);
        self.call(
            "get",
            Verbs::GET,
            &kind,
            ns.as_deref(),
            Some(&name),
            || args,
            |cluster, _| async move { cluster.get(&target).await },
        )
        .await
    }

    async fn list(
        &mut self,
        kind: Gvk,
        namespace: Option<String>,
        label_selector: Option<String>,
    ) -> Result<Vec<String>, ApiError> {
        let args = {
            let (kind, namespace, label_selector) =
                (kind.clone(), namespace.clone(), label_selector.clone());
            move || {
                json!({ "apiVersion": api_version(&kind), "kind": kind.kind,
                    "namespace": namespace, "labelSelector": label_selector })
            }
        };
        let ns = namespace.clone();
        self.call(
            "list",
            Verbs::LIST,
            &kind.clone(),
            ns.as_deref(),
            None,
            args,
            |cluster, _| async move {
                cluster
                    .list(&kind, namespace.as_deref(), label_selector.as_deref())
                    .await
            },
        )
        .await
    }

    async fn create(
        &mut self,
        kind: Gvk,
        namespace: Option<String>,
        object: String,
    ) -> Result<String, ApiError> {
        if let Some(error) = too_large(&object) {
            return Err(error);
        }
        let args = {
            let (kind, namespace) = (kind.clone(), namespace.clone());
            let object = object.clone();
            move || {
                json!({ "apiVersion": api_version(&kind), "kind": kind.kind,
                    "namespace": namespace, "object": value_of(&object) })
            }
        };
        let ns = namespace.clone();
        let name = object_name(&object);
        self.call(
            "create",
            Verbs::CREATE,
            &kind.clone(),
            ns.as_deref(),
            name.as_deref(),
            args,
            |cluster, manager| async move {
                cluster
                    .create(&kind, namespace.as_deref(), &object, &manager)
                    .await
            },
        )
        .await
    }

    async fn replace(&mut self, target: ObjectRef, object: String) -> Result<String, ApiError> {
        self.replace_impl("replace", target, object, false).await
    }

    async fn patch(
        &mut self,
        target: ObjectRef,
        patch_type: PatchType,
        body: String,
    ) -> Result<String, ApiError> {
        self.patch_impl("patch", target, patch_type, body, false)
            .await
    }

    async fn replace_status(
        &mut self,
        target: ObjectRef,
        object: String,
    ) -> Result<String, ApiError> {
        self.replace_impl("replace-status", target, object, true)
            .await
    }

    async fn patch_status(
        &mut self,
        target: ObjectRef,
        patch_type: PatchType,
        body: String,
    ) -> Result<String, ApiError> {
        self.patch_impl("patch-status", target, patch_type, body, true)
            .await
    }

    async fn delete(
        &mut self,
        target: ObjectRef,
        propagation: Option<Propagation>,
    ) -> Result<(), ApiError> {
        let (kind, ns, name) = (
            target.kind.clone(),
            target.namespace.clone(),
            target.name.clone(),
        );
        let args = {
            let target = target.clone();
            move || {
                let mut args = object_ref_json(&target);
                args["propagation"] = json!(propagation.map(|p| format!("{p:?}")));
                args
            }
        };
        self.call(
            "delete",
            Verbs::DELETE,
            &kind,
            ns.as_deref(),
            Some(&name),
            args,
            |cluster, _| async move { cluster.delete(&target, propagation).await },
        )
        .await
    }

    async fn record_event(
        &mut self,
        regarding: ObjectRef,
        event_type: EventType,
        reason: String,
        message: String,
    ) -> Result<(), ApiError> {
        // Events are the host's business: every module may record them,
        // about any object it can name. They are best effort: the host
        // refuses only what no API server would take, and never waits for
        // the write (see `crate::events`).
        let started = Instant::now();
        let message = truncate(message, MAX_MESSAGE);
        let result = match &self.context {
            None => Err(api_error(
                403,
                "Forbidden",
                "events cannot be recorded while a module describes itself (manifest)",
            )),
            Some(_) if reason.is_empty() || reason.len() > MAX_EVENT_REASON => Err(api_error(
                422,
                "Invalid",
                &format!(
                    "the Event's reason must be 1 to {MAX_EVENT_REASON} characters, not {}",
                    reason.len()
                ),
            )),
            Some(ctx) => {
                let component = ctx.caller.field_manager();
                ctx.cluster
                    .record_event(&regarding, event_type, &reason, &message, &component)
                    .await
            }
        };
        self.host_time += started.elapsed();
        self.call_results.push((
            "record-event",
            match &result {
                Ok(()) => "ok".to_string(),
                Err(error) => error.reason.clone(),
            },
        ));
        let recorded = match &result {
            Ok(()) => json!({ "ok": null }),
            Err(error) => json!({ "error": api_error_json(error) }),
        };
        self.record(
            "record-event",
            || {
                json!({ "regarding": object_ref_json(&regarding),
                    "type": format!("{event_type:?}"), "reason": reason, "message": message })
            },
            recorded,
        );
        result
    }
}

impl HostState {
    async fn replace_impl(
        &mut self,
        call: &'static str,
        target: ObjectRef,
        object: String,
        status: bool,
    ) -> Result<String, ApiError> {
        if let Some(error) = too_large(&object) {
            return Err(error);
        }
        let (kind, ns, name) = (
            target.kind.clone(),
            target.namespace.clone(),
            target.name.clone(),
        );
        let args = {
            let target = target.clone();
            let object = object.clone();
            move || {
                let mut args = object_ref_json(&target);
                args["object"] = value_of(&object);
                args
            }
        };
        self.call(
            call,
            Verbs::UPDATE,
            &kind,
            ns.as_deref(),
            Some(&name),
            args,
            |cluster, manager| async move {
                cluster.replace(&target, &object, status, &manager).await
            },
        )
        .await
    }

    async fn patch_impl(
        &mut self,
        call: &'static str,
        target: ObjectRef,
        patch_type: PatchType,
        body: String,
        status: bool,
    ) -> Result<String, ApiError> {
        if let Some(error) = too_large(&body) {
            return Err(error);
        }
        let (kind, ns, name) = (
            target.kind.clone(),
            target.namespace.clone(),
            target.name.clone(),
        );
        let args = {
            let target = target.clone();
            let patch = body.clone();
            let patch_type = patch_type_json(&patch_type);
            move || {
                let mut args = object_ref_json(&target);
                args["patchType"] = patch_type;
                args["patch"] = value_of(&patch);
                args
            }
        };
        self.call(
            call,
            Verbs::PATCH,
            &kind,
            ns.as_deref(),
            Some(&name),
            args,
            |cluster, manager| async move {
                cluster
                    .patch(&target, &patch_type, &body, status, &manager)
                    .await
            },
        )
        .await
    }
}

/// The prefix the SDK's panic hook puts before a panic message it logs.
pub const PANIC_LOG_PREFIX: &str = "panic: ";

impl rekon::reconciler::log::Host for HostState {
    async fn log(&mut self, level: Level, message: String, fields: Vec<(String, String)>) {
        let message = truncate(message, MAX_MESSAGE);
        if level == Level::Error
            && let Some(panic) = message.strip_prefix(PANIC_LOG_PREFIX)
        {
            self.panic_message = Some(panic.to_string());
        }
        let (module, version) = self
            .context
            .as_ref()
            .map(|c| (c.caller.name.as_str(), c.caller.version.as_str()))
            .unwrap_or(("", ""));
        let rendered: String = fields
            .iter()
            .take(32)
            .map(|(k, v)| format!(" {k}={v:?}"))
            .collect();
        match level {
            Level::Trace => {
                tracing::trace!(target: "rekon::guest", module, version, fields = %rendered, "{message}")
            }
            Level::Debug => {
                tracing::debug!(target: "rekon::guest", module, version, fields = %rendered, "{message}")
            }
            Level::Info => {
                tracing::info!(target: "rekon::guest", module, version, fields = %rendered, "{message}")
            }
            Level::Warn => {
                tracing::warn!(target: "rekon::guest", module, version, fields = %rendered, "{message}")
            }
            Level::Error => {
                tracing::error!(target: "rekon::guest", module, version, fields = %rendered, "{message}")
            }
        }
        self.record(
            "log",
            || {
                json!({ "level": format!("{level:?}").to_lowercase(), "message": message,
                    "fields": Value::Object(fields.iter()
                        .map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect()) })
            },
            json!({ "ok": null }),
        );
    }
}

/// Adds WASI (without ambient authority) and the `rekon:reconciler`
/// imports to a linker.
pub(crate) fn add_to_linker(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    wasmtime_wasi::p2::add_to_linker_async(linker)?;
    Reconciler::add_to_linker::<HostState, HasSelf<HostState>>(linker, |state| state)?;
    Ok(())
}
