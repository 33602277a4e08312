//! The embeddable host: a kube client, modules, and one controller per
//! module sharing the informers.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

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
        let informers = Arc::new(Informers::new(client));
        let (stop, stopped) = watch::channel(false);
        let mut controllers = tokio::task::JoinSet::new();
        for module in &modules {
            controllers.spawn(controller::run(
                module.clone(),
                informers.clone(),
                self.controller.clone(),
                stopped.clone(),
            ));
        }
        Ok(Host {
            modules,
            failures,
            stop,
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

/// A running host. Dropping it stops nothing: call [`Host::shutdown`].
pub struct Host {
    modules: Vec<Module>,
    failures: Vec<LoadFailure>,
    stop: watch::Sender<bool>,
    controllers: tokio::task::JoinSet<()>,
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

    /// Stops taking work, lets reconciles in flight finish, and returns.
    pub async fn shutdown(mut self) {
        self.stop.send_replace(true);
        while self.controllers.join_next().await.is_some() {}
    }
}
