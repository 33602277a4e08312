//! Controller: one per module, informer changes in, reconciles out.
//! May call: runtime, informer, cluster (fenced), ha, telemetry.
//!
//! Changes become requests for primary objects (`triggers`), queued
//! (`queue`) and dispatched into the module on a fresh instance
//! (`reconcile`), counted (`metrics`); `resync` queues every primary
//! again now and then, if the module asks.

pub(crate) mod metrics;
mod primaries;
pub(crate) mod queue;
pub(crate) mod resync;
pub(crate) mod triggers;
mod worker;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::cluster::Cluster;
use crate::cluster::fence::Fenced;
use crate::contract::{Gvk, Predicate, Reason, Verbs};
use crate::discovery::ResolveError;
use crate::dispatch::{Dispatch, Dispatcher};
use crate::ha::{Leaders, Leadership};
use crate::informer::{Change, Informer, Informers};
use crate::telemetry::{Metrics, ModuleLabel};
pub(crate) use primaries::Primaries;
use queue::{Priority, QueueConfig, WorkQueue};
use triggers::{Primary, Role, change_reason, keys, passes};
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
        match subscribe(&module, &shared.informers).await {
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
    // This module's writes are refused whenever it does not lead here.
    let leadership = shared.leaders.for_module(&name);
    let worker = Worker {
        cluster: Arc::new(Fenced {
            inner: shared.cluster.clone(),
            leadership: leadership.clone(),
            module: name.clone(),
            metrics: shared.metrics.clone(),
        }),
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
            tokio::spawn(feed(informer, source, worker.clone(), start.reloaded))
        })
        .collect();
    worker.primary.wait_ready().await;
    let resync = resync_task(&worker)
        .into_iter()
        .chain([shadow_task(&worker)]);
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

type Subscription = (Arc<Informer>, Source);

/// One kind a controller follows: the informer it needs (kind and label
/// selector), its role, and which of its updates count.
#[derive(Clone, Debug)]
pub(crate) struct Source {
    pub kind: Gvk,
    pub selector: Option<String>,
    pub role: Role,
    pub predicates: Vec<Predicate>,
    /// The namespaces it is followed in (every one when empty); ignored
    /// for cluster-scoped kinds.
    pub namespaces: Vec<String>,
}

/// The informers of the module's primary, owned and watched kinds.
async fn subscribe(
    module: &Dispatcher,
    informers: &Informers,
) -> Result<Vec<Subscription>, ResolveError> {
    let mut subscriptions: Vec<Subscription> = Vec::new();
    for source in wanted(module.manifest()) {
        let namespaces: Vec<Option<&str>> = if source.namespaces.is_empty() {
            vec![None]
        } else {
            source.namespaces.iter().map(|n| Some(n.as_str())).collect()
        };
        let mut mine: Vec<Arc<Informer>> = Vec::new();
        for namespace in namespaces {
            let selector = source.selector.as_deref();
            // A watched kind is mapped to primaries by its metadata alone:
            // its objects are cached as metadata, unless the module may
            // read them. Then the informer that queues its reconciles is
            // the one its reads are served from, so a reconcile never
            // reads a cache older than the event that queued it.
            let informer = match source.role {
                Role::Watched(_) if !reads(module.manifest(), &source.kind) => {
                    informers
                        .metadata_informer(&source.kind, selector, namespace)
                        .await?
                }
                _ => {
                    informers
                        .informer(&source.kind, selector, namespace)
                        .await?
                }
            };
            // A cluster-scoped kind has one informer whatever the namespaces.
            if !mine.iter().any(|m| Arc::ptr_eq(m, &informer)) {
                mine.push(informer);
            }
        }
        subscriptions.extend(mine.into_iter().map(|i| (i, source.clone())));
    }
    Ok(subscriptions)
}

/// Whether a manifest lets its module read objects of `kind`.
fn reads(manifest: &crate::contract::Manifest, kind: &Gvk) -> bool {
    manifest.permissions.iter().any(|p| {
        p.kind.group == kind.group
            && p.kind.kind == kind.kind
            && p.verbs.intersects(Verbs::GET | Verbs::LIST)
    })
}

/// The kinds a manifest follows, primary first.
pub(crate) fn wanted(manifest: &crate::contract::Manifest) -> Vec<Source> {
    let mut wanted = vec![Source {
        kind: manifest.primary.clone(),
        selector: manifest.primary_selector.clone(),
        role: Role::Primary,
        predicates: manifest.primary_predicates.clone(),
        namespaces: manifest.primary_namespaces.clone(),
    }];
    for owned in &manifest.owns {
        wanted.push(Source {
            kind: owned.kind.clone(),
            selector: None,
            role: Role::Owned,
            predicates: owned.predicates.clone(),
            namespaces: manifest.primary_namespaces.clone(),
        });
    }
    for watch in &manifest.watches {
        wanted.push(Source {
            kind: watch.kind.clone(),
            selector: watch.label_selector.clone(),
            role: Role::Watched(watch.mapping.clone()),
            predicates: watch.predicates.clone(),
            namespaces: manifest.primary_namespaces.clone(),
        });
    }
    wanted
}

/// Feeds one informer's objects and changes into the queue.
async fn feed(informer: Arc<Informer>, source: Source, worker: Worker, reloaded: bool) {
    let role = source.role;
    let primary = &worker.primary;
    // Once the first list is in: subscribe, then take what the cache holds;
    // later changes arrive on the channel (one made between the two is
    // seen twice, and merged by the queue while pending). Subscribing only
    // now keeps the first list's burst of changes out of the channel: the
    // list below covers it, and the same object would run twice otherwise.
    informer.wait_ready().await;
    primary.wait_ready().await;
    let mut changes = informer.subscribe();
    let primary_kind = worker.dispatch.serving().manifest().primary.clone();
    let view = Primary {
        kind: &primary_kind,
        namespaced: primary.namespaced(),
    };
    let all_primaries = || {
        primary
            .list()
            .iter()
            .map(|p| (p.namespace().map(str::to_string), p.name().to_string()))
            .collect()
    };
    // Every primary is reconciled once at start: `added`, or
    // `module-reloaded` for a new version of a running module. The
    // primary's feeder queues them all; the others queue only the
    // primaries their objects point to that are gone (their `deleted`
    // reconcile), so nothing runs twice. The first list is a backlog: low
    // priority, after what users cause.
    let initial = if reloaded {
        Reason::ModuleReloaded
    } else {
        Reason::Added
    };
    let only_missing_primaries = !matches!(role, Role::Primary);
    for object in informer.list(None) {
        for key in keys(&role, &object, &view, all_primaries) {
            if only_missing_primaries && primary.get(key.0.as_deref(), &key.1).is_some() {
                continue;
            }
            worker.queue.add_with(key, initial, Priority::Low);
        }
    }
    loop {
        let (object, reason) = match changes.recv().await {
            Some(Change::Added(object)) => (object, change_reason(&role, Reason::Added)),
            Some(Change::Updated(old, object)) => {
                if !passes(&source.predicates, &old, &object) {
                    continue;
                }
                (object, change_reason(&role, Reason::Updated))
            }
            Some(Change::Deleted(object)) => (object, change_reason(&role, Reason::Deleted)),
            None => return,
        };
        for key in keys(&role, &object, &view, all_primaries) {
            worker.queue.add_with(key, reason, Priority::High);
        }
    }
}
