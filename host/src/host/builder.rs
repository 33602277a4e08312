//! [`HostBuilder`]: what a host is made of, and starting it.

use std::sync::Arc;

use tokio::sync::{mpsc, watch};

use super::supervisor::Supervisor;
use super::tasks::{drive, elect, load_initial, serve_telemetry, watch_sources};
use super::{Host, HostError, default_identity};
use crate::cluster::kube::KubeCluster;
use crate::config::HostConfig;
use crate::controller::{ControllerConfig, Shared};
use crate::discovery::Discovery;
use crate::dispatch::{DispatchStats, NativeReconciler};
use crate::events::Recorder;
use crate::ha::LeaderConfig;
use crate::informer::Informers;
use crate::loader::{Loader, upsert};
use crate::replay::Recordings;
use crate::rollout::{Admin, Rollouts};
use crate::runtime::{Engine, EngineConfig};
use crate::source::Origin;
use crate::telemetry::Metrics;

/// Configures and starts a [`Host`]. Every setter is chainable.
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
    controller: ControllerConfig,
    modules: Vec<(String, Vec<u8>)>,
    config: HostConfig,
    natives: Vec<NativeReconciler>,
    metrics_addr: Option<std::net::SocketAddr>,
    leader: Option<LeaderConfig>,
    scale_out: bool,
    dirs: Vec<std::path::PathBuf>,
    configmaps: Option<Vec<String>>,
    identity: Option<String>,
    webhooks: Option<crate::webhook::WebhookServerConfig>,
    install_crds: bool,
    no_migrate: bool,
    uninstall_triggers: Option<(String, Vec<crate::webhook::uninstall::Trigger>)>,
    in_process_webhooks: bool,
    rollouts_in_memory: bool,
}

impl std::fmt::Debug for HostBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostBuilder")
            .field("engine", &self.engine)
            .field("controller", &self.controller)
            .field("modules", &self.modules.len())
            .finish_non_exhaustive()
    }
}

impl HostBuilder {
    /// Applies the CustomResourceDefinitions each module ships (contract
    /// 0.4.0) server-side before its controller starts, and waits until
    /// they are served (`rekon run --install-crds`; `rekon dev` always).
    /// Needs create and patch on customresourcedefinitions.
    pub fn install_crds(mut self, install: bool) -> Self {
        self.install_crds = install;
        self
    }

    /// Whether the CRDs each module ships are migrated to their storage
    /// version by the replica leading the module (default: yes; see
    /// [`crate::migrate`]).
    pub fn migrate(mut self, migrate: bool) -> Self {
        self.no_migrate = !migrate;
        self
    }

    /// Keeps rollouts in this process only: no `Rollout` CRD applied or
    /// watched, promotions and aborts forgotten at a restart (by default
    /// each module's rollout is kept in a `Rollout` object of the host's
    /// namespace, which every replica follows).
    pub fn rollouts_in_memory(mut self) -> Self {
        self.rollouts_in_memory = true;
        self
    }

    /// The Kubernetes client (default: `kube::Client::try_default()`:
    /// in-cluster config or `KUBECONFIG`).
    pub fn client(mut self, client: kube::Client) -> Self {
        self.client = Some(client);
        self
    }

    /// Engine limits and compile cache.
    pub fn engine_config(mut self, config: EngineConfig) -> Self {
        self.engine = config;
        self
    }

    /// How the controllers run: concurrency and retry backoff.
    pub fn controller_config(mut self, config: ControllerConfig) -> Self {
        self.controller = config;
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
    #[cfg(feature = "bench")]
    pub fn native(mut self, reconciler: NativeReconciler) -> Self {
        self.natives.push(reconciler);
        self
    }

    /// Serves the modules' admission and conversion webhooks over HTTPS,
    /// and keeps the cluster's webhook configurations and CRD conversions
    /// in line with them (see [`crate::webhook`]). Every replica serves.
    pub fn webhooks(mut self, config: crate::webhook::WebhookServerConfig) -> Self {
        self.webhooks = Some(config);
        self
    }

    /// The objects whose deletion means rekon is being uninstalled (its
    /// namespace, ServiceAccount, ClusterRoleBinding; namespaced ones, and
    /// rekon's Leases, in `namespace`). With a webhook server, the host
    /// publishes the uninstall webhook for their deletion: the first
    /// replica it reaches takes back the webhook configurations, CRD
    /// conversions and Leases rekon published, while its permissions still
    /// hold (see [`uninstall`](crate::webhook::uninstall)).
    pub fn uninstall_triggers(
        mut self,
        namespace: impl Into<String>,
        triggers: Vec<crate::webhook::uninstall::Trigger>,
    ) -> Self {
        self.uninstall_triggers = Some((namespace.into(), triggers)).filter(|(_, t)| !t.is_empty());
        self
    }

    /// The caller serves the modules' webhooks itself, through
    /// [`Host::webhooks`] in its API server (as `rekon dev` does). Without
    /// it, or [`HostBuilder::webhooks`], a module that declares webhooks or
    /// conversions is reported at load (an error log and a
    /// `WebhooksNotServed` Warning Event): nothing would call them.
    pub fn in_process_webhooks(mut self) -> Self {
        self.in_process_webhooks = true;
        self
    }

    /// Serves `/metrics`, `/healthz` and `/readyz` on this address.
    pub fn metrics_addr(mut self, addr: std::net::SocketAddr) -> Self {
        self.metrics_addr = Some(addr);
        self
    }

    /// This replica's identity, in Events' `reportingInstance` (default:
    /// the leader election's identity, else the host name and process id).
    pub fn identity(mut self, identity: impl Into<String>) -> Self {
        self.identity = Some(identity.into());
        self
    }

    /// Reconciles only while holding the leader Lease (for several
    /// replicas); without it, the host always reconciles.
    pub fn leader_election(mut self, config: LeaderConfig) -> Self {
        self.leader = Some(config);
        self.scale_out = false;
        self
    }

    /// Spreads the modules across the replicas instead: each module
    /// reconciles on the replica holding its Lease
    /// `<config.name>-module-<module>`, and every replica holds at most
    /// `ceil(modules / replicas)` of them.
    pub fn scale_out(mut self, config: LeaderConfig) -> Self {
        self.leader = Some(config);
        self.scale_out = true;
        self
    }

    /// Watches a directory of `*.wasm` modules: every file is loaded at
    /// start, and every change afterwards is loaded live (see [`Host`] for
    /// the reload rules).
    pub fn watch_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.dirs.push(dir.into());
        self
    }

    /// Loads modules from ConfigMaps labelled `rekon.dev/module` (see
    /// [`pack`](crate::pack)) in these namespaces (every namespace when
    /// empty), live: a new version is loaded, a deleted ConfigMap unloads
    /// its module.
    pub fn watch_configmaps(mut self, namespaces: Vec<String>) -> Self {
        self.configmaps = Some(namespaces);
        self
    }

    /// Starts the host: loads the modules (each compiled in the
    /// background; each module's controller starts as soon as it is
    /// ready; one that fails is reported and skipped, never fatal),
    /// watches the module sources, and returns once every module given or
    /// found at start has been loaded or refused.
    pub async fn start(mut self) -> Result<Host, HostError> {
        // The shadows the configuration names, checked before anything
        // starts; those no other source provides are read here.
        let shadows = super::shadows::configured_shadows(&self.config, &self.modules, &self.dirs)?;
        self.modules.extend(shadows);
        let client = match self.client {
            Some(client) => client,
            None => kube::Client::try_default()
                .await
                .map_err(HostError::Client)?,
        };
        let engine = Engine::new(self.engine)?;
        let metrics = Arc::new(Metrics::new());
        let rollouts = Arc::new(Rollouts::new(metrics.clone()));
        let recordings = Arc::new(Recordings::default());
        let admin = Arc::new(Admin::new(rollouts.clone(), recordings.clone()));
        let telemetry = match self.metrics_addr {
            Some(addr) => Some(serve_telemetry(addr, metrics.clone(), admin).await?),
            None => None,
        };
        let identity = self
            .identity
            .or_else(|| self.leader.as_ref().map(|l| l.identity.clone()))
            .unwrap_or_else(default_identity);
        let recorder = Recorder::start(client.clone(), identity, metrics.clone());
        let (election_stop, election_stopped) = watch::channel(false);
        let replicas = self.leader.clone();
        let sharded = self.config.modules.values().any(|m| m.sharding.is_some());
        let (leaders, shards, election) = elect(
            client.clone(),
            self.leader,
            self.scale_out,
            sharded,
            metrics.clone(),
            election_stopped,
        );
        let (namespace, triggers) = match self.uninstall_triggers {
            Some((namespace, triggers)) => {
                let triggers =
                    crate::webhook::uninstall::Triggers::new(client.clone(), &namespace, triggers);
                (namespace, triggers)
            }
            None => (
                replicas
                    .as_ref()
                    .map_or_else(|| "default".to_string(), |r| r.namespace.clone()),
                crate::webhook::uninstall::Triggers::none(),
            ),
        };
        let discovery = Arc::new(Discovery::new(client.clone()));
        let informers = Arc::new(Informers::new(discovery.clone()));
        let shared = Shared {
            informers: informers.clone(),
            cluster: Arc::new(KubeCluster::new(
                discovery.clone(),
                informers,
                recorder.clone(),
            )),
            leaders,
            shards,
            metrics: metrics.clone(),
        };
        let stats = Arc::new(DispatchStats::default());
        let mut supervisor = Supervisor::new(
            shared.clone(),
            self.config.clone(),
            self.controller,
            stats.clone(),
            rollouts.clone(),
            recordings,
        );
        if self.install_crds {
            supervisor = supervisor.install_crds(client.clone());
        }
        if !self.no_migrate {
            let config = crate::migrate::MigrateConfig {
                namespace: namespace.clone(),
                lease_prefix: replicas
                    .as_ref()
                    .map_or_else(|| "rekon".to_string(), |r| r.name.clone()),
                ..crate::migrate::MigrateConfig::default()
            };
            supervisor = supervisor.migrate(client.clone(), config);
        }
        supervisor =
            supervisor.webhooks_served(self.in_process_webhooks || self.webhooks.is_some());
        // Webhooks are served before modules load, so the first version of
        // each answers at once; readiness waits for the listener.
        let (loaded, loaded_receiver) = watch::channel(false);
        let webhooks = match self.webhooks {
            Some(config) => Some({
                let endpoint = config.endpoint.clone();
                crate::webhook::start(
                    config,
                    crate::webhook::Context {
                        client: client.clone(),
                        discovery: discovery.clone(),
                        informers: shared.informers.clone(),
                        leaders: shared.leaders.clone(),
                        replicas,
                        triggers: triggers.clone(),
                        loaded: loaded_receiver,
                    },
                    crate::webhook::serve::Served {
                        uninstall: (!triggers.is_empty()).then(|| (triggers.clone(), endpoint)),
                        modules: supervisor.webhooks(),
                        cluster: shared.cluster.clone(),
                        metrics: metrics.clone(),
                    },
                )
                .await?
            }),
            None => None,
        };
        // Which version serves is the rollout state's to say: known
        // before any version loads.
        let followed = if self.rollouts_in_memory {
            None
        } else {
            super::rollouts::keep(&client, &shared, &rollouts, &namespace).await
        };
        let (watchers, events, configmaps_synced) =
            watch_sources(&self.dirs, self.configmaps, &shared);
        let mut loader = Loader::new(engine, self.config);
        let states = followed.map(|(states, changes)| {
            for (module, state) in states {
                loader.state(&module, Some(state));
            }
            changes
        });
        for (origin, bytes) in self.modules {
            loader.event(upsert(Origin::Given(origin), bytes));
        }
        let events = load_initial(
            &mut loader,
            events,
            &supervisor,
            !self.dirs.is_empty(),
            configmaps_synced,
        )
        .await;
        for native in self.natives {
            supervisor.start_native(native);
        }
        supervisor.check_configuration();
        metrics.modules_loaded();
        loaded.send_replace(true);
        let election = election.map(tokio::spawn);
        let (commands_tx, commands) = mpsc::unbounded_channel();
        rollouts.command_to(commands_tx);
        let driver = tokio::spawn(drive(loader, events, commands, states, supervisor.clone()));
        Ok(Host {
            supervisor,
            stats,
            metrics,
            cluster: shared.cluster.clone(),
            election_stop,
            election,
            telemetry,
            driver,
            recorder,
            webhooks,
            triggers,
            uninstall_namespace: namespace,
            _loaded: loaded,
            _watchers: watchers,
        })
    }
}
