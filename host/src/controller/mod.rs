//! Controller: one per module, informer changes in, reconciles out.
//! May call: runtime, informer, cluster (fenced), ha, telemetry.
//!
//! Changes become requests for primary objects (`triggers`), queued
//! (`queue`) and dispatched into the module on a fresh instance
//! (`reconcile`), counted (`metrics`); `resync` queues every primary
//! again now and then, if the module asks. A sharded module's controller
//! (`sharding`) caches, queues and writes for the objects in this
//! replica's ranges only.

mod feed;
pub(crate) mod metrics;
mod primaries;
pub(crate) mod queue;
pub(crate) mod resync;
mod sharding;
mod sources;
pub(crate) mod triggers;
mod worker;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::cluster::Cluster;
use crate::cluster::fence::Fenced;
use crate::config::ShardBy;
use crate::contract::Reason;
use crate::dispatch::{Dispatch, Dispatcher};
use crate::ha::{Leaders, Leadership, Shards};
use crate::informer::{Informer, Informers};
use crate::telemetry::{Metrics, ModuleLabel};
use feed::feed;
pub(crate) use primaries::Primaries;
use queue::{Priority, QueueConfig, WorkQueue};
use sharding::Sharded;
use sources::subscribe;
pub(crate) use sources::wanted;
use triggers::Role;
use worker::Worker;

/// How long to wait before trying again to resolve a module's kinds.
const RESOLVE_RETRY: Duration = Duration::from_secs(2);

/// How each module's controller runs: how many reconciles at once, and
/// how failed reconciles are retried. `Default` gives the values `rekon
/// run` uses; every setter is chainable.
#[derive(Clone, Debug)]
pub struct ControllerConfig {
    /// Reconciles at once per module; `None` takes each module's hint
    /// (`max-concurrency`), else 1. The operator's configuration file may
    /// set it per module.
    pub concurrency: Option<usize>,
    /// Delay before the first retry of a failed reconcile (default 5 ms);
    /// each further failure in a row doubles it.
    pub backoff_base: Duration,
    /// Longest retry delay (default 1000 s).
    pub backoff_max: Duration,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        ControllerConfig {
            concurrency: None,
            backoff_base: Duration::from_millis(5),
            backoff_max: Duration::from_secs(1000),
        }
    }
}

impl ControllerConfig {
    /// Sets how many reconciles run at once per module, overriding the
    /// modules' hints (0 is taken as 1).
    #[must_use]
    pub fn concurrency(mut self, concurrency: usize) -> Self {
        self.concurrency = Some(concurrency.max(1));
        self
    }

    /// Sets the retry backoff: `base` doubling up to `max`.
    #[must_use]
    pub fn backoff(mut self, base: Duration, max: Duration) -> Self {
        self.backoff_base = base;
        self.backoff_max = max;
        self
    }
}

/// What every controller of a host shares.
#[derive(Clone)]
pub(crate) struct Shared {
    pub informers: Arc<Informers>,
    /// Host calls: the informer caches and the API server (each controller
    /// fences the writes by its module's leadership).
    pub cluster: Arc<dyn Cluster>,
    pub leaders: Leaders,
    /// The ranges of sharded modules on this replica.
    pub shards: Shards,
    pub metrics: Arc<Metrics>,
}

/// One controller's start: its settings, whether it takes over from a
/// previous version of the module, and the informers that version held
/// (kept running until this controller holds them itself).
pub(crate) struct Start {
    pub config: ControllerConfig,
    /// A new version of a running module: its first pass over the objects
    /// says `module-reloaded`.
    pub reloaded: bool,
    pub handed_over: Vec<Arc<Informer>>,
    /// The module's objects are spread over the replicas by this.
    pub sharding: Option<ShardBy>,
}

/// Runs a module's controller until `stop` turns true. Its informers sync
/// whether or not this replica leads (a standby keeps warm caches); it
/// reconciles only while leading.
pub(crate) async fn run(
    dispatch: Dispatch,
    shared: Shared,
    start: Start,
    mut stop: watch::Receiver<bool>,
) {
    let module = dispatch.serving().clone();
    let name = module.name().to_string();
    shared.metrics.controller_started(&name);
    // Resolve and start the informers; a kind that is not served yet (a
    // CRD still to come) is retried without restarting anything.
    let subscriptions = loop {
        let sharding = start.sharding.map(|by| (by, &shared.shards));
        match subscribe(&module, &shared.informers, sharding).await {
            Ok(subscriptions) => break subscriptions,
            Err(error) => {
                tracing::error!(module = %name, error = %error, "cannot watch the module's kinds; retrying");
                tokio::select! {
                    _ = tokio::time::sleep(RESOLVE_RETRY) => continue,
                    _ = stop.wait_for(|s| *s) => {
                        shared.metrics.controller_stopped(&name);
                        return;
                    }
                }
            }
        }
    };
    // The informers are held now: the previous version's can go.
    drop(start.handed_over);
    // This module's writes are refused whenever it does not lead here (a
    // sharded one: whenever the object's range is not held here).
    let leadership = match start.sharding {
        Some(_) => shared.shards.leadership(),
        None => shared.leaders.for_module(&name),
    };
    let sharded = start.sharding.map(|by| {
        tracing::info!(module = %name, by = ?by, "sharded: this replica reconciles the objects of its ranges");
        Sharded::new(
            by,
            shared.shards.clone(),
            shared.cluster.clone(),
            leadership.clone(),
        )
    });
    let worker = Worker {
        cluster: Arc::new(Fenced {
            inner: shared.cluster.clone(),
            leadership: leadership.clone(),
            module: name.clone(),
            metrics: shared.metrics.clone(),
            shard: None,
        }),
        sharded,
        primary: Primaries::new(
            subscriptions
                .iter()
                .filter(|(_, source)| matches!(source.role, Role::Primary))
                .map(|(informer, _)| informer.clone())
                .collect(),
        ),
        queue: WorkQueue::new(queue_config(&module, &start.config)),
        metrics: shared.metrics.clone(),
        dispatch,
    };
    let informers: Vec<Arc<Informer>> = subscriptions.iter().map(|s| s.0.clone()).collect();
    let feeders: Vec<_> = subscriptions
        .into_iter()
        .map(|(informer, source)| {
            tokio::spawn(feed(
                informer,
                source,
                worker.clone(),
                start.reloaded,
                shared.informers.own_writes(),
            ))
        })
        .collect();
    worker.primary.wait_ready().await;
    let gained = worker.sharded.clone().map(|sharded| {
        tokio::spawn(sharding::queue_gained(
            sharded,
            worker.primary.clone(),
            worker.queue.clone(),
        ))
    });
    let resync = resync_task(&worker)
        .into_iter()
        .chain([shadow_task(&worker)])
        .chain(gained);
    shared.metrics.controller_synced(&name);
    tracing::info!(module = %name, objects = worker.primary.len(), concurrency = worker.queue.concurrency(), "controller running");
    work(&worker, &leadership, &informers, stop).await;
    for feeder in feeders.into_iter().chain(resync) {
        feeder.abort();
    }
    metrics::forget_gauges(&shared.metrics, &name);
    shared.metrics.controller_stopped(&name);
    tracing::info!(module = %name, "controller stopped");
}

/// Queues every primary with reason `resync`, at low priority, every
/// (jittered) resync period of the module, if it has one.
fn resync_task(worker: &Worker) -> Option<tokio::task::JoinHandle<()>> {
    let period = Duration::from_millis(worker.dispatch.serving().manifest().resync_period_ms?);
    let worker = worker.clone();
    Some(tokio::spawn(resync::every(
        period,
        crate::names::random_unit,
        move || queue_every_primary(&worker),
    )))
}

/// Queues every primary with reason `resync`, at low priority.
fn queue_every_primary(worker: &Worker) {
    for object in worker.primary.list() {
        let key = (
            object.namespace().map(str::to_string),
            object.name().to_string(),
        );
        if let Some(sharded) = &worker.sharded
            && !sharded.admits(&key, &Role::Primary, &object, &worker.primary)
        {
            continue;
        }
        worker.queue.add_with(key, Reason::Resync, Priority::Low);
    }
}

/// Queues every primary once (low priority) whenever a shadow version
/// arrives, so that the shadow compares each object, not only those that
/// change next; and when a canary gives objects back, so that the serving
/// version takes each one back.
fn shadow_task(worker: &Worker) -> tokio::task::JoinHandle<()> {
    let worker = worker.clone();
    let mut arrivals = worker.dispatch.arrivals();
    tokio::spawn(async move {
        // A shadow already there when this controller starts counts too.
        let mut pending = worker.dispatch.shadowed();
        loop {
            if pending {
                queue_every_primary(&worker);
            }
            if arrivals.changed().await.is_err() {
                return;
            }
            pending = true;
        }
    })
}

/// The queue's settings for `module`.
fn queue_config(module: &Dispatcher, config: &ControllerConfig) -> QueueConfig {
    let concurrency = config
        .concurrency
        .or(module.manifest().max_concurrency.map(|c| c as usize))
        .unwrap_or(1)
        .max(1);
    QueueConfig {
        concurrency,
        backoff_base: config.backoff_base,
        backoff_max: config.backoff_max,
        ..QueueConfig::default()
    }
}

/// Takes keys from the queue while leading and reconciles them, until
/// `stop`; then lets the reconciles in flight finish.
async fn work(
    worker: &Worker,
    leadership: &Leadership,
    informers: &[Arc<Informer>],
    mut stop: watch::Receiver<bool>,
) {
    let name = worker.dispatch.serving().name().to_string();
    let label = ModuleLabel {
        module: name.clone(),
    };
    let leader_gauge = worker.metrics.module_leader.get_or_create_owned(&label);
    let mut leading = leadership.subscribe();
    // A closed channel (its election ended) never changes again.
    let mut watching = true;
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let mut workers = tokio::task::JoinSet::new();
    loop {
        let lead = leadership.is_leading();
        leader_gauge.set(i64::from(lead));
        tokio::select! {
            ticket = worker.queue.next(), if lead => {
                let Some(ticket) = ticket else { break };
                workers.spawn(worker.clone().reconcile(ticket));
            }
            changed = leading.changed(), if watching => {
                // Writes of reconciles in flight are refused once leadership
                // is lost; they fail and are retried when leading again.
                if changed.is_err() {
                    watching = false;
                } else if !*leading.borrow() {
                    tracing::info!(module = %name, "not leading: reconciles paused");
                }
            }
            _ = tick.tick() => {
                metrics::record_gauges(&worker.metrics, &name, worker.queue.depth_by_priority(), informers);
            }
            _ = stop.wait_for(|s| *s) => break,
            Some(_) = workers.join_next(), if !workers.is_empty() => {}
        }
    }
    worker.queue.shutdown();
    // In-flight reconciles finish on the version they started with.
    while workers.join_next().await.is_some() {}
}
