//! The state of one guest instance's store: its WASI context (empty), its
//! memory limiter, its CPU accounting, what it called and what failed.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use serde_json::Value;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

use super::permissions::Caller;
use crate::cluster::Cluster;
use crate::contract::{ApiError, Gvk};
use crate::names::display_kind;

/// How much of a guest's stderr is kept (panic messages land there).
const STDERR_CAPACITY: usize = 16 << 10;

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

impl CallRecord {
    /// Parses an answer recorded as text
    /// (`DispatchOptions::answers_as_text`)
    /// into JSON, as it is recorded otherwise.
    pub fn parse_answer(&mut self) {
        if let Some(ok) = self.result.get_mut("ok") {
            *ok = super::call::parsed(std::mem::take(ok));
        }
    }
}

/// What a reconcile may reach: present while `reconcile` runs, absent while
/// the module describes itself.
pub(crate) struct CallContext {
    pub cluster: Arc<dyn Cluster>,
    pub caller: Arc<Caller>,
    pub record: bool,
    /// Answers recorded as their JSON text, unparsed.
    pub answers_as_text: bool,
    /// During an admission or conversion review: reads only.
    pub read_only: bool,
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
    /// Kept for as long as the store lives (the runtime's epoch ticking).
    pub(crate) held: Option<Box<dyn std::any::Any + Send>>,
}

impl HostState {
    pub(crate) fn new(max_memory: usize, budget: Duration, context: Option<CallContext>) -> Self {
        let stderr = MemoryOutputPipe::new(STDERR_CAPACITY);
        let wasi = wasi_context(&stderr, None);
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
            held: None,
        }
    }

    /// Makes the guest's wall clock stand still at `at` (before the
    /// instance is created: the WASI context is rebuilt).
    pub(crate) fn fix_wall_clock(&mut self, at: SystemTime) {
        self.wasi = wasi_context(&self.stderr, Some(at));
    }

    /// CPU time the guest used so far (wall time minus host calls).
    pub(crate) fn guest_time(&self) -> Duration {
        self.started.elapsed().saturating_sub(self.host_time)
    }

    /// The guest's stderr, lossily decoded.
    pub(crate) fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr.contents()).into_owned()
    }

    /// Whether this reconcile's calls are recorded (`rekon reconcile`,
    /// `rekon test`): only then are their payloads copied for the record.
    pub(super) fn recording(&self) -> bool {
        self.context.as_ref().is_some_and(|c| c.record)
    }

    /// Whether answers are recorded as their JSON text.
    pub(super) fn answers_as_text(&self) -> bool {
        self.context.as_ref().is_some_and(|c| c.answers_as_text)
    }

    pub(super) fn record(
        &mut self,
        call: &'static str,
        args: impl FnOnce() -> Value,
        result: Value,
    ) {
        if self.recording() {
            self.calls.push(CallRecord {
                call,
                args: args(),
                result,
            });
        }
    }
}

impl HostState {
    pub(super) fn remember_failure(&mut self, failed: FailedCall) {
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
pub(super) fn describe_target(kind: &Gvk, namespace: Option<&str>, name: Option<&str>) -> String {
    let kind = display_kind(kind);
    match (namespace, name) {
        (Some(ns), Some(name)) => format!("{kind} {ns}/{name}"),
        (None, Some(name)) => format!("{kind} {name}"),
        (Some(ns), None) => format!("{kind} in {ns}"),
        (None, None) => format!("{kind} in every namespace"),
    }
}

/// The guest's WASI context. No preopened directories, no environment, no
/// arguments, no sockets: the guest has no ambient authority. Its stderr is
/// kept (panic messages land there); its wall clock is the host's unless
/// `wall_clock` fixes it.
fn wasi_context(stderr: &MemoryOutputPipe, wall_clock: Option<SystemTime>) -> WasiCtx {
    let mut builder = WasiCtx::builder();
    builder.stderr(stderr.clone());
    if let Some(at) = wall_clock {
        builder.wall_clock(FixedWallClock(
            at.duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default(),
        ));
    }
    builder.build()
}

/// A wall clock that stands still (time since the Unix epoch; a time
/// before it reads as the epoch).
struct FixedWallClock(Duration);

impl wasmtime_wasi::HostWallClock for FixedWallClock {
    fn resolution(&self) -> Duration {
        Duration::from_nanos(1)
    }

    fn now(&self) -> Duration {
        self.0
    }
}

impl WasiView for HostState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}
