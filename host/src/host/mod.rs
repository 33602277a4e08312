//! Host: the embeddable whole — built by [`HostBuilder`], run by the [`supervisor`].
//! May call: every room below it (source, loader, controller, cluster, informer, ha, telemetry).
//!
//! [`Host`] is the handle; the supervisor runs one controller per
//! validated module version.

mod builder;
mod crds;
mod migrations;
mod parts;
mod report;
mod rollouts;
mod running;
mod settings;
mod shadows;
mod supervisor;
mod tasks;

use std::time::Duration;

use tokio::sync::watch;

pub use builder::HostBuilder;
use supervisor::Supervisor;

use crate::dispatch::DispatchStats;
use crate::events::Recorder;
use crate::runtime::{EngineError, Module};
use crate::telemetry::Metrics;

/// Why a host could not start.
#[derive(Debug, thiserror::Error)]
pub enum HostError {
    /// The WebAssembly engine could not be built.
    #[error("cannot build the WebAssembly engine")]
    Engine(#[from] EngineError),
    /// No Kubernetes client could be configured.
    #[error("cannot configure the Kubernetes client")]
    Client(#[source] kube::Error),
    /// The webhook server could not start.
    #[error("cannot start the webhook server")]
    Webhooks(#[from] crate::webhook::WebhookServerError),
    /// The operator configuration cannot be run as it is (a shadow file
    /// that cannot be read, or that shadows two modules).
    #[error("the operator configuration cannot be run: {0}")]
    Configuration(String),
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

/// How long [`Host::shutdown`] waits for reconciles in flight.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// After the webhook drain, how long requests in flight may take to be
/// answered before the server stops.
const WEBHOOK_CLOSE_GRACE: Duration = Duration::from_secs(5);

/// A running host. Dropping it stops nothing: call [`Host::shutdown`].
///
/// Reloading: a new version of a module (a changed file in a watched
/// directory, a changed module ConfigMap) is compiled and validated off the
/// hot path; if it loads, the running version stops taking work, its
/// reconciles in flight finish, and the new version starts on the same
/// informers and reconciles every object again (reason `module-reloaded`).
/// A version that fails to load leaves the last good one serving, and is
/// reported (error log, `rekon_module_load_failures_total`, a Warning Event
/// on a module ConfigMap). A removed source unloads its module (objects
/// still carrying its finalizer are reported). When two sources provide
/// the same module name, the one loaded first keeps it.
pub struct Host {
    supervisor: Supervisor,
    #[cfg_attr(not(feature = "bench"), allow(dead_code))]
    stats: std::sync::Arc<DispatchStats>,
    metrics: std::sync::Arc<Metrics>,
    cluster: std::sync::Arc<dyn crate::cluster::Cluster>,
    election_stop: watch::Sender<bool>,
    election: Option<tokio::task::JoinHandle<()>>,
    telemetry: Option<tokio::task::JoinHandle<()>>,
    driver: tokio::task::JoinHandle<()>,
    recorder: Recorder,
    webhooks: Option<crate::webhook::Started>,
    triggers: crate::webhook::uninstall::Triggers,
    /// Where rekon's Leases live (what an uninstall deletes).
    uninstall_namespace: String,
    _loaded: watch::Sender<bool>,
    _watchers: Vec<crate::source::dir::DirWatcher>,
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

    /// The module versions running. Answers at once, also while modules
    /// compile or swap.
    pub async fn modules(&self) -> Vec<Module> {
        self.supervisor.modules()
    }

    /// The module versions refused so far, as `origin: why`.
    pub fn failures(&self) -> Vec<String> {
        self.supervisor.failures()
    }

    /// Dispatch statistics across the host's controllers (for benchmarks).
    #[cfg(feature = "bench")]
    pub fn stats(&self) -> &DispatchStats {
        &self.stats
    }

    /// The admission chain of the modules serving webhooks: every new
    /// version answers the next review at once. Their guests read through
    /// the host's caches. `rekon dev` installs it in its API server.
    pub fn webhooks(&self) -> crate::webhook::Chain {
        crate::webhook::Chain::new(
            self.supervisor.webhooks(),
            self.cluster.clone(),
            self.metrics.clone(),
        )
    }

    /// The address the webhook server listens on, and the CA (PEM) its
    /// certificate is signed by, when it serves.
    pub fn webhook_server(&self) -> Option<(std::net::SocketAddr, &str)> {
        self.webhooks.as_ref().map(|w| (w.addr, w.ca_pem.as_str()))
    }

    /// The module versions serving webhooks.
    pub fn webhook_modules(&self) -> crate::webhook::WebhookModules {
        self.supervisor.webhooks()
    }

    /// The host's metrics, as `/metrics` serves them.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The host's metrics, shared.
    pub fn metrics_handle(&self) -> std::sync::Arc<Metrics> {
        self.metrics.clone()
    }

    /// Stops one module's controller (reconciles in flight finish first);
    /// informers no other module needs stop with it. Returns whether the
    /// module was running.
    pub async fn stop_module(&self, name: &str) -> bool {
        self.supervisor.stop_module(name).await
    }

    /// Stops taking work, lets reconciles in flight finish (for at most
    /// `SHUTDOWN_GRACE`), writes the Events still pending, releases the
    /// leader Lease, and returns.
    ///
    /// What the replicas publish together stays: the webhook
    /// configurations and CRD conversions are left as they are (the other
    /// replicas keep serving them), and the webhook server keeps answering
    /// until the shutdown is over and its drain time has passed, so the
    /// API server's calls still routed here are answered. Only when rekon
    /// is being uninstalled (see [`HostBuilder::uninstall_triggers`]) does
    /// the host take back what it published first, in case the uninstall
    /// webhook was not called.
    pub async fn shutdown(self) {
        let started = tokio::time::Instant::now();
        self.metrics.shutting_down();
        let mut webhooks = self.webhooks;
        if let Some(publisher) = webhooks.as_mut().and_then(|w| w.publisher.take()) {
            publisher.abort();
        }
        // The API server's connections to this replica retire as they are
        // used: it opens new ones, to the replicas that stay (this one
        // still answers until the drain is over).
        if let Some(webhooks) = &webhooks {
            webhooks.closer.drain();
        }
        if let Some(webhooks) = &webhooks
            && !self.triggers.is_empty()
            && self.triggers.uninstalling().await
        {
            uninstall(
                &self.triggers,
                &self.uninstall_namespace,
                &webhooks.endpoint,
            )
            .await;
        }
        self.driver.abort();
        if tokio::time::timeout(SHUTDOWN_GRACE, self.supervisor.stop_all())
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
        if let Some(webhooks) = webhooks {
            if let Some((members, task)) = webhooks.members {
                task.abort();
                members.leave().await;
            }
            tokio::time::sleep_until(started + webhooks.drain).await;
            // No request in flight is cut off: each connection goes once
            // answered.
            webhooks.closer.close(WEBHOOK_CLOSE_GRACE).await;
            webhooks.server.abort();
        }
        if let Some(telemetry) = self.telemetry {
            telemetry.abort();
        }
    }
}

/// rekon is being uninstalled: takes back what it published (see
/// [`uninstall`](crate::webhook::uninstall)), in case the uninstall webhook did not already.
async fn uninstall(
    triggers: &crate::webhook::uninstall::Triggers,
    namespace: &str,
    endpoint: &crate::webhook::Endpoint,
) {
    let Some(client) = triggers.client() else {
        return;
    };
    triggers.set_uninstalled();
    match crate::webhook::uninstall::Uninstall::new(client, namespace, endpoint.clone())
        .run()
        .await
    {
        Ok(report) => tracing::info!(
            configurations = ?report.configurations,
            conversions = ?report.conversions,
            leases = ?report.leases,
            "rekon is being uninstalled: what it published is taken back"
        ),
        Err(error) => tracing::warn!(
            error = %crate::loader::error_chain(&error),
            "rekon is being uninstalled, and cannot take back what it published (its permissions may be gone already): `rekon uninstall` can"
        ),
    }
}

/// This replica's default identity: host name and process id.
pub(crate) fn default_identity() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "rekon".to_string());
    format!("{host}-{}", std::process::id())
}
