//! The embeddable host: a kube client, modules, and one controller per
//! module sharing the informers.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::config::HostConfig;
use crate::controller::{self, ControllerOptions, Leaders, Shared};
use crate::dispatch::{DispatchStats, Dispatcher, NativeReconciler, Target};
use crate::engine::{Engine, EngineConfig, EngineError};
use crate::events::Recorder;
use crate::informer::Informers;
use crate::kube_cluster::KubeCluster;
use crate::leader::{Elector, LeaderConfig, Leadership};
use crate::module::{Module, ModuleError};
use crate::scaleout::ModuleLeases;
use crate::source::SourceEvent;
use crate::telemetry::{InfoLabels, Metrics, ReasonLabel};
use futures::FutureExt as _;

/// Why a host could not start.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The WebAssembly engine could not be built.
    #[error("cannot build the WebAssembly engine")]
    Engine(#[from] EngineError),
    /// No Kubernetes client could be configured.
    #[error("cannot configure the Kubernetes client")]
    Client(#[source] kube::Error),
    /// The metrics and health endpoint could not listen.
    #[error("cannot serve metrics on {addr}")]
    Metrics {
        /// The address asked for.
        addr: std::net::SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl HostError {
    /// A short, bounded label for metrics.
    pub fn metric_label(&self) -> &'static str {
        match self {
            HostError::Engine(_) => "engine",
            HostError::Client(_) => "client",
            HostError::Metrics { .. } => "metrics",
        }
    }
}

/// Configures and starts a [`Host`].
///
/// ```no_run
/// # async fn run() -> anyhow::Result<()> {
/// let host = rekon_host::Host::builder()
///     .client(kube::Client::try_default().await?)
///     .module("app.wasm", std::fs::read("app.wasm")?)
///     .start()
///     .await?;
/// tokio::signal::ctrl_c().await?;
/// host.shutdown().await;
/// # Ok(()) }
/// ```
#[derive(Default)]
#[must_use]
pub struct HostBuilder {
    client: Option<kube::Client>,
    engine: EngineConfig,
    modules: Vec<(String, Vec<u8>)>,
    controller: ControllerOptions,
    config: HostConfig,
    natives: Vec<NativeReconciler>,
    metrics_addr: Option<std::net::SocketAddr>,
    leader: Option<LeaderConfig>,
    scale_out: bool,
    dirs: Vec<std::path::PathBuf>,
    configmaps: Option<Vec<String>>,
    identity: Option<String>,
}

impl std::fmt::Debug for HostBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostBuilder")
            .field("engine", &self.engine)
            .field("modules", &self.modules.len())
            .finish_non_exhaustive()
    }
}

impl HostBuilder {
    /// The Kubernetes client (default: `kube::Client::try_default()`:
    /// in-cluster config or `KUBECONFIG`).
    pub fn client(mut self, client: kube::Client) -> Self {
        self.client = Some(client);
        self
    }

    /// Engine limits and cache.
    pub fn engine_config(mut self, config: EngineConfig) -> Self {
        self.engine = config;
        self
    }

    /// Adds a module; `source` names it in logs (a path, say).
    pub fn module(mut self, source: impl Into<String>, bytes: Vec<u8>) -> Self {
        self.modules.push((source.into(), bytes));
        self
    }

    /// The operator's configuration: per-module concurrency and narrowed
    /// permissions.
    pub fn config(mut self, config: HostConfig) -> Self {
        self.config = config;
        self
    }

    /// Adds a reconciler compiled into the host process, run like a module
    /// (to compare a module against the same logic run natively: see
    /// `cargo bench --bench pipeline`).
    #[doc(hidden)]
    pub fn native(mut self, reconciler: NativeReconciler) -> Self {
        self.natives.push(reconciler);
        self
    }

    /// Serves `/metrics`, `/healthz` and `/readyz` on this address.
    pub fn metrics_addr(mut self, addr: std::net::SocketAddr) -> Self {
        self.metrics_addr = Some(addr);
        self
    }

    /// Reconciles only while holding the leader Lease (for several replicas);
    /// without it, the host always reconciles.
    pub fn leader_election(mut self, config: LeaderConfig) -> Self {
        self.leader = Some(config);
        self.scale_out = false;
        self
    }

    /// Spreads the modules across the replicas instead (see
    /// [`crate::scaleout`]): each module reconciles on the replica holding
    /// its Lease `<config.name>-module-<module>`, and every replica holds
    /// at most `ceil(modules / replicas)` of them.
    pub fn scale_out(mut self, config: LeaderConfig) -> Self {
        self.leader = Some(config);
        self.scale_out = true;
        self
    }

    /// This replica's identity, in Events' `reportingInstance` (default:
    /// the leader election's identity, else the host name and process id).
    pub fn identity(mut self, identity: impl Into<String>) -> Self {
        self.identity = Some(identity.into());
        self
    }

    /// Reconciles at once per module, overriding the modules' hints.
    pub fn concurrency(mut self, concurrency: usize) -> Self {
        self.controller.concurrency = Some(concurrency.max(1));
        self
    }

    /// Backoff of failed reconciles: `base` doubling up to `max`
    /// (default 5 ms to 1000 s).
    pub fn backoff(mut self, base: Duration, max: Duration) -> Self {
        self.controller.backoff_base = base;
        self.controller.backoff_max = max;
        self
    }

    /// Watches a directory of `*.wasm` modules: every file is loaded at
    /// start, and every change afterwards is loaded live (see
    /// [`Host`] for the reload rules).
    pub fn watch_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.dirs.push(dir.into());
        self
    }

    /// Loads modules from ConfigMaps labelled `rekon.dev/module` (see
    /// [`crate::pack`]) in these namespaces (every namespace when empty),
    /// live: a new version is loaded, a deleted ConfigMap unloads its module.
    pub fn watch_configmaps(mut self, namespaces: Vec<String>) -> Self {
        self.configmaps = Some(namespaces);
        self
    }

    /// Loads the modules (in parallel; one that fails is reported and
    /// skipped, never fatal), starts a controller for each, and starts
    /// watching the module directories.
    pub async fn start(self) -> Result<Host, HostError> {
        let client = match self.client {
            Some(client) => client,
            None => kube::Client::try_default()
                .await
                .map_err(HostError::Client)?,
        };
        let engine = Engine::new(self.engine)?;
        let metrics = Arc::new(Metrics::new());
        let telemetry = match self.metrics_addr {
            Some(addr) => {
                let (bound, task) = crate::telemetry::serve(addr, metrics.clone())
                    .await
                    .map_err(|source| HostError::Metrics { addr, source })?;
                tracing::info!(addr = %bound, "serving /metrics, /healthz and /readyz");
                Some(task)
            }
            None => None,
        };
        let identity = self
            .identity
            .or_else(|| self.leader.as_ref().map(|l| l.identity.clone()))
            .unwrap_or_else(default_identity);
        let recorder = Recorder::start(client.clone(), identity, metrics.clone());
        // Candidates campaign once their modules are loaded (below).
        let (election_stop, election_stopped) = watch::channel(false);
        let (leaders, election) = match self.leader {
            Some(config) if self.scale_out => {
                let leases = ModuleLeases::new(config.renew_deadline);
                let run = crate::scaleout::run(
                    client.clone(),
                    config,
                    leases.clone(),
                    metrics.clone(),
                    election_stopped,
                );
                (Leaders::Modules(leases), Some(run.boxed()))
            }
            Some(config) => {
                let (elector, leadership) = Elector::new(client.clone(), config);
                tokio::spawn(track_leadership(leadership.clone(), metrics.clone()));
                (
                    Leaders::Host(leadership),
                    Some(elector.run(election_stopped).boxed()),
                )
            }
            None => {
                metrics.leader.set(1);
                (Leaders::Host(Leadership::always()), None)
            }
        };
        let informers = Arc::new(Informers::new(client));
        let shared = Shared {
            informers: informers.clone(),
            cluster: Arc::new(KubeCluster::new(informers.clone(), recorder.clone())),
            leaders,
            metrics: metrics.clone(),
        };
        let stats = Arc::new(DispatchStats::default());
        let failures = Arc::new(std::sync::Mutex::new(Vec::new()));
        let registry = Arc::new(tokio::sync::Mutex::new(Registry {
            engine,
            shared,
            config: self.config,
            options: self.controller,
            stats: stats.clone(),
            origins: BTreeMap::new(),
            running: BTreeMap::new(),
            natives_running: Vec::new(),
            failures: failures.clone(),
        }));

        // The modules given and those in the directories, loaded in parallel.
        let (events_tx, mut events) = tokio::sync::mpsc::unbounded_channel();
        let mut watchers = Vec::new();
        for dir in &self.dirs {
            match crate::source::watch_dir(dir.clone(), events_tx.clone()) {
                Ok(watcher) => watchers.push(watcher),
                Err(error) => {
                    tracing::error!(error = %anyhow_chain(&error), "module directory not watched")
                }
            }
        }
        let mut initial: Vec<(String, Arc<Vec<u8>>)> = self
            .modules
            .into_iter()
            .map(|(origin, bytes)| (origin, Arc::new(bytes)))
            .collect();
        if let Some(namespaces) = self.configmaps {
            let informers = registry.lock().await.shared.informers.clone();
            tokio::spawn(crate::source::watch_configmaps(
                informers,
                namespaces,
                events_tx.clone(),
            ));
        }
        // What the directories hold now arrives at once; later events are
        // changes, handled one at a time.
        if !self.dirs.is_empty() {
            tokio::time::sleep(crate::source::DEBOUNCE).await;
        }
        while let Ok(event) = events.try_recv() {
            if let SourceEvent::Upsert { origin, bytes } = event {
                initial.push((origin, bytes));
            }
        }
        {
            let mut registry = registry.lock().await;
            let engine = registry.engine.clone();
            let loads = initial.into_iter().map(|(origin, bytes)| {
                let engine = engine.clone();
                async move {
                    let loaded = Module::load(&engine, &bytes).await;
                    (origin, crate::module::digest(&bytes), loaded)
                }
            });
            for (origin, digest, loaded) in futures::future::join_all(loads).await {
                registry.install(origin, digest, loaded, false).await;
            }
            for native in self.natives {
                registry.start_native(native);
            }
            for name in registry.config.modules.keys() {
                if !registry.running.contains_key(name) {
                    tracing::warn!(module = %name, "the configuration names a module that is not loaded");
                }
            }
            let controllers = registry.running.len() + registry.natives_running.len();
            metrics.modules_loaded(controllers);
        }
        let election = election.map(tokio::spawn);
        let reloader = {
            let registry = registry.clone();
            tokio::spawn(async move {
                while let Some(event) = events.recv().await {
                    let mut registry = registry.lock().await;
                    match event {
                        SourceEvent::Upsert { origin, bytes } => {
                            let digest = crate::module::digest(&bytes);
                            if registry.origins.get(&origin).map(|o| &o.digest) == Some(&digest) {
                                continue;
                            }
                            tracing::info!(%origin, digest = %&digest[..12], "new module version");
                            let loaded = Module::load(&registry.engine, &bytes).await;
                            registry.install(origin, digest, loaded, true).await;
                        }
                        SourceEvent::Remove { origin } => registry.remove(&origin).await,
                        SourceEvent::Invalid {
                            origin,
                            reason,
                            message,
                        } => registry.reject(&origin, reason, &message).await,
                    }
                }
            })
        };
        drop(events_tx);
        Ok(Host {
            registry,
            stats,
            failures,
            metrics,
            election_stop,
            election,
            telemetry,
            reloader,
            recorder,
            _watchers: watchers,
        })
    }
}

/// Where a module came from, and what it holds.
struct Origin {
    digest: String,
    /// The module it provides, if its last version loaded.
    name: Option<String>,
}

/// The running controllers, and what each module source provides.
struct Registry {
    engine: Engine,
    shared: Shared,
    config: HostConfig,
    options: ControllerOptions,
    stats: Arc<DispatchStats>,
    origins: BTreeMap<String, Origin>,
    running: BTreeMap<String, RunningController>,
    natives_running: Vec<(String, Controller)>,
    /// Every load failure so far, as `origin: error`.
    failures: Arc<std::sync::Mutex<Vec<String>>>,
}

impl Registry {
    /// Installs a loaded (or failed) module version from `origin`: starts
    /// it, or swaps it in for the running version of the same module.
    async fn install(
        &mut self,
        origin: String,
        digest: String,
        loaded: Result<Module, ModuleError>,
        reload: bool,
    ) {
        let previous = self.origins.get(&origin).and_then(|o| o.name.clone());
        let module = match loaded {
            Ok(module) => module,
            Err(error) => {
                self.reject(&origin, error.metric_label(), &anyhow_chain(&error))
                    .await;
                // Remember the bad bytes so they are not retried in a loop;
                // the module keeps its last good version.
                self.origins.insert(
                    origin,
                    Origin {
                        digest,
                        name: previous,
                    },
                );
                return;
            }
        };
        let name = module.name().to_string();
        if let Some(owner) = self
            .running
            .get(&name)
            .map(|r| r.origin.clone())
            .filter(|o| *o != origin)
        {
            // The first source to provide a name keeps it until it goes.
            tracing::error!(
                module = %name,
                %origin,
                kept = %owner,
                "two sources provide the same module; keeping the one loaded first"
            );
            self.origins.insert(origin, Origin { digest, name: None });
            return;
        }
        let module = match self.config.modules.get(&name).map(|s| s.limit(&name)) {
            Some(Ok(Some(limit))) => module.narrowed(limit),
            Some(Err(error)) => {
                tracing::error!(%origin, error = %error, "module refused: invalid operator configuration");
                return;
            }
            _ => module,
        };
        if previous.as_ref().is_some_and(|p| *p != name) {
            // The origin now holds another module: the old one goes.
            self.remove(&origin).await;
        }
        // Keep the informers of the running version alive across the swap,
        // so the new version finds them synced instead of relisting.
        let mut hold = Vec::new();
        if let Some(old) = self.running.remove(&name) {
            for kind in kinds(old.module.manifest()) {
                if let Ok(informer) = self
                    .shared
                    .informers
                    .informer(&kind.0, kind.1.as_deref())
                    .await
                {
                    hold.push(informer);
                }
            }
            self.shared
                .metrics
                .module_info
                .remove(&info_labels(&old.module));
            old.controller.stop().await;
        }
        tracing::info!(
            %origin,
            module = %name,
            version = %module.manifest().version,
            digest = module.digest(),
            from = ?module.compile_source(),
            load_ms = module.compile_time().as_millis() as u64,
            reload,
            "module loaded"
        );
        self.shared
            .metrics
            .module_info
            .get_or_create(&info_labels(&module))
            .set(1);
        let mut options = self.options.clone();
        options.reloaded = reload;
        if let Some(concurrency) = self.config.modules.get(&name).and_then(|m| m.concurrency) {
            options.concurrency = Some(concurrency.max(1));
        }
        let controller = spawn_controller(
            Dispatcher::new(Target::Wasm(module.clone()), self.stats.clone()),
            self.shared.clone(),
            options,
        );
        self.running.insert(
            name.clone(),
            RunningController {
                origin: origin.clone(),
                module,
                controller,
            },
        );
        self.origins.insert(
            origin,
            Origin {
                digest,
                name: Some(name),
            },
        );
        // The new controller subscribes as soon as its task runs; until
        // then the held informers must not stop.
        if !hold.is_empty() {
            tokio::spawn(async move {
                tokio::time::sleep(INFORMER_LINGER).await;
                drop(hold);
            });
        }
    }

    /// Reports a version from `origin` that cannot be loaded: an error log,
    /// `rekon_module_load_failures_total`, and a Warning Event on the
    /// ConfigMap it came from. What was serving keeps serving.
    async fn reject(&mut self, origin: &str, reason: &str, message: &str) {
        let serving_name = self.origins.get(origin).and_then(|o| o.name.clone());
        let serving = serving_name.as_deref().unwrap_or("nothing");
        tracing::error!(%origin, error = %message, reason, %serving, "module refused; the last good version keeps serving");
        self.shared
            .metrics
            .load_failures
            .get_or_create(&ReasonLabel {
                reason: reason.to_string(),
            })
            .inc();
        self.failures
            .lock()
            .expect("failures lock")
            .push(format!("{origin}: {message}"));
        if let Some((namespace, name)) = crate::source::parse_configmap_origin(origin)
            && self.shared.leaders.speaks_for(serving_name.as_deref())
        {
            let regarding = crate::bindings::ObjectRef {
                kind: crate::bindings::Gvk {
                    group: String::new(),
                    version: "v1".into(),
                    kind: "ConfigMap".into(),
                },
                namespace: Some(namespace.to_string()),
                name: name.to_string(),
            };
            let note = format!("module refused ({reason}): {message}; serving: {serving}");
            if let Err(error) = self
                .shared
                .cluster
                .record_event(
                    &regarding,
                    crate::bindings::EventType::Warning,
                    "ModuleRejected",
                    &crate::bindings::truncate(note, 1024),
                    "rekon-host",
                )
                .await
            {
                tracing::warn!(error = %error.message, "cannot record the ModuleRejected event");
            }
        }
    }

    /// Starts a reconciler compiled into the host (not reloadable).
    fn start_native(&mut self, native: NativeReconciler) {
        let dispatcher = Dispatcher::new(Target::Native(native), self.stats.clone());
        let name = dispatcher.name().to_string();
        let controller = spawn_controller(dispatcher, self.shared.clone(), self.options.clone());
        self.natives_running.push((name, controller));
    }

    /// The source `origin` is gone: its module stops.
    async fn remove(&mut self, origin: &str) {
        let Some(Origin {
            name: Some(name), ..
        }) = self.origins.remove(origin)
        else {
            return;
        };
        let Some(old) = self.running.remove(&name) else {
            return;
        };
        old.controller.stop().await;
        self.shared.leaders.unload(&name);
        self.shared
            .metrics
            .module_info
            .remove(&info_labels(&old.module));
        let manifest = old.module.manifest();
        tracing::info!(%origin, module = %name, "module unloaded: its source is gone");
        if let Some(finalizer) = &manifest.finalizer
            && let Ok(primary) = self
                .shared
                .informers
                .informer(&manifest.primary, None)
                .await
        {
            let stuck = primary
                .list(None)
                .iter()
                .filter(|o| o.has_finalizer(finalizer))
                .count();
            if stuck > 0 {
                tracing::warn!(
                    module = %name,
                    finalizer = %finalizer,
                    objects = stuck,
                    "objects still carry the unloaded module's finalizer: they will not be deleted until it is removed or the module returns"
                );
            }
        }
    }
}

/// The kinds (and label selectors) a manifest watches.
fn kinds(manifest: &crate::bindings::Manifest) -> Vec<(crate::bindings::Gvk, Option<String>)> {
    std::iter::once((manifest.primary.clone(), None))
        .chain(manifest.owns.iter().map(|k| (k.clone(), None)))
        .chain(
            manifest
                .watches
                .iter()
                .map(|w| (w.kind.clone(), w.label_selector.clone())),
        )
        .collect()
}

fn info_labels(module: &Module) -> InfoLabels {
    InfoLabels {
        module: module.name().to_string(),
        version: module.manifest().version.clone(),
        digest: module.digest().to_string(),
    }
}

fn spawn_controller(
    dispatcher: Dispatcher,
    shared: Shared,
    options: ControllerOptions,
) -> Controller {
    let (stop, stopped) = watch::channel(false);
    let name = dispatcher.name().to_string();
    let task = tokio::spawn(controller::run(dispatcher, shared, options, stopped));
    Controller { name, stop, task }
}

/// Keeps the `rekon_leader` gauge in step with leadership.
async fn track_leadership(leadership: Leadership, metrics: Arc<Metrics>) {
    let mut changes = leadership.subscribe();
    loop {
        metrics.leader.set(i64::from(leadership.is_leading()));
        if changes.changed().await.is_err() {
            return;
        }
    }
}

/// This replica's default identity: host name and process id.
pub(crate) fn default_identity() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "rekon".to_string());
    format!("{host}-{}", std::process::id())
}

/// An error and its sources, as one line.
fn anyhow_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

/// A controller task and how to stop it.
struct Controller {
    name: String,
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Controller {
    /// Stops taking work and waits for reconciles in flight.
    async fn stop(self) {
        self.stop.send_replace(true);
        if let Err(error) = self.task.await {
            tracing::error!(module = %self.name, error = %error, "controller task failed");
        }
    }
}

/// A module version being run, and where it came from.
struct RunningController {
    origin: String,
    module: Module,
    controller: Controller,
}

/// How long the informers of a replaced module version are kept after a
/// swap, for the new version to take them over.
const INFORMER_LINGER: Duration = Duration::from_secs(10);

/// How long [`Host::shutdown`] waits for reconciles in flight.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// A running host. Dropping it stops nothing: call [`Host::shutdown`].
///
/// Reloading: a new version of a module (a changed file in a watched
/// directory) is compiled and validated off the hot path; if it loads, the
/// running version stops taking work, its reconciles in flight finish, and
/// the new version starts and reconciles every object again (reason
/// `module-reloaded`); informers stay up across the swap. A version that
/// fails to load leaves the last good one serving, and is reported (error
/// log, `rekon_module_load_failures_total`). A removed file unloads its
/// module (objects still carrying its finalizer are reported). When two
/// sources provide the same module name, the one loaded first keeps it.
pub struct Host {
    registry: Arc<tokio::sync::Mutex<Registry>>,
    stats: Arc<DispatchStats>,
    failures: Arc<std::sync::Mutex<Vec<String>>>,
    metrics: Arc<Metrics>,
    election_stop: watch::Sender<bool>,
    election: Option<tokio::task::JoinHandle<()>>,
    telemetry: Option<tokio::task::JoinHandle<()>>,
    reloader: tokio::task::JoinHandle<()>,
    recorder: Recorder,
    _watchers: Vec<crate::source::DirWatcher>,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host").finish_non_exhaustive()
    }
}

impl Host {
    /// A builder.
    pub fn builder() -> HostBuilder {
        HostBuilder::default()
    }

    /// The module versions being run.
    pub async fn modules(&self) -> Vec<Module> {
        let registry = self.registry.lock().await;
        registry
            .running
            .values()
            .map(|r| r.module.clone())
            .collect()
    }

    /// The module versions refused so far, as `origin: why`.
    pub fn failures(&self) -> Vec<String> {
        self.failures.lock().expect("failures lock").clone()
    }

    /// Dispatch statistics across the host's controllers (provisional,
    /// for benchmarks, until metrics take their place).
    #[doc(hidden)]
    pub fn stats(&self) -> &DispatchStats {
        &self.stats
    }

    /// The host's metrics.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Stops one module's controller (reconciles in flight finish first);
    /// informers no other module needs stop with it. Returns whether the
    /// module was running.
    pub async fn stop_module(&self, name: &str) -> bool {
        let mut registry = self.registry.lock().await;
        let Some(running) = registry.running.remove(name) else {
            return false;
        };
        running.controller.stop().await;
        registry.shared.leaders.unload(name);
        registry.origins.remove(&running.origin);
        true
    }

    /// Stops taking work, lets reconciles in flight finish (for at most
    /// [`SHUTDOWN_GRACE`]), releases the leader Lease, and returns.
    pub async fn shutdown(self) {
        self.reloader.abort();
        let mut registry = self.registry.lock().await;
        let mut controllers: Vec<Controller> = std::mem::take(&mut registry.running)
            .into_values()
            .map(|r| r.controller)
            .collect();
        controllers.extend(registry.natives_running.drain(..).map(|(_, c)| c));
        for controller in &controllers {
            controller.stop.send_replace(true);
        }
        let stopping = futures::future::join_all(controllers.into_iter().map(Controller::stop));
        if tokio::time::timeout(SHUTDOWN_GRACE, stopping)
            .await
            .is_err()
        {
            tracing::warn!("reconciles still in flight after {SHUTDOWN_GRACE:?}: leaving them");
        }
        // Repeats of Events not written yet (series counts) go out now.
        self.recorder.flush(Duration::from_secs(2)).await;
        self.election_stop.send_replace(true);
        if let Some(election) = self.election {
            let _ = election.await;
        }
        if let Some(telemetry) = self.telemetry {
            telemetry.abort();
        }
    }
}
