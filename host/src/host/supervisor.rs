//! The supervisor: runs the versions the loader validated. One controller
//! per module; a new version takes over the informers of the running one
//! (no relist, no wait), after the running one's reconciles in flight have
//! finished. Each module swaps on its own, so a slow stop never holds up
//! another module, and [`Supervisor::modules`] answers at any time.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use super::running::info_labels;
use super::running::{Controller, Running, Slot};
use crate::config::HostConfig;
use crate::controller::{self, ControllerConfig, Shared, Start};
use crate::dispatch::{Dispatch, DispatchStats, Dispatcher, NativeReconciler};
use crate::loader::{Decision, Version};
use crate::replay::{Recording, Recordings};
use crate::rollout::resource::VersionRef;
use crate::rollout::{Rollouts, ShadowVersion};
use crate::runtime::Module;
use crate::source::Origin;
use crate::webhook::WebhookModules;

/// Runs the validated versions. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Supervisor {
    pub(super) shared: Shared,
    pub(super) config: HostConfig,
    pub(super) controller: ControllerConfig,
    pub(super) stats: Arc<DispatchStats>,
    /// Each module's rollout: its shadow, what it did.
    pub(super) rollouts: Arc<Rollouts>,
    /// Each module's recorded reconciles, when the operator asks for them.
    pub(super) recordings: Arc<Recordings>,
    pub(super) slots: Arc<Mutex<BTreeMap<String, Slot>>>,
    /// The versions running, for [`Supervisor::modules`].
    pub(super) modules: Arc<Mutex<BTreeMap<String, Module>>>,
    pub(super) natives: Arc<Mutex<Vec<Controller>>>,
    /// Every version refused so far, as `origin: error`.
    pub(super) failures: Arc<Mutex<Vec<String>>>,
    /// The versions serving webhooks.
    pub(super) webhooks: WebhookModules,
    /// Applies the CRDs each module ships before its controller starts
    /// (`--install-crds`).
    pub(super) install_crds: Option<kube::Client>,
    /// Migrates the CRDs each module ships to their storage version.
    pub(super) migrate: Option<(kube::Client, crate::migrate::MigrateConfig)>,
    /// Whether the modules' webhooks are served (by this host's webhook
    /// server, or in process by `rekon dev`'s API server); if not, a
    /// module that needs them is reported.
    pub(super) webhooks_served: bool,
}

impl Supervisor {
    pub fn new(
        shared: Shared,
        config: HostConfig,
        controller: ControllerConfig,
        stats: Arc<DispatchStats>,
        rollouts: Arc<Rollouts>,
        recordings: Arc<Recordings>,
    ) -> Supervisor {
        Supervisor {
            shared,
            config,
            controller,
            stats,
            rollouts,
            recordings,
            slots: Arc::default(),
            modules: Arc::default(),
            natives: Arc::default(),
            failures: Arc::default(),
            webhooks: WebhookModules::default(),
            install_crds: None,
            migrate: None,
            webhooks_served: false,
        }
    }

    /// Whether the modules' webhooks are served.
    pub fn webhooks_served(mut self, served: bool) -> Supervisor {
        self.webhooks_served = served;
        self
    }

    /// Applies the CRDs each module ships, with this client, before its
    /// controller starts.
    pub fn install_crds(mut self, client: kube::Client) -> Supervisor {
        self.install_crds = Some(client);
        self
    }

    /// Migrates the CRDs each module ships, with this client.
    pub fn migrate(mut self, client: kube::Client, config: crate::migrate::MigrateConfig) -> Self {
        self.migrate = Some((client, config));
        self
    }

    /// The module versions serving webhooks.
    pub fn webhooks(&self) -> WebhookModules {
        self.webhooks.clone()
    }

    /// The module versions running.
    pub fn modules(&self) -> Vec<Module> {
        self.modules
            .lock()
            .expect("modules lock")
            .values()
            .cloned()
            .collect()
    }

    /// The versions refused so far, as `origin: why`.
    pub fn failures(&self) -> Vec<String> {
        self.failures.lock().expect("failures lock").clone()
    }

    /// Carries out one of the loader's decisions. Returns at once: the
    /// module's swap runs on its own.
    pub fn decide(&self, decision: Decision) {
        match decision {
            Decision::Install(version) => {
                let this = self.clone();
                tokio::spawn(async move { this.install(version).await });
            }
            Decision::Unload { name, origin } => {
                let this = self.clone();
                tokio::spawn(async move { this.unload(&name, &origin).await });
            }
            Decision::Shadow {
                version,
                canary,
                policy,
            } => self.shadow(version, canary, policy),
            Decision::Promote {
                name,
                origin,
                record,
            } => {
                let rollout = self.rollouts.of(&name);
                let Some(shadow) = rollout.shadow_from(&origin) else {
                    return;
                };
                tracing::info!(%origin, module = %name, version = %shadow.version.manifest().version, "shadow promoted: it serves now");
                let this = self.clone();
                tokio::spawn(async move {
                    this.install(Version {
                        origin,
                        module: shadow.version,
                        reload: true,
                        replaces: None,
                        record,
                        promoted_by_source: false,
                    })
                    .await
                });
            }
            Decision::Unshadow { name, origin, why } => {
                if self.rollouts.of(&name).end_shadow_from(&origin) {
                    tracing::info!(%origin, module = %name, "shadow unloaded: {why}");
                }
            }
            Decision::Refuse {
                origin,
                reason,
                message,
                serving,
            } => {
                let this = self.clone();
                tokio::spawn(async move { this.refuse(&origin, reason, &message, serving).await });
            }
        }
    }

    /// Runs `version` as the shadow of its module (in place of the shadow
    /// it had): it reconciles what the serving version reconciles, its
    /// writes dry runs.
    /// Its `policy` is its source's, or the operator configuration's.
    fn shadow(&self, version: Version, canary: u8, policy: Option<crate::config::PolicyConfig>) {
        let Version { origin, module, .. } = version;
        let name = module.name().to_string();
        tracing::info!(
            %origin,
            module = %name,
            version = %module.manifest().version,
            digest = module.digest(),
            canary_percent = canary,
            "shadow loaded: it reconciles beside the serving version, its writes dry runs"
        );
        let rollout = self.rollouts.of(&name);
        rollout.set_shadow(Some(ShadowVersion {
            module: Dispatcher::wasm(module.clone(), Arc::default()),
            version: module,
            origin: origin.to_string(),
            canary,
            policy: policy
                .or_else(|| {
                    self.config
                        .modules
                        .get(&name)
                        .and_then(|m| m.policy.clone())
                })
                .unwrap_or_default(),
        }));
        rollout.record();
    }

    fn slot(&self, name: &str) -> Slot {
        self.slots
            .lock()
            .expect("slots lock")
            .entry(name.to_string())
            .or_default()
            .clone()
    }

    /// Runs a new version, in place of the running one of the same module.
    pub async fn install(&self, version: Version) {
        let Version {
            origin,
            module,
            reload,
            replaces,
            record: marked,
            promoted_by_source,
        } = version;
        if let Some(previous) = replaces {
            self.unload(&previous, &origin).await;
        }
        let name = module.name().to_string();
        // A promoted shadow serves now (by its source: written to the state).
        let rollout = self.rollouts.of(&name);
        if promoted_by_source && rollout.shadow_from(&origin).is_some() {
            let why = "its source marks it to serve (rekon.dev/rollout taken off)";
            rollout.write_decision(crate::rollout::Command::Promote, "source", why.into());
        }
        rollout.end_shadow_from(&origin);
        let slot = self.slot(&name);
        let mut running = slot.lock().await;
        if let Some(client) = &self.install_crds {
            super::crds::install(client, &module).await;
        }
        // The new version's informers, taken from the running version
        // before it stops: they stay up, synced, across the swap.
        let handed_over = self.hold_informers(&module).await;
        // The new version answers the next review at once.
        self.webhooks.set(&module);
        if !self.webhooks_served {
            self.report_unserved(&module, &origin).await;
        }
        // Another source's version takes over (a promotion): what the
        // module records goes on being recorded.
        let moved = running.as_ref().is_some_and(|r| r.origin != origin);
        if let Some(old) = running.take() {
            self.forget_info(&old.module);
            if let Some(controller) = old.controller {
                controller.stop().await;
            }
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
        let config = self.controller_config(&name);
        let recording = self.recording(&name, marked, moved);
        let controller = module.reconciles().then(|| {
            Controller::spawn(
                self.dispatch(
                    Dispatcher::wasm(module.clone(), self.stats.clone()),
                    recording,
                ),
                self.shared.clone(),
                Start {
                    config,
                    reloaded: reload,
                    handed_over,
                    sharding: self.sharding_of(&name),
                },
            )
        });
        self.modules
            .lock()
            .expect("modules lock")
            .insert(name, module.clone());
        if let Origin::ConfigMap { .. } = &origin {
            let this = self.clone();
            let (origin, digest) = (origin.clone(), module.digest().to_string());
            tokio::spawn(async move {
                tokio::time::sleep(super::parts::STALE_PARTS_AFTER).await;
                this.prune_parts(&origin, &digest).await;
            });
        }
        rollout.served(VersionRef {
            digest: module.digest().to_string(),
            version: module.manifest().version.clone(),
            source: origin.to_string(),
        });
        let migrations = self.migrate.as_ref().map(|(client, config)| {
            super::migrations::start(
                client.clone(),
                config.clone(),
                module.clone(),
                self.shared.cluster.clone(),
                self.shared.leaders.for_module(module.name()),
                self.shared.metrics.clone(),
            )
        });
        *running = Some(Running {
            origin,
            module,
            controller,
            _migrations: migrations,
        });
    }

    /// The informers a module's manifest needs that already run (held by
    /// the running version of the module, or by others).
    async fn hold_informers(&self, module: &Module) -> Vec<Arc<crate::informer::Informer>> {
        controller::wanted(module.manifest())
            .into_iter()
            .flat_map(|source| {
                let namespaces: Vec<Option<String>> = if source.namespaces.is_empty() {
                    vec![None]
                } else {
                    source.namespaces.iter().cloned().map(Some).collect()
                };
                namespaces
                    .into_iter()
                    .filter_map(|namespace| {
                        self.shared.informers.running_any(
                            &source.kind,
                            source.selector.as_deref(),
                            namespace.as_deref(),
                        )
                    })
                    .collect::<Vec<_>>()
            })
            .collect()
    }

    /// Stops the module `name` if `origin` provides it: the one removal path.
    pub async fn unload(&self, name: &str, origin: &Origin) {
        let slot = self.slot(name);
        let mut running = slot.lock().await;
        if running.as_ref().is_none_or(|r| r.origin != *origin) {
            return;
        }
        let Some(old) = running.take() else {
            return;
        };
        self.webhooks.remove(name);
        if let Some(controller) = old.controller {
            controller.stop().await;
        }
        self.shared.leaders.unload(name);
        self.forget_info(&old.module);
        self.shared.metrics.forget_module(name);
        tracing::info!(%origin, module = %name, "module unloaded: its source is gone");
        self.warn_stuck_finalizers(&old.module).await;
    }

    /// Stops a module whatever provides it; whether it was running.
    pub async fn stop_module(&self, name: &str) -> bool {
        let origin = {
            let slot = self.slot(name);
            let running = slot.lock().await;
            match running.as_ref() {
                Some(running) => running.origin.clone(),
                None => return false,
            }
        };
        self.unload(name, &origin).await;
        true
    }

    fn forget_info(&self, module: &Module) {
        self.shared.metrics.module_info.remove(&info_labels(module));
        self.modules
            .lock()
            .expect("modules lock")
            .remove(module.name());
    }

    /// Starts a reconciler compiled into the host (not reloadable).
    pub fn start_native(&self, native: NativeReconciler) {
        let dispatcher = self.dispatch(Dispatcher::native(native, self.stats.clone()), None);
        let sharding = self.sharding_of(dispatcher.serving().name());
        let start = Start {
            config: self.controller.clone(),
            reloaded: false,
            handed_over: Vec::new(),
            sharding,
        };
        let controller = Controller::spawn(dispatcher, self.shared.clone(), start);
        self.natives.lock().expect("natives lock").push(controller);
    }

    /// What a controller of `serving` dispatches into: with its module's
    /// rollout (which now says `serving` serves) and `recording`.
    fn dispatch(&self, serving: Dispatcher, recording: Option<Arc<Recording>>) -> Dispatch {
        let rollout = self.rollouts.of(serving.name());
        rollout.set_serving(Some(format!(
            "{} ({})",
            serving.manifest().version,
            serving.short_digest()
        )));
        Dispatch::new(serving, rollout, recording, self.shared.metrics.clone())
    }

    /// Stops every controller; reconciles in flight finish first.
    pub async fn stop_all(&self) {
        let slots: Vec<Slot> = self
            .slots
            .lock()
            .expect("slots lock")
            .values()
            .cloned()
            .collect();
        let mut controllers = Vec::new();
        // The modules keep answering reviews: the webhook server serves
        // until the host's shutdown is over.
        for slot in slots {
            if let Some(running) = slot.lock().await.take() {
                controllers.extend(running.controller);
            }
        }
        controllers.extend(self.natives.lock().expect("natives lock").drain(..));
        for controller in &controllers {
            controller.stop.send_replace(true);
        }
        futures::future::join_all(controllers.into_iter().map(Controller::stop)).await;
    }
}
