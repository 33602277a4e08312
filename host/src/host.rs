//! The embeddable host: a kube client, modules, and one controller per
//! module sharing the informers.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::config::HostConfig;
use crate::controller::{self, ControllerOptions};
use crate::engine::{Engine, EngineConfig, EngineError};
use crate::informer::Informers;
use crate::module::{Module, ModuleError};

/// Why a host could not start.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The WebAssembly engine could not be built.
    #[error("cannot build the WebAssembly engine")]
    Engine(#[from] EngineError),
    /// No Kubernetes client could be configured.
    #[error("cannot configure the Kubernetes client")]
    Client(#[source] kube::Error),
}

impl HostError {
    /// A short, bounded label for metrics.
    pub fn metric_label(&self) -> &'static str {
        match self {
            HostError::Engine(_) => "engine",
            HostError::Client(_) => "client",
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
                    failures.push(LoadFailure { source, error });
                }
            }
        }
        for name in self.config.modules.keys() {
            if !modules.iter().any(|m| m.name() == name) {
                tracing::warn!(module = %name, "the configuration names a module that is not loaded");
            }
        }
        let informers = Arc::new(Informers::new(client));
        let mut controllers = Vec::new();
        for module in &modules {
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
            let task = tokio::spawn(controller::run(
                module.clone(),
                informers.clone(),
                options,
                stopped,
            ));
            controllers.push(RunningController {
                name: module.name().to_string(),
                stop,
                task,
            });
        }
        Ok(Host {
            modules,
            failures,
            controllers,
        })
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

/// A running host. Dropping it stops nothing: call [`Host::shutdown`].
pub struct Host {
    modules: Vec<Module>,
    failures: Vec<LoadFailure>,
    controllers: Vec<RunningController>,
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

    /// Stops taking work, lets reconciles in flight finish, and returns.
    pub async fn shutdown(self) {
        for controller in &self.controllers {
            controller.stop.send_replace(true);
        }
        for controller in self.controllers {
            controller.stop().await;
        }
    }
}
