//! Fault injection and the request log, shared by the in-process API and the
//! `/_rekon/...` control endpoints.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use rekon_store::Store;
use serde::{Deserialize, Serialize};

/// One request the server answered.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RequestRecord {
    /// HTTP method.
    pub method: String,
    /// Path, without the query.
    pub path: String,
    /// The raw query string (empty when none).
    pub query: String,
    /// The User-Agent header (empty when none).
    pub user_agent: String,
    /// The Kubernetes verb: get, list, watch, create, update, patch, delete,
    /// deletecollection; empty for discovery and OpenAPI.
    pub verb: String,
    /// The resource (plural, with `/status` for the subresource); empty when none.
    pub resource: String,
    /// The HTTP status answered.
    pub status: u16,
}

/// A rule answering the next `count` matching requests with `code`.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct FailRule {
    /// The verb to match (`create`, `watch`, ...); any when `None`.
    #[serde(default)]
    pub verb: Option<String>,
    /// The resource to match (`configmaps`, `widgets/status`); any when `None`.
    #[serde(default)]
    pub resource: Option<String>,
    /// The HTTP status to answer: 429 (with Retry-After), 500, 409, ...
    pub code: u16,
    /// How many requests to fail.
    #[serde(default = "one")]
    pub count: usize,
    /// The Retry-After seconds for 429 (default 1).
    #[serde(default)]
    pub retry_after_seconds: Option<u64>,
    /// Only dry runs (`dryRun=All`) when `true`, only real writes when
    /// `false`; both when `None`.
    #[serde(default)]
    pub dry_run: Option<bool>,
}

/// The request log keeps at most this many records (the oldest go first).
pub const MAX_LOG: usize = 100_000;

fn one() -> usize {
    1
}

/// A rule delaying the next `count` matching requests, then answering them
/// normally.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(not(feature = "faults"), allow(dead_code))]
struct StallRule {
    verb: Option<String>,
    resource: Option<String>,
    delay: Duration,
    count: usize,
}

#[derive(Default)]
#[cfg_attr(not(feature = "faults"), allow(dead_code))]
struct FaultState {
    rules: Vec<FailRule>,
    stalls: Vec<StallRule>,
    latency: Duration,
    log: Vec<RequestRecord>,
}

/// The fault injection and request log handle of a running server.
/// Cheap to clone; every clone controls the same server.
#[derive(Clone)]
pub struct Faults {
    state: Arc<Mutex<FaultState>>,
    #[cfg_attr(not(feature = "faults"), allow(dead_code))]
    store: Store,
    restart: Arc<tokio::sync::Notify>,
}

impl std::fmt::Debug for Faults {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Faults").finish_non_exhaustive()
    }
}

impl Faults {
    pub(crate) fn new(store: Store) -> Faults {
        Faults {
            state: Arc::default(),
            store,
            restart: Arc::new(tokio::sync::Notify::new()),
        }
    }

    fn lock(&self) -> MutexGuard<'_, FaultState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    #[cfg(feature = "faults")]
    /// Ends every open watch stream (clients see the stream close and re-watch).
    pub fn drop_watches(&self) {
        self.store.drop_watches();
    }

    #[cfg(feature = "faults")]
    /// Answers the next matching requests with an error status.
    pub fn fail(&self, rule: FailRule) {
        self.lock().rules.push(rule);
    }

    #[cfg(feature = "faults")]
    /// Answers the next `count` requests with `verb` on `resource` with `code`.
    pub fn fail_next(&self, count: usize, verb: Option<&str>, resource: Option<&str>, code: u16) {
        self.fail(FailRule {
            verb: verb.map(str::to_string),
            resource: resource.map(str::to_string),
            code,
            count,
            retry_after_seconds: None,
            dry_run: None,
        });
    }

    #[cfg(feature = "faults")]
    /// Delays the next `count` requests with `verb` on `resource` (any when
    /// `None`) by `delay` each, then answers them normally: a slow API
    /// server for one kind of request.
    pub fn stall_next(
        &self,
        count: usize,
        verb: Option<&str>,
        resource: Option<&str>,
        delay: Duration,
    ) {
        self.lock().stalls.push(StallRule {
            verb: verb.map(str::to_string),
            resource: resource.map(str::to_string),
            delay,
            count,
        });
    }

    #[cfg(feature = "faults")]
    /// Delays every API request by `latency` (zero to stop).
    pub fn set_latency(&self, latency: Duration) {
        self.lock().latency = latency;
    }

    #[cfg(feature = "faults")]
    /// Forgets the watch history: watches resuming from an older
    /// resourceVersion get a 410 Expired ERROR event.
    pub fn compact(&self) {
        self.store.compact();
    }

    #[cfg(feature = "faults")]
    /// Simulates a restart: open connections are closed, watches end, and
    /// with `keep_data == false` every object is lost (the history is
    /// compacted, so resuming watches get 410).
    pub fn restart(&self, keep_data: bool) {
        if !keep_data {
            self.store.reset();
        }
        self.store.drop_watches();
        self.restart.notify_waiters();
    }

    #[cfg(feature = "faults")]
    /// Removes every failure and stall rule and the latency.
    pub fn clear(&self) {
        let mut g = self.lock();
        g.rules.clear();
        g.stalls.clear();
        g.latency = Duration::ZERO;
    }

    /// The requests answered so far, oldest first.
    pub fn requests(&self) -> Vec<RequestRecord> {
        self.lock().log.clone()
    }

    /// Empties the request log.
    pub fn clear_requests(&self) {
        self.lock().log.clear();
    }

    pub(crate) fn record(&self, rec: RequestRecord) {
        let mut g = self.lock();
        if g.log.len() >= MAX_LOG {
            // A long `rekon dev` session must not grow without bound.
            g.log.drain(..MAX_LOG / 10);
        }
        g.log.push(rec);
    }

    #[cfg(feature = "faults")]
    pub(crate) fn latency(&self) -> Duration {
        self.lock().latency
    }

    pub(crate) fn restart_notify(&self) -> Arc<tokio::sync::Notify> {
        self.restart.clone()
    }

    #[cfg(feature = "faults")]
    /// The delay to add to this request, if a stall rule matches (consuming it).
    pub(crate) fn take_stall(&self, verb: &str, resource: &str) -> Option<Duration> {
        let mut g = self.lock();
        let pos = g.stalls.iter().position(|r| {
            r.count > 0
                && r.verb.as_deref().is_none_or(|v| v == verb)
                && r.resource.as_deref().is_none_or(|x| x == resource)
        })?;
        let rule = &mut g.stalls[pos];
        rule.count -= 1;
        let delay = rule.delay;
        if rule.count == 0 {
            g.stalls.remove(pos);
        }
        Some(delay)
    }

    #[cfg(feature = "faults")]
    /// The failure to inject for this request, if a rule matches (consuming it).
    pub(crate) fn take_failure(
        &self,
        verb: &str,
        resource: &str,
        dry_run: bool,
    ) -> Option<(u16, u64)> {
        let mut g = self.lock();
        let pos = g.rules.iter().position(|r| {
            r.count > 0
                && r.verb.as_deref().is_none_or(|v| v == verb)
                && r.resource.as_deref().is_none_or(|x| x == resource)
                && r.dry_run.is_none_or(|d| d == dry_run)
        })?;
        let rule = &mut g.rules[pos];
        rule.count -= 1;
        let out = (rule.code, rule.retry_after_seconds.unwrap_or(1));
        if rule.count == 0 {
            g.rules.remove(pos);
        }
        Some(out)
    }
}
