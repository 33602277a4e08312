//! Telemetry: the host's metrics and the `/metrics`, `/healthz`, `/readyz` endpoints.
//! May call: nothing of the host's (every room records here).
//!
//! Every metric is listed in the README; a test checks that the names listed
//! there are the names served. One prefix (`rekon_`), counters end in
//! `_total`, durations are histograms in `_seconds`, labels are few and
//! bounded (module, kind, result, verb).

mod activity;
mod help;
use help::register;
mod serve;

pub use activity::activity;
pub(crate) use activity::note as note_activity;

pub(crate) use serve::serve;
pub use serve::{Answer, Endpoints};

use std::collections::{BTreeMap, HashSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// Labels: a module.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ModuleLabel {
    pub module: String,
}

/// Labels: a module and a queue priority.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct PriorityLabels {
    pub module: String,
    pub priority: String,
}

/// Labels: the module version that served, and an outcome.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ResultLabels {
    pub module: String,
    pub version: String,
    pub digest: String,
    pub result: String,
}

impl ResultLabels {
    /// The labels of `result` of a reconcile `version` served.
    fn of(version: &InfoLabels, result: &str) -> ResultLabels {
        ResultLabels {
            module: version.module.clone(),
            version: version.version.clone(),
            digest: version.digest.clone(),
            result: result.to_string(),
        }
    }
}

/// Labels: a module and a failure kind.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct KindLabels {
    pub module: String,
    pub kind: String,
}

/// Labels: a host call and its outcome.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct CallLabels {
    pub module: String,
    pub verb: String,
    pub result: String,
}

/// Labels: a loaded module version.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct InfoLabels {
    pub module: String,
    pub version: String,
    pub digest: String,
}

/// Labels: why a module failed to load.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ReasonLabel {
    pub reason: String,
}

/// Labels: an outcome.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct ResultLabel {
    pub result: String,
}

/// Labels: a module's webhook and an outcome.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct WebhookLabels {
    pub module: String,
    pub webhook: String,
    pub result: String,
}

/// Labels: a module's webhook.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct WebhookLabel {
    pub module: String,
    pub webhook: String,
}

/// Labels: a handoff's direction (gained, released).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct DirectionLabel {
    pub direction: String,
}

/// Labels: a CRD migrated and a state (`migrated`, `total`) or outcome.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct MigrationLabels {
    pub crd: String,
    pub state: String,
}

/// Labels: a sharded informer's kind and filtering mode.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct FilteringLabels {
    pub kind: String,
    pub mode: String,
}

/// Labels: an informer's kind.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub(crate) struct InformerLabel {
    pub kind: String,
}

/// The host's metrics.
pub struct Metrics {
    registry: Registry,
    pub(crate) reconciles: Family<ResultLabels, Counter>,
    pub(crate) reconcile_duration: Family<InfoLabels, Histogram>,
    pub(crate) queue_depth: Family<PriorityLabels, Gauge>,
    pub(crate) queue_wait: Family<ModuleLabel, Histogram>,
    pub(crate) retries: Family<ModuleLabel, Counter>,
    pub(crate) guest_failures: Family<KindLabels, Counter>,
    pub(crate) host_calls: Family<CallLabels, Counter>,
    pub(crate) module_info: Family<InfoLabels, Gauge>,
    pub(crate) candidate_canary: Family<InfoLabels, Gauge>,
    pub(crate) shadow_reconciles: Family<ModuleLabel, Counter>,
    pub(crate) shadow_differences: Family<ModuleLabel, Counter>,
    pub(crate) shadow_errors: Family<ModuleLabel, Counter>,
    pub(crate) shadow_skipped: Family<ModuleLabel, Counter>,
    pub(crate) shadow_superseded: Family<ModuleLabel, Counter>,
    pub(crate) canary_reconciles: Family<ModuleLabel, Counter>,
    pub(crate) load_failures: Family<ReasonLabel, Counter>,
    pub(crate) leader: Gauge,
    pub(crate) module_leader: Family<ModuleLabel, Gauge>,
    pub(crate) informer_objects: Family<InformerLabel, Gauge>,
    pub(crate) events: Family<ResultLabel, Counter>,
    pub(crate) admission_requests: Family<WebhookLabels, Counter>,
    pub(crate) admission_duration: Family<WebhookLabel, Histogram>,
    pub(crate) shard_fraction: Gauge<f64, std::sync::atomic::AtomicU64>,
    pub(crate) shard_members: Gauge,
    pub(crate) shard_objects: Family<KindLabels, Gauge>,
    pub(crate) shard_filtering: Family<FilteringLabels, Gauge>,
    pub(crate) shard_handoffs: Family<DirectionLabel, Counter>,
    pub(crate) shard_handoff_duration: Histogram,
    pub(crate) migration_objects: Family<MigrationLabels, Gauge>,
    pub(crate) migrations: Family<MigrationLabels, Counter>,
    /// The label sets of `host_calls` created so far (to forget a module's).
    host_call_labels: Mutex<HashSet<CallLabels>>,
    /// The versions that served reconciles so far (to forget a module's).
    served_versions: Mutex<HashSet<InfoLabels>>,
    /// The initial modules have been loaded (or refused).
    ready: AtomicBool,
    stopping: AtomicBool,
    /// Each running controller, and whether its primary cache has synced.
    controllers: Mutex<BTreeMap<String, bool>>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

fn seconds_histogram() -> Histogram {
    // 100 µs to ~100 s.
    Histogram::new(exponential_buckets(0.0001, 4.0, 11))
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// Registers every metric.
    pub fn new() -> Metrics {
        let mut r = Registry::with_prefix("rekon");
        fn seconds<L: Clone + std::hash::Hash + Eq>() -> Family<L, Histogram> {
            Family::new_with_constructor(seconds_histogram as fn() -> Histogram)
        }
        Metrics {
            reconciles: register(&mut r, "reconciles", Family::default()),
            reconcile_duration: register(&mut r, "reconcile_duration_seconds", seconds()),
            queue_depth: register(&mut r, "queue_depth", Family::default()),
            queue_wait: register(&mut r, "queue_wait_seconds", seconds()),
            retries: register(&mut r, "retries", Family::default()),
            guest_failures: register(&mut r, "guest_failures", Family::default()),
            host_calls: register(&mut r, "host_calls", Family::default()),
            module_info: register(&mut r, "module_info", Family::default()),
            candidate_canary: register(&mut r, "candidate_canary_percent", Family::default()),
            shadow_reconciles: register(&mut r, "shadow_reconciles", Family::default()),
            shadow_differences: register(&mut r, "shadow_differences", Family::default()),
            shadow_errors: register(&mut r, "shadow_errors", Family::default()),
            shadow_skipped: register(&mut r, "shadow_skipped", Family::default()),
            shadow_superseded: register(&mut r, "shadow_superseded", Family::default()),
            canary_reconciles: register(&mut r, "canary_reconciles", Family::default()),
            load_failures: register(&mut r, "module_load_failures", Family::default()),
            leader: register(&mut r, "leader", Gauge::default()),
            module_leader: register(&mut r, "module_leader", Family::default()),
            informer_objects: register(&mut r, "informer_objects", Family::default()),
            events: register(&mut r, "events", Family::default()),
            admission_requests: register(&mut r, "admission_requests", Family::default()),
            admission_duration: register(
                &mut r,
                "admission_duration_seconds",
                Family::new_with_constructor(seconds_histogram as fn() -> Histogram),
            ),
            shard_fraction: register(&mut r, "shard_fraction", Gauge::default()),
            shard_members: register(&mut r, "shard_members", Gauge::default()),
            shard_objects: register(&mut r, "shard_objects", Family::default()),
            shard_filtering: register(&mut r, "shard_filtering", Family::default()),
            shard_handoffs: register(&mut r, "shard_handoffs", Family::default()),
            shard_handoff_duration: register(
                &mut r,
                "shard_handoff_duration_seconds",
                seconds_histogram(),
            ),
            migration_objects: register(&mut r, "migration_objects", Family::default()),
            migrations: register(&mut r, "migrations", Family::default()),
            registry: r,
            host_call_labels: Mutex::new(HashSet::new()),
            served_versions: Mutex::new(HashSet::new()),
            ready: AtomicBool::new(false),
            stopping: AtomicBool::new(false),
            controllers: Mutex::new(BTreeMap::new()),
        }
    }

    /// The metrics in the Prometheus text format.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry)
            .expect("writing to a String cannot fail");
        text
    }

    /// Marks the initial modules loaded (or refused).
    pub(crate) fn modules_loaded(&self) {
        self.ready.store(true, Ordering::Relaxed);
    }

    /// The host is shutting down: not ready any more.
    pub(crate) fn shutting_down(&self) {
        self.stopping.store(true, Ordering::Relaxed);
    }

    /// Whether the host is shutting down.
    pub fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::Relaxed)
    }

    /// Counts one Event by what became of it.
    pub(crate) fn count_event(&self, result: &str) {
        self.events
            .get_or_create(&ResultLabel {
                result: result.to_string(),
            })
            .inc();
    }

    /// Counts one review of a module's webhook, and its duration.
    pub(crate) fn count_review(
        &self,
        module: &str,
        webhook: &str,
        result: &str,
        elapsed: std::time::Duration,
    ) {
        let (module, webhook) = (module.to_string(), webhook.to_string());
        self.admission_requests
            .get_or_create(&WebhookLabels {
                module: module.clone(),
                webhook: webhook.clone(),
                result: result.to_string(),
            })
            .inc();
        self.admission_duration
            .get_or_create(&WebhookLabel { module, webhook })
            .observe(elapsed.as_secs_f64());
    }

    /// Counts one host call.
    /// Counts one reconcile `version` served, with `result`, that took
    /// `elapsed`.
    pub(crate) fn count_reconcile(
        &self,
        version: &InfoLabels,
        result: &str,
        elapsed: std::time::Duration,
    ) {
        self.reconcile_duration
            .get_or_create(version)
            .observe(elapsed.as_secs_f64());
        self.reconciles
            .get_or_create(&ResultLabels::of(version, result))
            .inc();
        let mut served = self.served_versions.lock().expect("metrics lock");
        if !served.contains(version) {
            served.insert(version.clone());
        }
    }

    pub(crate) fn count_host_call(&self, labels: CallLabels) {
        self.host_calls.get_or_create(&labels).inc();
        self.host_call_labels
            .lock()
            .expect("metrics lock")
            .insert(labels);
    }

    /// A module's controller started; it counts for readiness until it
    /// stops, and is ready once its primary cache has synced.
    pub(crate) fn controller_started(&self, module: &str) {
        self.controllers
            .lock()
            .expect("metrics lock")
            .insert(module.to_string(), false);
    }

    /// One controller's primary cache has synced.
    pub(crate) fn controller_synced(&self, module: &str) {
        if let Some(synced) = self
            .controllers
            .lock()
            .expect("metrics lock")
            .get_mut(module)
        {
            *synced = true;
        }
    }

    /// A module's controller stopped.
    pub(crate) fn controller_stopped(&self, module: &str) {
        self.controllers
            .lock()
            .expect("metrics lock")
            .remove(module);
    }

    /// Removes every series of a module that is unloaded.
    pub(crate) fn forget_module(&self, module: &str) {
        let label = ModuleLabel {
            module: module.to_string(),
        };
        for priority in PRIORITIES {
            self.queue_depth.remove(&PriorityLabels {
                module: module.to_string(),
                priority: priority.to_string(),
            });
        }
        self.queue_wait.remove(&label);
        self.retries.remove(&label);
        self.module_leader.remove(&label);
        for result in RESULTS {
            self.guest_failures.remove(&KindLabels {
                module: module.to_string(),
                kind: result.to_string(),
            });
        }
        self.served_versions
            .lock()
            .expect("metrics lock")
            .retain(|version| {
                let keep = version.module != module;
                if !keep {
                    self.reconcile_duration.remove(version);
                    for result in RESULTS {
                        self.reconciles.remove(&ResultLabels::of(version, result));
                    }
                }
                keep
            });
        self.host_call_labels
            .lock()
            .expect("metrics lock")
            .retain(|labels| {
                let keep = labels.module != module;
                if !keep {
                    self.host_calls.remove(labels);
                }
                keep
            });
    }

    /// Ready: the initial modules loaded and every controller's cache
    /// synced, and not shutting down.
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Relaxed)
            && !self.is_stopping()
            && self
                .controllers
                .lock()
                .expect("metrics lock")
                .values()
                .all(|synced| *synced)
    }
}

/// Every `result` of `rekon_reconciles_total` (and `kind` of
/// `rekon_guest_failures_total`).
/// The queue priorities, as labelled (the queue's `Priority::label`).
pub(crate) const PRIORITIES: [&str; 3] = ["high", "normal", "low"];

const RESULTS: [&str; 9] = [
    "done",
    "requeue",
    "error",
    "panic",
    "timeout",
    "out_of_memory",
    "stack_overflow",
    "trap",
    "instantiate",
];

#[cfg(test)]
mod tests;
