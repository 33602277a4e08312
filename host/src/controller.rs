//! One controller per module: turns informer changes into requests for
//! primary objects, queues them, and dispatches each into the module on a
//! fresh instance.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast::error::RecvError;
use tokio::sync::watch;
use tracing::Instrument as _;

use crate::bindings::{
    Action, ApiError, Cluster, EventType, Gvk, Mapping, ObjectRef, PatchType, Propagation, Reason,
    Request, display_kind,
};
use crate::dispatch::Dispatcher;
use crate::informer::{Cached, Change, Informer, Informers};
use crate::leader::Leadership;
use crate::module::DispatchOptions;
use crate::queue::{Lease, Outcome, QueueConfig, WorkQueue};
use crate::scaleout::ModuleLeases;
use crate::telemetry::{CallLabels, InformerLabel, KindLabels, Metrics, ModuleLabel, ResultLabels};

/// A primary object: namespace (none when cluster-scoped) and name.
pub(crate) type Key = (Option<String>, String);

/// How long to wait before trying again to resolve a module's kinds.
const RESOLVE_RETRY: Duration = Duration::from_secs(2);

/// Settings of one module's controller.
#[derive(Clone, Debug)]
pub(crate) struct ControllerOptions {
    /// Reconciles at once; `None` takes the manifest's hint (default 1).
    pub concurrency: Option<usize>,
    /// Backoff of failed reconciles.
    pub backoff_base: Duration,
    /// Cap of the backoff.
    pub backoff_max: Duration,
    /// A new version of a running module: its first pass over the objects
    /// says `module-reloaded`.
    pub reloaded: bool,
}

impl Default for ControllerOptions {
    fn default() -> Self {
        ControllerOptions {
            concurrency: None,
            backoff_base: Duration::from_millis(5),
            backoff_max: Duration::from_secs(1000),
            reloaded: false,
        }
    }
}

/// How an informer's changes map to primary keys.
#[derive(Clone, Debug)]
enum Role {
    Primary,
    Owned,
    Watched(Mapping),
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

/// What decides whether a module reconciles on this replica.
#[derive(Clone)]
pub(crate) enum Leaders {
    /// One leadership for the whole host (always leading without election).
    Host(Leadership),
    /// One Lease per module, spread across the replicas (scale-out mode).
    Modules(ModuleLeases),
}

impl Leaders {
    /// The leadership `module` reconciles under.
    pub fn for_module(&self, module: &str) -> Leadership {
        match self {
            Leaders::Host(leadership) => leadership.clone(),
            Leaders::Modules(leases) => leases.for_module(module),
        }
    }

    /// Whether this replica speaks for `module` (reports about it): it
    /// leads it, or, in scale-out mode, nobody serves it (`None`).
    pub fn speaks_for(&self, module: Option<&str>) -> bool {
        match (self, module) {
            (Leaders::Host(leadership), _) => leadership.is_leading(),
            (Leaders::Modules(leases), Some(module)) => leases.leads(module),
            (Leaders::Modules(_), None) => true,
        }
    }

    /// `module` is unloaded: in scale-out mode, its Lease is given up.
    pub fn unload(&self, module: &str) {
        if let Leaders::Modules(leases) = self {
            leases.unload(module);
        }
    }
}

/// Runs a module's controller until `stop` turns true. Its informers sync
/// whether or not this replica leads (a standby keeps warm caches); it
/// reconciles only while leading.
pub(crate) async fn run(
    module: Dispatcher,
    shared: Shared,
    options: ControllerOptions,
    mut stop: watch::Receiver<bool>,
) {
    let informers = shared.informers.clone();
    let manifest = module.manifest().clone();
    let name = manifest.name.clone();
    // This module's writes are refused whenever it does not lead here.
    let leadership = shared.leaders.for_module(&name);
    let shared = Shared {
        cluster: Arc::new(Fenced {
            inner: shared.cluster.clone(),
            leadership: leadership.clone(),
            module: name.clone(),
            metrics: shared.metrics.clone(),
        }),
        ..shared
    };
    // Resolve and start the informers; a kind that is not served yet (a
    // CRD still to come) is retried without restarting anything.
    let subscriptions = loop {
        match subscribe(&module, &informers).await {
            Ok(subscriptions) => break subscriptions,
            Err(error) => {
                tracing::error!(module = %name, error = %error, "cannot watch the module's kinds; retrying");
                tokio::select! {
                    _ = tokio::time::sleep(RESOLVE_RETRY) => continue,
                    _ = stop.wait_for(|s| *s) => return,
                }
            }
        }
    };
    let primary = subscriptions[0].0.clone();
    let concurrency = options
        .concurrency
        .or(manifest.max_concurrency.map(|c| c as usize))
        .unwrap_or(1)
        .max(1);
    let queue: WorkQueue<Key, Reason> = WorkQueue::new(QueueConfig {
        concurrency,
        backoff_base: options.backoff_base,
        backoff_max: options.backoff_max,
    });

    let informers_used: Vec<Arc<Informer>> = subscriptions.iter().map(|s| s.0.clone()).collect();
    let mut feeders = Vec::new();
    for (informer, role) in subscriptions {
        feeders.push(tokio::spawn(feed(
            informer,
            role,
            primary.clone(),
            manifest.primary.clone(),
            queue.clone(),
            options.reloaded,
        )));
    }
    primary.wait_ready().await;
    shared.metrics.controller_synced();
    tracing::info!(module = %name, objects = primary.len(), concurrency, "controller running");

    let label = ModuleLabel {
        module: name.clone(),
    };
    let mut leading = leadership.subscribe();
    // A closed channel (its election ended) never changes again.
    let mut watching = true;
    let leader_gauge = shared.metrics.module_leader.get_or_create(&label).clone();
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let mut workers = tokio::task::JoinSet::new();
    loop {
        let lead = leadership.is_leading();
        leader_gauge.set(i64::from(lead));
        tokio::select! {
            lease = queue.next(), if lead => {
                let Some(lease) = lease else { break };
                workers.spawn(reconcile_one(
                    module.clone(),
                    shared.clone(),
                    primary.clone(),
                    queue.clone(),
                    lease,
                ));
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
                shared.metrics.queue_depth.get_or_create(&label).set(queue.len() as i64);
                for informer in &informers_used {
                    shared
                        .metrics
                        .informer_objects
                        .get_or_create(&InformerLabel { kind: display_kind(&informer.gvk) })
                        .set(informer.len() as i64);
                }
            }
            _ = stop.wait_for(|s| *s) => break,
            Some(_) = workers.join_next(), if !workers.is_empty() => {}
        }
    }
    queue.shutdown();
    for feeder in feeders {
        feeder.abort();
    }
    // In-flight reconciles finish on the version they started with.
    while workers.join_next().await.is_some() {}
    shared.metrics.module_leader.remove(&label);
    tracing::info!(module = %name, "controller stopped");
}

type Subscription = (Arc<Informer>, Role);

async fn subscribe(
    module: &Dispatcher,
    informers: &Informers,
) -> Result<Vec<Subscription>, crate::informer::ResolveError> {
    let manifest = module.manifest();
    let mut wanted: Vec<(Gvk, Option<String>, Role)> =
        vec![(manifest.primary.clone(), None, Role::Primary)];
    for kind in &manifest.owns {
        wanted.push((kind.clone(), None, Role::Owned));
    }
    for watch in &manifest.watches {
        wanted.push((
            watch.kind.clone(),
            watch.label_selector.clone(),
            Role::Watched(watch.mapping.clone()),
        ));
    }
    let mut subscriptions = Vec::new();
    for (kind, selector, role) in wanted {
        let informer = informers.informer(&kind, selector.as_deref()).await?;
        subscriptions.push((informer, role));
    }
    Ok(subscriptions)
}

/// Feeds one informer's objects and changes into the queue.
async fn feed(
    informer: Arc<Informer>,
    role: Role,
    primary: Arc<Informer>,
    primary_kind: Gvk,
    queue: WorkQueue<Key, Reason>,
    reloaded: bool,
) {
    // Once the first list is in: subscribe, then take what the cache holds;
    // later changes arrive on the channel (one made between the two is
    // seen twice, and merged by the queue while pending). Subscribing only
    // now keeps the first list's burst of changes out of the channel: the
    // list below covers it, and the same object would run twice otherwise.
    informer.wait_ready().await;
    primary.wait_ready().await;
    let mut changes = informer.subscribe();
    let enqueue_all = |reason, only_missing_primaries: bool| {
        for object in informer.list(None) {
            for key in keys(&role, &object, &primary, &primary_kind) {
                if only_missing_primaries && primary.get(key.0.as_deref(), &key.1).is_some() {
                    continue;
                }
                queue.add(key, reason);
            }
        }
    };
    // Every primary is reconciled once at start: `added`, or
    // `module-reloaded` for a new version of a running module. The
    // primary's feeder queues them all; the others queue only the
    // primaries their objects point to that are gone (their `deleted`
    // reconcile), so nothing runs twice.
    let initial = if reloaded {
        Reason::ModuleReloaded
    } else {
        Reason::Added
    };
    enqueue_all(initial, !matches!(role, Role::Primary));
    loop {
        let (object, reason) = match changes.recv().await {
            Ok(Change::Added(object)) => (object, change_reason(&role, Reason::Added)),
            Ok(Change::Updated(object)) => (object, change_reason(&role, Reason::Updated)),
            Ok(Change::Deleted(object)) => (object, change_reason(&role, Reason::Deleted)),
            Err(RecvError::Lagged(missed)) => {
                tracing::warn!(kind = %display_kind(&informer.gvk), missed, "fell behind the informer; looking at every object again");
                enqueue_all(Reason::Resync, false);
                continue;
            }
            Err(RecvError::Closed) => return,
        };
        for key in keys(&role, &object, &primary, &primary_kind) {
            queue.add(key, reason);
        }
    }
}

/// Why a change queues its primaries: the change itself for the primary
/// kind, `owned-changed` or `watched-changed` for the others.
fn change_reason(role: &Role, primary_reason: Reason) -> Reason {
    match role {
        Role::Primary => primary_reason,
        Role::Owned => Reason::OwnedChanged,
        Role::Watched(_) => Reason::WatchedChanged,
    }
}

/// Counts one reconcile.
fn record_metrics(
    metrics: &Metrics,
    module: &str,
    waited: Duration,
    outcome: &crate::module::Outcome,
) {
    let label = ModuleLabel {
        module: module.to_string(),
    };
    metrics
        .queue_wait
        .get_or_create(&label)
        .observe(waited.as_secs_f64());
    metrics
        .reconcile_duration
        .get_or_create(&label)
        .observe(outcome.elapsed.as_secs_f64());
    let result = match &outcome.result {
        Ok(Action::Done) => "done",
        Ok(Action::RequeueAfter(_)) => "requeue",
        Err(error) => error.metric_label(),
    };
    metrics
        .reconciles
        .get_or_create(&ResultLabels {
            module: module.to_string(),
            result: result.to_string(),
        })
        .inc();
    if let Err(error) = &outcome.result {
        if error.retry() {
            metrics.retries.get_or_create(&label).inc();
        }
        if !matches!(error, crate::module::ReconcileError::Guest { .. }) {
            metrics
                .guest_failures
                .get_or_create(&KindLabels {
                    module: module.to_string(),
                    kind: error.metric_label().to_string(),
                })
                .inc();
        }
    }
    for (verb, result) in &outcome.host_calls {
        metrics
            .host_calls
            .get_or_create(&CallLabels {
                module: module.to_string(),
                verb: (*verb).to_string(),
                result: result.clone(),
            })
            .inc();
    }
}

/// A reason as the WIT names it, for logs.
fn reason_name(reason: Reason) -> &'static str {
    match reason {
        Reason::Added => "added",
        Reason::Updated => "updated",
        Reason::Deleted => "deleted",
        Reason::Finalizing => "finalizing",
        Reason::OwnedChanged => "owned-changed",
        Reason::WatchedChanged => "watched-changed",
        Reason::Requeued => "requeued",
        Reason::Retry => "retry",
        Reason::Resync => "resync",
        Reason::ModuleReloaded => "module-reloaded",
        Reason::Manual => "manual",
    }
}

/// The primary objects a change concerns.
fn keys(role: &Role, object: &Cached, primary: &Informer, primary_kind: &Gvk) -> Vec<Key> {
    let namespaced = primary.resolved.namespaced;
    let key = |namespace: Option<&str>, name: &str| -> Key {
        (
            namespace.filter(|_| namespaced).map(str::to_string),
            name.to_string(),
        )
    };
    let by_owner = || {
        object
            .owners
            .iter()
            .filter(|o| {
                o.controller
                    && o.kind == primary_kind.kind
                    && crate::bindings::split_api_version(&o.api_version).0 == primary_kind.group
            })
            .map(|o| key(object.namespace(), &o.name))
            .collect()
    };
    match role {
        Role::Primary => vec![key(object.namespace(), object.name())],
        Role::Owned | Role::Watched(Mapping::OwnerReference) => by_owner(),
        Role::Watched(Mapping::Label(label)) => match object.label(label) {
            Some(value) => match value.split_once('/') {
                Some((ns, name)) => vec![key(Some(ns), name)],
                None => vec![key(object.namespace(), value)],
            },
            None => Vec::new(),
        },
        Role::Watched(Mapping::SameName) => {
            vec![key(object.namespace(), object.name())]
        }
        Role::Watched(Mapping::AllPrimaries) => primary
            .list(None)
            .iter()
            .map(|p| key(p.namespace(), p.name()))
            .collect(),
    }
}

/// Reconciles one key and tells the queue what became of it.
async fn reconcile_one(
    module: Dispatcher,
    shared: Shared,
    primary: Arc<Informer>,
    queue: WorkQueue<Key, Reason>,
    lease: Lease<Key, Reason>,
) {
    let cluster = shared.cluster.clone();
    let waited = lease.queued_at.elapsed();
    module.observe_queue_latency(waited);
    let (namespace, name) = lease.key.clone();
    let manifest = module.manifest();
    let cached = primary.get(namespace.as_deref(), &name);
    let reason = match &cached {
        None => Reason::Deleted,
        Some(object)
            if object.deleting
                && manifest
                    .finalizer
                    .as_ref()
                    .is_some_and(|f| object.has_finalizer(f)) =>
        {
            Reason::Finalizing
        }
        // Deleted, then created again before its reconcile.
        Some(_) if lease.reason == Reason::Deleted => Reason::Added,
        Some(_) => lease.reason,
    };
    let target = ObjectRef {
        kind: manifest.primary.clone(),
        namespace: namespace.clone(),
        name: name.clone(),
    };
    let request = Request {
        target: target.clone(),
        object: cached.as_ref().map(|o| o.json.to_string()),
        reason,
        attempt: lease.attempt,
    };
    let span = tracing::info_span!(
        "reconcile",
        module = %manifest.name,
        version = %manifest.version,
        digest = %module.short_digest(),
        namespace = namespace.as_deref().unwrap_or(""),
        // Not `name`: JSON logs already use that key for the span's name.
        object = %name,
        reason = reason_name(reason),
        attempt = lease.attempt,
    );
    let component = format!("rekon-{}", manifest.name);
    let queue_outcome = async {
        let outcome = module
            .reconcile(cluster.clone(), &request, DispatchOptions::default())
            .await;
        record_metrics(&shared.metrics, &manifest.name, waited, &outcome);
        if !outcome.denied.is_empty() && cached.is_some() {
            // Once per reconcile, however many calls were refused.
            let message = format!(
                "{} call(s) denied: {}",
                outcome.denied.len(),
                outcome.denied[0]
            );
            let _ = cluster
                .record_event(
                    &target,
                    EventType::Warning,
                    "PermissionDenied",
                    &message,
                    &component,
                )
                .await;
        }
        let elapsed_us = outcome.elapsed.as_micros() as u64;
        match &outcome.result {
            Ok(Action::Done) => {
                tracing::info!(elapsed_us, "reconciled");
                Outcome::Done
            }
            Ok(Action::RequeueAfter(ms)) => {
                tracing::info!(elapsed_us, requeue_after_ms = ms, "reconciled");
                Outcome::RequeueAfter(Duration::from_millis(*ms))
            }
            Err(error) => {
                let message = failure_message(error, outcome.failed_call.as_deref());
                tracing::warn!(
                    error = %error,
                    call = outcome.failed_call.as_deref(),
                    kind = error.metric_label(),
                    retry = error.retry(),
                    "reconcile failed"
                );
                if cached.is_some() {
                    let _ = cluster
                        .record_event(
                            &target,
                            EventType::Warning,
                            "ReconcileFailed",
                            &message,
                            &component,
                        )
                        .await;
                }
                Outcome::Failed {
                    retry: error.retry(),
                }
            }
        }
    }
    .instrument(span)
    .await;
    // The next run of this key, if the outcome schedules one, says why.
    let mut lease = lease;
    match queue_outcome {
        Outcome::RequeueAfter(_) => lease.reason = Reason::Requeued,
        Outcome::Failed { retry: true } => lease.reason = Reason::Retry,
        _ => {}
    }
    queue.finish(lease, queue_outcome);
}

/// The note of a `ReconcileFailed` Event: what failed, naming the host
/// call the failure is put down to when there is one.
fn failure_message(error: &crate::module::ReconcileError, call: Option<&str>) -> String {
    match (error, call) {
        (crate::module::ReconcileError::Guest { message, .. }, Some(call)) => {
            format!("host call {call}; the module said: {message}")
        }
        (crate::module::ReconcileError::Guest { message, .. }, None) => {
            format!("the module failed: {message}")
        }
        (other, _) => other.to_string(),
    }
}

/// A module's view of the cluster: reads pass, writes are refused unless
/// the module leads on this replica (so a replica that lost, or could not
/// renew, a Lease never writes alongside the new holder).
struct Fenced {
    inner: Arc<dyn Cluster>,
    leadership: Leadership,
    module: String,
    metrics: Arc<Metrics>,
}

impl Fenced {
    fn check(&self) -> Result<(), ApiError> {
        if self.leadership.is_leading() {
            Ok(())
        } else {
            Err(crate::bindings::api_error(
                503,
                "ServiceUnavailable",
                &format!(
                    "this replica does not lead module {}: it does not write to the cluster",
                    self.module
                ),
            ))
        }
    }
}

#[async_trait::async_trait]
impl Cluster for Fenced {
    async fn get(&self, target: &ObjectRef) -> Result<String, ApiError> {
        self.inner.get(target).await
    }

    async fn list(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        label_selector: Option<&str>,
    ) -> Result<Vec<String>, ApiError> {
        self.inner.list(kind, namespace, label_selector).await
    }

    async fn create(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        object: &str,
        field_manager: &str,
    ) -> Result<String, ApiError> {
        self.check()?;
        self.inner
            .create(kind, namespace, object, field_manager)
            .await
    }

    async fn replace(
        &self,
        target: &ObjectRef,
        object: &str,
        status: bool,
        field_manager: &str,
    ) -> Result<String, ApiError> {
        self.check()?;
        self.inner
            .replace(target, object, status, field_manager)
            .await
    }

    async fn patch(
        &self,
        target: &ObjectRef,
        patch_type: &PatchType,
        body: &str,
        status: bool,
        field_manager: &str,
    ) -> Result<String, ApiError> {
        self.check()?;
        self.inner
            .patch(target, patch_type, body, status, field_manager)
            .await
    }

    async fn delete(
        &self,
        target: &ObjectRef,
        propagation: Option<Propagation>,
    ) -> Result<(), ApiError> {
        self.check()?;
        self.inner.delete(target, propagation).await
    }

    async fn record_event(
        &self,
        regarding: &ObjectRef,
        event_type: EventType,
        reason: &str,
        message: &str,
        component: &str,
    ) -> Result<(), ApiError> {
        // Events are best effort: one recorded without the lead is dropped.
        if self.check().is_err() {
            tracing::debug!(module = %self.module, reason, "event dropped: this replica does not lead the module");
            crate::events::dropped_not_leading(&self.metrics);
            return Ok(());
        }
        self.inner
            .record_event(regarding, event_type, reason, message, component)
            .await
    }
}
