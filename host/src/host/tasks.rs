//! The tasks a started host runs beside its controllers: the metrics
//! port, the module sources, the first load, the loader's driver, and the
//! leader election.

use std::sync::Arc;

use futures::FutureExt as _;
use tokio::sync::{mpsc, watch};

use super::HostError;
use super::supervisor::Supervisor;
use crate::controller::Shared;
use crate::ha::leader::Elector;
use crate::ha::scaleout::{self, ModuleLeases};
use crate::ha::{LeaderConfig, Leaders, Leadership, Shards};
use crate::loader::{Decision, Loader};
use crate::rollout::Admin;
use crate::source::SourceEvent;
use crate::telemetry::Metrics;

/// Serves `/metrics`, `/healthz` and `/readyz` on `addr`.
pub(super) async fn serve_telemetry(
    addr: std::net::SocketAddr,
    metrics: Arc<Metrics>,
    admin: Arc<Admin>,
) -> Result<tokio::task::JoinHandle<()>, HostError> {
    let (bound, task) = crate::telemetry::serve(addr, metrics, admin)
        .await
        .map_err(|source| HostError::Metrics { addr, source })?;
    tracing::info!(addr = %bound, "serving /metrics, /healthz and /readyz");
    Ok(task)
}

/// Starts watching the module directories and ConfigMaps; their events
/// arrive on the receiver.
pub(super) fn watch_sources(
    dirs: &[std::path::PathBuf],
    configmaps: Option<Vec<String>>,
    shared: &Shared,
) -> (
    Vec<crate::source::dir::DirWatcher>,
    mpsc::UnboundedReceiver<SourceEvent>,
    Option<watch::Receiver<bool>>,
) {
    let (events_tx, events) = mpsc::unbounded_channel();
    let mut watchers = Vec::new();
    for dir in dirs {
        match crate::source::dir::watch_dir(dir.clone(), events_tx.clone()) {
            Ok(watcher) => watchers.push(watcher),
            Err(error) => {
                tracing::error!(error = %crate::loader::error_chain(&error), "module directory not watched")
            }
        }
    }
    let synced = configmaps.map(|namespaces| {
        let (synced, receiver) = watch::channel(false);
        tokio::spawn(crate::source::configmaps::watch_configmaps(
            shared.informers.clone(),
            namespaces,
            events_tx,
            synced,
        ));
        receiver
    });
    (watchers, events, synced)
}

/// How long a start waits for the module ConfigMaps' first list before it
/// goes on without them (they load when they come).
const CONFIGMAPS_SYNC: std::time::Duration = std::time::Duration::from_secs(60);

/// Loads what is there at start: the modules given, what the directories
/// hold now and the module ConfigMaps listed. Each module runs as soon as
/// it has compiled (and the shadows given with it have); returns once all
/// have been loaded or refused (so a replica is ready only once it serves
/// every module's webhooks).
pub(super) async fn load_initial(
    loader: &mut Loader,
    mut events: mpsc::UnboundedReceiver<SourceEvent>,
    supervisor: &Supervisor,
    dirs: bool,
    configmaps_synced: Option<watch::Receiver<bool>>,
) -> mpsc::UnboundedReceiver<SourceEvent> {
    if dirs {
        tokio::time::sleep(crate::source::DEBOUNCE).await;
    }
    if let Some(mut synced) = configmaps_synced
        && tokio::time::timeout(CONFIGMAPS_SYNC, synced.wait_for(|s| *s))
            .await
            .is_err()
    {
        tracing::error!(
            "the module ConfigMaps are not listed after {CONFIGMAPS_SYNC:?}: going on without them"
        );
    }
    while let Ok(event) = events.try_recv() {
        if let Some(decision) = loader.event(event) {
            supervisor.decide(decision);
        }
    }
    // A module whose shadow is still compiling waits for it: the shadow
    // sees (and a canary share serves) every request from the first.
    let mut held = Vec::new();
    while let Some(decision) = loader.next_compiled().await {
        match decision {
            Decision::Install(version) => held.push(version),
            other => supervisor.decide(other),
        }
        if !loader.is_compiling_shadows() {
            for version in held.drain(..) {
                supervisor.install(version).await;
            }
        }
    }
    for version in held {
        supervisor.install(version).await;
    }
    // A shadow still waiting for its module to be served is said loudly.
    for refused in loader.started() {
        supervisor.decide(refused);
    }
    events
}

/// Hands source events to the loader and its decisions to the supervisor,
/// until the sources stop.
pub(super) async fn drive(
    mut loader: Loader,
    mut events: mpsc::UnboundedReceiver<SourceEvent>,
    mut commands: mpsc::UnboundedReceiver<(String, crate::rollout::Command)>,
    states: Option<mpsc::UnboundedReceiver<crate::rollout::StateChange>>,
    supervisor: Supervisor,
) {
    // Without rollouts kept in the cluster, no state ever changes.
    let (_none, unkept) = mpsc::unbounded_channel();
    let mut states = states.unwrap_or(unkept);
    // Until the host stops (aborting this), for the operator's commands;
    // the sources may stop before.
    let mut open = true;
    loop {
        tokio::select! {
            Some((module, command)) = commands.recv() => {
                if let Some(decision) = loader.command(&module, command) {
                    supervisor.decide(decision);
                }
            }
            Some((module, state)) = states.recv() => {
                for decision in loader.state(&module, state) {
                    supervisor.decide(decision);
                }
            }
            Some(decision) = loader.next_compiled(), if loader.is_compiling() => {
                supervisor.decide(decision);
            }
            event = events.recv(), if open => match event {
                Some(event) => {
                    if let Some(decision) = loader.event(event) {
                        supervisor.decide(decision);
                    }
                }
                None => open = false,
            },
            else => return,
        }
    }
}

/// Who leads: always this replica, the holder of one Lease, or a Lease per
/// module; the ranges of sharded modules (moved by the ring when replicas
/// find each other through Leases); and the tasks to run, if any.
pub(super) fn elect(
    client: kube::Client,
    leader: Option<LeaderConfig>,
    scale_out: bool,
    sharded: bool,
    metrics: Arc<Metrics>,
    stopped: watch::Receiver<bool>,
) -> (
    Leaders,
    Shards,
    Option<futures::future::BoxFuture<'static, ()>>,
) {
    let (shards, ring) = match (&leader, sharded) {
        (Some(config), true) => {
            let shards = Shards::coordinated(config.renew_deadline);
            let ring = crate::ha::ring::run(
                client.clone(),
                config.clone(),
                shards.clone(),
                metrics.clone(),
                stopped.clone(),
            );
            (shards, Some(ring.boxed()))
        }
        (None, true) => {
            metrics.shard_fraction.set(1.0);
            metrics.shard_members.set(1);
            (Shards::whole(), None)
        }
        _ => (Shards::whole(), None),
    };
    let (leaders, election) = match leader {
        Some(config) if scale_out => {
            let leases = ModuleLeases::new(config.renew_deadline);
            let run = scaleout::run(client, config, leases.clone(), metrics, stopped);
            (Leaders::Modules(leases), Some(run.boxed()))
        }
        Some(config) => {
            let (elector, leadership) = Elector::new(client, config);
            tokio::spawn(track_leadership(leadership.clone(), metrics));
            (
                Leaders::Host(leadership),
                Some(elector.run(stopped).boxed()),
            )
        }
        None => {
            metrics.leader.set(1);
            (Leaders::Host(Leadership::always()), None)
        }
    };
    let tasks = match (election, ring) {
        (Some(election), Some(ring)) => {
            Some(futures::future::join(election, ring).map(|_| ()).boxed())
        }
        (election, ring) => election.or(ring),
    };
    (leaders, shards, tasks)
}

/// Keeps the `rekon_leader` gauge in step with leadership.
pub(super) async fn track_leadership(leadership: Leadership, metrics: Arc<Metrics>) {
    let mut changes = leadership.subscribe();
    loop {
        metrics.leader.set(i64::from(leadership.is_leading()));
        if changes.changed().await.is_err() {
            return;
        }
    }
}
