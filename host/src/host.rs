//! The embeddable host: a kube client, modules, and one controller per
//! module sharing the informers.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::config::HostConfig;
use crate::controller::{self, ControllerOptions, Shared};
use crate::dispatch::{DispatchStats, Dispatcher, NativeReconciler, Target};
use crate::engine::{Engine, EngineConfig, EngineError};
use crate::informer::Informers;
use crate::kube_cluster::KubeCluster;
use crate::leader::{Elector, LeaderConfig, Leadership};
use crate::module::{Module, ModuleError};
use crate::telemetry::{InfoLabels, Metrics, ReasonLabel};

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

/// A module that could not be loaded, and why.
#[derive(Debug)]
pub struct LoadFailure {
    /// Where the module came from (a path, a name).
    pub source: String,
    /// Why it was refused.
    pub error: ModuleError,
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

    /// Loads the modules (in parallel; one that fails is reported and
    /// skipped, never fatal) and starts a controller for each.
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
        let loads = self.modules.into_iter().map(|(source, bytes)| {
            let engine = engine.clone();
            async move { (source, Module::load(&engine, &bytes).await) }
        });
        let mut modules: Vec<Module> = Vec::new();
        let mut failures = Vec::new();
        for (source, loaded) in futures::future::join_all(loads).await {
            match loaded {
                Ok(module) => {
                    if let Some(existing) = modules.iter().find(|m| m.name() == module.name()) {
                        tracing::error!(
                            %source,
                            module = module.name(),
                            kept = existing.digest(),
                            "two modules have the same name; keeping the first"
                        );
                        continue;
                    }
                    let module = match self.config.modules.get(module.name()) {
                        Some(settings) => match settings.limit(module.name()) {
                            Ok(Some(limit)) => module.narrowed(limit),
                            Ok(None) => module,
                            Err(error) => {
                                tracing::error!(%source, error = %error, "module refused: invalid operator configuration");
                                continue;
                            }
                        },
                        None => module,
                    };
                    tracing::info!(
                        %source,
                        module = module.name(),
                        version = %module.manifest().version,
                        digest = module.digest(),
                        from = ?module.compile_source(),
                        load_ms = module.compile_time().as_millis() as u64,
                        "module loaded"
                    );
                    modules.push(module);
                }
                Err(error) => {
                    tracing::error!(%source, error = %format!("{:#}", anyhow_chain(&error)), reason = error.metric_label(), "module refused");
                    metrics
                        .load_failures
                        .get_or_create(&ReasonLabel {
                            reason: error.metric_label().to_string(),
                        })
                        .inc();
                    failures.push(LoadFailure { source, error });
                }
            }
        }
        for name in self.config.modules.keys() {
            if !modules.iter().any(|m| m.name() == name) {
                tracing::warn!(module = %name, "the configuration names a module that is not loaded");
            }
        }
        for module in &modules {
            metrics
                .module_info
                .get_or_create(&InfoLabels {
                    module: module.name().to_string(),
                    version: module.manifest().version.clone(),
                    digest: module.digest().to_string(),
                })
                .set(1);
        }
        let (election_stop, election_stopped) = watch::channel(false);
        let (leadership, election) = match self.leader {
            Some(config) => {
                let (elector, leadership) = Elector::new(client.clone(), config);
                (
                    leadership,
                    Some(tokio::spawn(elector.run(election_stopped))),
                )
            }
            None => (Leadership::always(), None),
        };
        tokio::spawn(track_leadership(leadership.clone(), metrics.clone()));
        let informers = Arc::new(Informers::new(client));
        let shared = Shared {
            informers: informers.clone(),
            cluster: Arc::new(KubeCluster::new(informers.clone(), leadership.clone())),
            leadership,
            metrics: metrics.clone(),
        };
        let mut controllers = Vec::new();
        let stats = Arc::new(DispatchStats::default());
        let targets = (modules.iter().cloned().map(Target::Wasm))
            .chain(self.natives.into_iter().map(Target::Native));
        for target in targets {
            let module = Dispatcher::new(target, stats.clone());
            let mut options = self.controller.clone();
            if let Some(concurrency) = self
                .config
                .modules
                .get(module.name())
                .and_then(|m| m.concurrency)
            {
                options.concurrency = Some(concurrency.max(1));
            }
            let (stop, stopped) = watch::channel(false);
            let name = module.name().to_string();
            let task = tokio::spawn(controller::run(module, shared.clone(), options, stopped));
            controllers.push(RunningController { name, stop, task });
        }
        metrics.modules_loaded(controllers.len());
        Ok(Host {
            modules,
            failures,
            controllers,
            stats,
            metrics,
            election_stop,
            election,
            telemetry,
        })
    }
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

struct RunningController {
    name: String,
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl RunningController {
    async fn stop(self) {
        self.stop.send_replace(true);
        if let Err(error) = self.task.await {
            tracing::error!(module = %self.name, error = %error, "controller task failed");
        }
    }
}

/// How long [`Host::shutdown`] waits for reconciles in flight.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// A running host. Dropping it stops nothing: call [`Host::shutdown`].
pub struct Host {
    modules: Vec<Module>,
    failures: Vec<LoadFailure>,
    controllers: Vec<RunningController>,
    stats: Arc<DispatchStats>,
    metrics: Arc<Metrics>,
    election_stop: watch::Sender<bool>,
    election: Option<tokio::task::JoinHandle<()>>,
    telemetry: Option<tokio::task::JoinHandle<()>>,
}

impl std::fmt::Debug for Host {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Host")
            .field("modules", &self.modules)
            .finish_non_exhaustive()
    }
}

impl Host {
    /// A builder.
    pub fn builder() -> HostBuilder {
        HostBuilder::default()
    }

    /// The modules being run.
    pub fn modules(&self) -> &[Module] {
        &self.modules
    }

    /// The modules that could not be loaded.
    pub fn failures(&self) -> &[LoadFailure] {
        &self.failures
    }

    /// Dispatch statistics across the host's controllers (provisional,
    /// for benchmarks, until metrics take their place).
    #[doc(hidden)]
    pub fn stats(&self) -> &DispatchStats {
        &self.stats
    }

    /// Stops one module's controller (reconciles in flight finish first);
    /// informers no other module needs stop with it. Returns whether the
    /// module was running.
    pub async fn stop_module(&mut self, name: &str) -> bool {
        let Some(index) = self.controllers.iter().position(|c| c.name == name) else {
            return false;
        };
        self.controllers.remove(index).stop().await;
        self.modules.retain(|m| m.name() != name);
        true
    }

    /// The host's metrics.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Stops taking work, lets reconciles in flight finish (for at most
    /// [`SHUTDOWN_GRACE`]), releases the leader Lease, and returns.
    pub async fn shutdown(self) {
        for controller in &self.controllers {
            controller.stop.send_replace(true);
        }
        let stopping = futures::future::join_all(self.controllers.into_iter().map(|c| c.stop()));
        if tokio::time::timeout(SHUTDOWN_GRACE, stopping)
            .await
            .is_err()
        {
            tracing::warn!("reconciles still in flight after {SHUTDOWN_GRACE:?}: leaving them");
        }
        self.election_stop.send_replace(true);
        if let Some(election) = self.election {
            let _ = election.await;
        }
        if let Some(telemetry) = self.telemetry {
            telemetry.abort();
        }
    }
}
