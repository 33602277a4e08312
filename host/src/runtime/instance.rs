//! One reconcile on a fresh instance of a module version: the store with
//! its limits and CPU deadline, the call, and every failure of the guest
//! turned into a [`ReconcileError`].

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use wasmtime::{Store, Trap, UpdateDeadline};

use super::engine::{Engine, Tier};
use super::module::Module;
use super::ticker::EPOCH_TICK;
use crate::bindings::{CallContext, CallRecord, HostState, MAX_MESSAGE};
use crate::cluster::Cluster;
use crate::contract::{Action, Request};
use crate::names::truncate;

/// Why a reconcile failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ReconcileError {
    /// The guest returned an error.
    #[error("reconcile failed: {message}")]
    Guest {
        /// The guest's message.
        message: String,
        /// Whether the guest asked for a retry.
        retry: bool,
    },
    /// The guest panicked.
    #[error("guest panicked: {message}")]
    Panic {
        /// The panic message.
        message: String,
    },
    /// The guest used more CPU time than allowed.
    #[error("guest exceeded its CPU time limit of {limit:?}")]
    Timeout {
        /// The limit.
        limit: Duration,
    },
    /// The guest tried to use more memory than allowed.
    #[error("guest exceeded its memory limit of {limit} bytes")]
    OutOfMemory {
        /// The limit, in bytes.
        limit: usize,
    },
    /// The guest recursed too deep.
    #[error("guest overflowed its stack (recursion too deep)")]
    StackOverflow,
    /// Any other trap.
    #[error("guest trapped: {message}")]
    Trap {
        /// What wasmtime said.
        message: String,
    },
    /// No instance could be created (pool exhausted, ...).
    #[error("cannot instantiate the module: {message}")]
    Instantiate {
        /// What wasmtime said.
        message: String,
    },
}

impl ReconcileError {
    /// A short, bounded label for metrics.
    pub fn metric_label(&self) -> &'static str {
        match self {
            ReconcileError::Guest { .. } => "error",
            ReconcileError::Panic { .. } => "panic",
            ReconcileError::Timeout { .. } => "timeout",
            ReconcileError::OutOfMemory { .. } => "out_of_memory",
            ReconcileError::StackOverflow => "stack_overflow",
            ReconcileError::Trap { .. } => "trap",
            ReconcileError::Instantiate { .. } => "instantiate",
        }
    }

    /// Whether the host should retry (with backoff). Every failure of the
    /// guest's own making is retried, except a guest error marked final.
    pub fn retry(&self) -> bool {
        match self {
            ReconcileError::Guest { retry, .. } => *retry,
            _ => true,
        }
    }
}

/// What one reconcile produced.
#[derive(Debug)]
pub struct Outcome {
    /// The guest's answer, or why there is none.
    pub result: Result<Action, ReconcileError>,
    /// The host calls the guest made (only when recording was asked for).
    pub calls: Vec<CallRecord>,
    /// Calls refused for lack of permission.
    pub denied: Vec<String>,
    /// Every host call made: its name and `ok` or the error's reason.
    pub host_calls: Vec<(&'static str, String)>,
    /// When the guest returned an error: the failed host call it is put
    /// down to, as `patch Deployment.apps/v1 default/web: 500
    /// InternalError: ...` (the latest failed call whose message the
    /// guest's error repeats, else the latest failed call that is not a
    /// read of a missing object).
    pub failed_call: Option<String>,
    /// Wall time of the whole reconcile, instantiation included.
    pub elapsed: Duration,
}

/// Options of one reconcile.
#[derive(Clone, Copy, Debug, Default)]
pub struct DispatchOptions {
    /// Record every host call and its answer in [`Outcome::calls`].
    pub record: bool,
    /// With `record`: keep each answer as the API server's JSON text (a
    /// string, or an array of them for a list) in [`CallRecord::result`]
    /// instead of parsing it, for [`CallRecord::parse_answer`] to parse
    /// later, if ever: recording costs the reconcile almost nothing then.
    pub answers_as_text: bool,
    /// The guest's wall clock (WASI `wall-clock`, what `SystemTime::now()`,
    /// `Date.now()` or `time.time()` read in the guest) stands still at this
    /// time during the reconcile; `None`: the host's clock. For tests of
    /// time-dependent logic (`rekon test`'s `time:`). The monotonic clock,
    /// and the CPU deadline, are not affected.
    pub wall_clock: Option<SystemTime>,
}

impl Module {
    /// Runs one reconcile on a fresh instance, serving host calls from
    /// `cluster`. Never panics and never fails the host: every failure of the
    /// guest is a [`ReconcileError`] in the outcome.
    pub async fn reconcile(
        &self,
        cluster: Arc<dyn Cluster>,
        request: &Request,
        options: DispatchOptions,
    ) -> Outcome {
        let started = Instant::now();
        let inner = &self.inner;
        let context = CallContext {
            cluster,
            caller: inner.caller.clone(),
            record: options.record,
            answers_as_text: options.answers_as_text,
            read_only: false,
        };
        let code = inner.code();
        let mut store = new_store(&inner.engine, code.tier, inner.budget, Some(context));
        if let Some(at) = options.wall_clock {
            store.data_mut().fix_wall_clock(at);
        }
        let result = async {
            let called = code
                .pre
                .reconcile(&mut store, request)
                .await
                .map_err(|e| classify(e, store.data(), &inner.engine, inner.budget))?;
            match called {
                Ok(Ok(action)) => Ok(action),
                Ok(Err(error)) => Err(ReconcileError::Guest {
                    message: truncate(error.message, MAX_MESSAGE),
                    retry: error.retry,
                }),
                Err(e) => Err(classify(e, store.data(), &inner.engine, inner.budget)),
            }
        }
        .await;
        let state = store.into_data();
        let failed_call = match &result {
            Err(ReconcileError::Guest { message, .. }) => {
                state.blamed_call(message).map(ToString::to_string)
            }
            _ => None,
        };
        Outcome {
            result,
            calls: state.calls,
            denied: state.denied,
            host_calls: state.call_results,
            failed_call,
            elapsed: started.elapsed(),
        }
    }

    /// Instantiates once and reconciles `requests` one after another on the
    /// same instance. Only for benchmarks (`fresh` versus `reused`): the host
    /// itself always uses a fresh instance per reconcile.
    #[cfg(feature = "bench")]
    pub async fn reconcile_reusing_instance(
        &self,
        cluster: Arc<dyn Cluster>,
        request: &Request,
        count: usize,
    ) -> Result<Duration, ReconcileError> {
        let inner = &self.inner;
        let context = CallContext {
            cluster,
            caller: inner.caller.clone(),
            record: false,
            answers_as_text: false,
            read_only: false,
        };
        let budget = Duration::from_secs(3600);
        let code = inner.code();
        let mut store = new_store(&inner.engine, code.tier, budget, Some(context));
        let instance = code
            .pre
            .instantiate(&mut store)
            .await
            .map_err(|e| classify(e, store.data(), &inner.engine, budget))?;
        let started = Instant::now();
        for _ in 0..count {
            match instance.reconcile(&mut store, request).await {
                Ok(Ok(_)) => {}
                Ok(Err(error)) => {
                    return Err(ReconcileError::Guest {
                        message: error.message,
                        retry: error.retry,
                    });
                }
                Err(e) => return Err(classify(e, store.data(), &inner.engine, budget)),
            }
        }
        Ok(started.elapsed())
    }
}

pub(super) fn new_store(
    engine: &Engine,
    tier: Tier,
    budget: Duration,
    context: Option<CallContext>,
) -> Store<HostState> {
    crate::telemetry::note_activity();
    let config = engine.config();
    let mut state = HostState::new(config.max_memory_bytes, budget, context);
    // The epoch ticker runs while this store (a guest) lives.
    state.held = Some(Box::new(engine.ticking()));
    let mut store = Store::new(engine.wasmtime_for(tier), state);
    store.limiter(|state| &mut state.limits);
    store.set_epoch_deadline(ticks(budget));
    // The deadline is on the guest's own CPU time: time spent in host calls
    // (waiting on the API server) is given back when the deadline fires.
    store.epoch_deadline_callback(|mut ctx| {
        let state = ctx.data_mut();
        let used = state.guest_time();
        if used >= state.budget {
            state.timed_out = true;
            return Err(Trap::Interrupt.into());
        }
        Ok(UpdateDeadline::Continue(ticks(state.budget - used)))
    });
    store
}

fn ticks(duration: Duration) -> u64 {
    (duration.as_micros() / EPOCH_TICK.as_micros()).max(1) as u64
}

/// Turns a wasmtime error into the failure a user should read.
pub(super) fn classify(
    error: wasmtime::Error,
    state: &HostState,
    engine: &Engine,
    budget: Duration,
) -> ReconcileError {
    if state.timed_out {
        return ReconcileError::Timeout { limit: budget };
    }
    if state.limits.hit {
        return ReconcileError::OutOfMemory {
            limit: engine.config().max_memory_bytes,
        };
    }
    let stderr = state.stderr_text();
    let panic = state
        .panic_message
        .clone()
        .or_else(|| panic_from_stderr(&stderr));
    match error.downcast_ref::<Trap>() {
        Some(Trap::StackOverflow) => ReconcileError::StackOverflow,
        Some(Trap::Interrupt) => ReconcileError::Timeout { limit: budget },
        Some(trap) => match panic {
            Some(message) => ReconcileError::Panic {
                message: truncate(message, MAX_MESSAGE),
            },
            None => {
                let mut message = trap.to_string();
                let stderr = stderr.trim();
                if !stderr.is_empty() {
                    message.push_str(": ");
                    message.push_str(stderr);
                }
                ReconcileError::Trap {
                    message: truncate(message, MAX_MESSAGE),
                }
            }
        },
        None => {
            let message = format!("{error:#}");
            if message.contains("pooling") || message.contains("instance") {
                ReconcileError::Instantiate { message }
            } else {
                ReconcileError::Trap {
                    message: truncate(message, MAX_MESSAGE),
                }
            }
        }
    }
}

/// A panic reported on the guest's stderr by Rust's default panic hook
/// (`thread '<unnamed>' panicked at src/lib.rs:1:2:` then the message),
/// followed by what the guest wrote before it: a Python guest prints the
/// exception's traceback there, then its runtime panics.
fn panic_from_stderr(stderr: &str) -> Option<String> {
    let at = stderr.find("panicked at")?;
    let line_start = stderr[..at].rfind('\n').map_or(0, |n| n + 1);
    let rest = &stderr[at + "panicked at".len()..];
    let message = rest.split_once('\n').map_or(rest, |(_, m)| m);
    let mut message = message
        .lines()
        .take_while(|l| !l.starts_with("note:"))
        .collect::<Vec<_>>()
        .join("\n")
        .trim()
        .to_string();
    let before = stderr[..line_start].trim();
    if !before.is_empty() {
        message.push('\n');
        message.push_str(before);
    }
    Some(message)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_python_exception_reaches_the_panic_message() {
        // What componentize-py writes when `reconcile` raises.
        let stderr = "Traceback (most recent call last):\n  File \"/0/app.py\", line 90, in reconcile\nValueError: boom from python\n\nthread '<unnamed>' (1) panicked at runtime/src/lib.rs:1293:29:\nPython function threw an unexpected exception\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n";
        let message = super::panic_from_stderr(stderr).unwrap();
        assert!(
            message.starts_with("Python function threw an unexpected exception\n"),
            "{message}"
        );
        assert!(
            message.contains("ValueError: boom from python"),
            "{message}"
        );
        assert!(!message.contains("RUST_BACKTRACE"), "{message}");
        let rust = "thread '<unnamed>' panicked at src/lib.rs:1:2:\nasked to panic\nnote: run with `RUST_BACKTRACE=1`\n";
        assert_eq!(
            super::panic_from_stderr(rust).as_deref(),
            Some("asked to panic")
        );
        assert_eq!(super::panic_from_stderr("just a log line\n"), None);
    }
}
