//! The serving version a controller dispatches into: a WebAssembly [`Module`]
//! version, or a reconciler compiled into the host process (to measure what
//! the sandbox costs against the same logic run natively) — and the
//! dispatch statistics the host keeps.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::cluster::Cluster;
use crate::contract::{Action, GuestError, Manifest, Request};
use crate::runtime::{DispatchOptions, Module, Outcome, ReconcileError};
use crate::telemetry::InfoLabels;

/// The future a [`NativeReconciler`] returns.
pub type NativeFuture = Pin<Box<dyn Future<Output = Result<Action, GuestError>> + Send>>;

type NativeFn = dyn Fn(Arc<dyn Cluster>, Request) -> NativeFuture + Send + Sync;

/// A reconciler compiled into the host process: a manifest and an async
/// function, run behind the same informers, queue and [`Cluster`] backend
/// as a module.
///
/// It is trusted code: nothing sandboxes it, and its cluster calls are not
/// checked against its manifest's permissions (it could reach the cluster
/// without the host anyway). It exists to measure the sandbox
/// (`cargo bench --bench pipeline`), not as a way to ship reconcilers.
#[doc(hidden)]
#[derive(Clone)]
pub struct NativeReconciler {
    manifest: Manifest,
    reconcile: Arc<NativeFn>,
}

impl std::fmt::Debug for NativeReconciler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeReconciler")
            .field("name", &self.manifest.name)
            .finish_non_exhaustive()
    }
}

impl NativeReconciler {
    /// A native reconciler: `reconcile` is called once per request, with the
    /// host's cluster backend (field manager `rekon-<manifest name>` is the
    /// caller's to pass).
    #[cfg(feature = "bench")]
    pub fn new<F, Fut>(manifest: Manifest, reconcile: F) -> NativeReconciler
    where
        F: Fn(Arc<dyn Cluster>, Request) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, GuestError>> + Send + 'static,
    {
        NativeReconciler {
            manifest,
            reconcile: Arc::new(move |cluster, request| Box::pin(reconcile(cluster, request))),
        }
    }

    /// Its manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }
}

/// The reconcile logic behind a controller.
#[derive(Clone, Debug)]
// One per controller, built once: the variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
enum Target {
    /// A WebAssembly module version, a fresh instance per reconcile.
    Wasm(Module),
    /// A reconciler compiled into the host.
    Native(NativeReconciler),
}

/// What a controller dispatches into, and where it reports.
#[derive(Clone, Debug)]
pub(crate) struct Dispatcher {
    target: Target,
    stats: Arc<DispatchStats>,
}

impl Dispatcher {
    /// Dispatches into a module version, a fresh instance per reconcile.
    pub fn wasm(module: Module, stats: Arc<DispatchStats>) -> Dispatcher {
        Dispatcher {
            target: Target::Wasm(module),
            stats,
        }
    }

    /// Dispatches into a reconciler compiled into the host.
    pub fn native(native: NativeReconciler, stats: Arc<DispatchStats>) -> Dispatcher {
        Dispatcher {
            target: Target::Native(native),
            stats,
        }
    }

    pub fn manifest(&self) -> &Manifest {
        match &self.target {
            Target::Wasm(module) => module.manifest(),
            Target::Native(native) => native.manifest(),
        }
    }

    pub fn name(&self) -> &str {
        &self.manifest().name
    }

    /// The contract the module was built for (`0.4.0`); `native` for a
    /// native reconciler.
    pub fn contract_version(&self) -> &'static str {
        match &self.target {
            Target::Wasm(module) => module.contract_version(),
            Target::Native(_) => "native",
        }
    }

    /// The module's digest; `native` for a native reconciler.
    pub fn digest(&self) -> &str {
        match &self.target {
            Target::Wasm(module) => module.digest(),
            Target::Native(_) => "native",
        }
    }

    /// The labels of the version, as `rekon_module_info` has them.
    pub fn version_labels(&self) -> InfoLabels {
        InfoLabels {
            module: self.name().to_string(),
            version: self.manifest().version.clone(),
            digest: self.digest().to_string(),
        }
    }

    /// The first 12 hex digits of the module's digest; `native` for a
    /// native reconciler.
    pub fn short_digest(&self) -> &str {
        match &self.target {
            Target::Wasm(module) => module.digest().get(..12).unwrap_or(module.digest()),
            Target::Native(_) => "native",
        }
    }

    /// Runs one reconcile.
    pub async fn reconcile(
        &self,
        cluster: Arc<dyn Cluster>,
        request: &Request,
        options: DispatchOptions,
    ) -> Outcome {
        match &self.target {
            Target::Wasm(module) => module.reconcile(cluster, request, options).await,
            Target::Native(native) => {
                let started = Instant::now();
                let result = (native.reconcile)(cluster, request.clone())
                    .await
                    .map_err(|error| ReconcileError::Guest {
                        message: error.message,
                        retry: error.retry,
                    });
                Outcome {
                    result,
                    calls: Vec::new(),
                    denied: Vec::new(),
                    host_calls: Vec::new(),
                    failed_call: None,
                    elapsed: started.elapsed(),
                }
            }
        }
    }

    /// Records how long a key waited between becoming due and its reconcile
    /// starting; `user` for a change users caused (high priority).
    pub fn observe_queue_latency(&self, latency: Duration, user: bool) {
        self.stats.observe_queue_latency(latency);
        if user {
            self.stats
                .user_latency
                .lock()
                .expect("stats lock")
                .push(latency);
        }
    }
}

/// Most queue-latency samples kept; older ones are overwritten.
const MAX_SAMPLES: usize = 1 << 17;

/// Dispatch statistics of a [`Host`](crate::Host), across its controllers:
/// for now, how long keys wait in the queue between becoming due and their
/// reconcile starting (the last 131072 samples). Provisional: metrics will
/// take its place.
#[doc(hidden)]
#[derive(Debug, Default)]
pub struct DispatchStats {
    queue_latency: Mutex<Samples>,
    /// The same, of the changes users caused only (high priority).
    user_latency: Mutex<Samples>,
}

#[derive(Debug, Default)]
struct Samples {
    values: Vec<Duration>,
    next: usize,
    total: u64,
}

impl Samples {
    fn push(&mut self, latency: Duration) {
        self.total += 1;
        if self.values.len() < MAX_SAMPLES {
            self.values.push(latency);
        } else {
            let next = self.next;
            self.values[next] = latency;
            self.next = (next + 1) % MAX_SAMPLES;
        }
    }

    #[cfg(any(test, feature = "bench"))]
    fn quantile(&self, q: f64) -> Option<Duration> {
        let mut values = self.values.clone();
        if values.is_empty() {
            return None;
        }
        values.sort_unstable();
        let rank = (q.clamp(0.0, 1.0) * values.len() as f64).ceil() as usize;
        Some(values[rank.saturating_sub(1).min(values.len() - 1)])
    }
}

impl DispatchStats {
    pub(crate) fn observe_queue_latency(&self, latency: Duration) {
        self.queue_latency.lock().expect("stats lock").push(latency);
    }

    #[cfg(any(test, feature = "bench"))]
    /// How many queue latencies were recorded (kept or not).
    pub fn queue_latency_count(&self) -> u64 {
        self.queue_latency.lock().expect("stats lock").total
    }

    #[cfg(any(test, feature = "bench"))]
    /// The `q` quantile (0.0 to 1.0, nearest rank) of the kept queue
    /// latencies; `None` before the first reconcile.
    pub fn queue_latency_quantile(&self, q: f64) -> Option<Duration> {
        self.queue_latency.lock().expect("stats lock").quantile(q)
    }

    #[cfg(any(test, feature = "bench"))]
    /// How many of the recorded reconciles were of changes users caused.
    pub fn user_queue_latency_count(&self) -> u64 {
        self.user_latency.lock().expect("stats lock").total
    }

    #[cfg(any(test, feature = "bench"))]
    /// The `q` quantile of the queue latencies of the changes users caused
    /// (high priority) only.
    pub fn user_queue_latency_quantile(&self, q: f64) -> Option<Duration> {
        self.user_latency.lock().expect("stats lock").quantile(q)
    }

    #[cfg(any(test, feature = "bench"))]
    /// Forgets every sample (to measure one phase of a run).
    pub fn reset(&self) {
        *self.queue_latency.lock().expect("stats lock") = Samples::default();
        *self.user_latency.lock().expect("stats lock") = Samples::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_by_nearest_rank() {
        let stats = DispatchStats::default();
        assert_eq!(stats.queue_latency_quantile(0.5), None);
        for ms in 1..=100 {
            stats.observe_queue_latency(Duration::from_millis(ms));
        }
        assert_eq!(stats.queue_latency_count(), 100);
        assert_eq!(
            stats.queue_latency_quantile(0.5),
            Some(Duration::from_millis(50))
        );
        assert_eq!(
            stats.queue_latency_quantile(0.99),
            Some(Duration::from_millis(99))
        );
        assert_eq!(
            stats.queue_latency_quantile(1.0),
            Some(Duration::from_millis(100))
        );
        stats.reset();
        assert_eq!(stats.queue_latency_count(), 0);
    }

    #[test]
    fn keeps_the_latest_samples_when_full() {
        let stats = DispatchStats::default();
        for _ in 0..MAX_SAMPLES {
            stats.observe_queue_latency(Duration::from_secs(1));
        }
        for _ in 0..MAX_SAMPLES {
            stats.observe_queue_latency(Duration::from_millis(1));
        }
        assert_eq!(stats.queue_latency_count(), 2 * MAX_SAMPLES as u64);
        assert_eq!(
            stats.queue_latency_quantile(1.0),
            Some(Duration::from_millis(1))
        );
    }
}
