//! The supervisor: runs the versions the loader validated. One controller
//! per module; a new version takes over the informers of the running one
//! (no relist, no wait), after the running one's reconciles in flight have
//! finished. Each module swaps on its own, so a slow stop never holds up
//! another module, and [`Supervisor::modules`] answers at any time.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use crate::config::HostConfig;
use crate::contract::{EventType, ObjectRef};
use crate::controller::{self, ControllerConfig, Shared, Start};
use crate::dispatch::{Dispatch, DispatchStats, Dispatcher, NativeReconciler};
use crate::loader::{Decision, Version};
use crate::names::{config_map_kind, truncate};
use crate::replay::{Recording, Recordings};
use crate::rollout::{Rollouts, ShadowVersion};
use crate::runtime::Module;
use crate::source::Origin;
use crate::telemetry::{InfoLabels, ReasonLabel};
use crate::webhook::WebhookModules;

/// How long a ConfigMap module's version serves before the parts earlier
/// versions left behind are deleted: well past the time the parts of one
/// `kubectl apply` take to arrive.
pub(crate) const STALE_PARTS_AFTER: std::time::Duration = std::time::Duration::from_secs(20);

/// A controller task and how to stop it.
struct Controller {
    name: String,
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Controller {
    fn spawn(dispatch: Dispatch, shared: Shared, start: Start) -> Controller {
        let (stop, stopped) = watch::channel(false);
        let name = dispatch.serving().name().to_string();
        let task = tokio::spawn(controller::run(dispatch, shared, start, stopped));
        Controller { name, stop, task }
    }

    /// Stops taking work and waits for reconciles in flight.
    async fn stop(self) {
        self.stop.send_replace(true);
        if let Err(error) = self.task.await {
            tracing::error!(module = %self.name, error = %error, "controller task failed");
        }
    }
}

/// A module version being run, and where it came from.
struct Running {
    origin: Origin,
    module: Module,
    /// None for a module that only serves webhooks.
    controller: Option<Controller>,
}

/// One module's place: its running version, swapped under its own lock.
type Slot = Arc<tokio::sync::Mutex<Option<Running>>>;

/// Runs the validated versions. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Supervisor {
    shared: Shared,
    config: HostConfig,
    controller: ControllerConfig,
    stats: Arc<DispatchStats>,
    /// Each module's rollout: its shadow, what it did.
    rollouts: Arc<Rollouts>,
    /// Each module's recorded reconciles, when the operator asks for them.
    recordings: Arc<Recordings>,
    slots: Arc<Mutex<BTreeMap<String, Slot>>>,
    /// The versions running, for [`Supervisor::modules`].
    modules: Arc<Mutex<BTreeMap<String, Module>>>,
    natives: Arc<Mutex<Vec<Controller>>>,
    /// Every version refused so far, as `origin: error`.
    failures: Arc<Mutex<Vec<String>>>,
    /// The versions serving webhooks.
    webhooks: WebhookModules,
    /// Applies the CRDs each module ships before its controller starts
    /// (`--install-crds`).
    install_crds: Option<kube::Client>,
    /// Whether the modules' webhooks are served (by this host's webhook
    /// server, or in process by `rekon dev`'s API server); if not, a
    /// module that needs them is reported.
    webhooks_served: bool,
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
                    })
                    .await
                });
            }
            Decision::Unshadow { name, origin } => {
                if self.rollouts.of(&name).end_shadow_from(&origin) {
                    tracing::info!(%origin, module = %name, "shadow unloaded: its source is gone");
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
        self.rollouts.of(&name).set_shadow(Some(ShadowVersion {
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
        } = version;
        if let Some(previous) = replaces {
            self.unload(&previous, &origin).await;
        }
        let name = module.name().to_string();
        // A promoted shadow serves now: it shadows no more.
        self.rollouts.of(&name).end_shadow_from(&origin);
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
        let mut config = self.controller.clone();
        if let Some(concurrency) = self.config.modules.get(&name).and_then(|m| m.concurrency) {
            config.concurrency = Some(concurrency.max(1));
        }
        let record = self
            .config
            .modules
            .get(&name)
            .and_then(|m| m.record.clone())
            .or_else(|| {
                marked.map(|last| crate::config::RecordConfig {
                    last: Some(last),
                    file: None,
                })
            });
        let recording = record.and_then(|record| {
            self.recordings.of(&name, || {
                let last = record.last.unwrap_or(crate::config::DEFAULT_RECORDED);
                Recording::new(last, record.file.as_deref())
                    .inspect_err(|error| {
                        tracing::error!(module = %name, error = %error, "cannot open the recording file: reconciles are not recorded");
                    })
                    .ok()
            })
        });
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
                tokio::time::sleep(STALE_PARTS_AFTER).await;
                this.prune_parts(&origin, &digest).await;
            });
        }
        *running = Some(Running {
            origin,
            module,
            controller,
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

    /// Objects that still carry an unloaded module's finalizer cannot be
    /// deleted until it comes back: say so.
    async fn warn_stuck_finalizers(&self, module: &Module) {
        let manifest = module.manifest();
        let Some(finalizer) = &manifest.finalizer else {
            return;
        };
        let primary = self.shared.informers.running(
            &manifest.primary,
            manifest.primary_selector.as_deref(),
            None,
        );
        let Some(primary) = primary else {
            return;
        };
        let stuck = primary
            .list(None)
            .iter()
            .filter(|o| o.has_finalizer(finalizer))
            .count();
        if stuck > 0 {
            tracing::warn!(
                module = %manifest.name,
                finalizer = %finalizer,
                objects = stuck,
                "objects still carry the unloaded module's finalizer: they will not be deleted until it is removed or the module returns"
            );
        }
    }

    /// Reports a version that cannot be run: an error log,
    /// `rekon_module_load_failures_total`, and a Warning Event on the
    /// ConfigMap it came from. What was serving keeps serving.
    pub async fn refuse(
        &self,
        origin: &Origin,
        reason: &str,
        message: &str,
        serving: Option<String>,
    ) {
        let shown = serving.as_deref().unwrap_or("nothing");
        tracing::error!(%origin, error = %message, reason, serving = %shown, "module refused; the last good version keeps serving");
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
        if let Origin::ConfigMap { namespace, name } = origin
            && self.shared.leaders.speaks_for(serving.as_deref())
        {
            let regarding = ObjectRef {
                kind: config_map_kind(),
                namespace: Some(namespace.clone()),
                name: name.clone(),
            };
            let note = format!("module refused ({reason}): {message}; serving: {shown}");
            let _ = self
                .shared
                .cluster
                .record_event(
                    &regarding,
                    EventType::Warning,
                    "ModuleRejected",
                    &truncate(note, 1024),
                    "rekon-host",
                )
                .await;
        }
    }

    /// Says loudly that a module's webhooks or conversions go unserved:
    /// an error log, and a Warning Event `WebhooksNotServed` on each CRD it
    /// converts and on the ConfigMap it came from.
    async fn report_unserved(&self, module: &Module, origin: &Origin) {
        let unserved = crate::webhook::unserved(module);
        if unserved.is_empty() {
            return;
        }
        for said in &unserved {
            tracing::warn!(module = %module.name(), %origin, "{said}");
        }
        if !self.shared.leaders.speaks_for(Some(module.name())) {
            return;
        }
        let mut regarding: Vec<ObjectRef> = module
            .webhooks()
            .conversions
            .iter()
            .map(|c| ObjectRef {
                kind: crate::contract::Gvk {
                    group: "apiextensions.k8s.io".into(),
                    version: "v1".into(),
                    kind: "CustomResourceDefinition".into(),
                },
                namespace: None,
                name: format!("{}.{}", crate::names::plural_of(&c.kind.kind), c.kind.group),
            })
            .collect();
        if let Origin::ConfigMap { namespace, name } = origin {
            regarding.push(ObjectRef {
                kind: config_map_kind(),
                namespace: Some(namespace.clone()),
                name: name.clone(),
            });
        }
        let note = truncate(unserved.join("; "), 1024);
        for object in regarding {
            let _ = self
                .shared
                .cluster
                .record_event(
                    &object,
                    EventType::Warning,
                    "WebhooksNotServed",
                    &note,
                    "rekon-host",
                )
                .await;
        }
    }

    /// Deletes the parts earlier versions of a ConfigMap module left behind
    /// (a version in fewer parts does not overwrite them all), once the
    /// version `digest` has served for [`STALE_PARTS_AFTER`] and while this
    /// replica speaks for the module: a user's `kubectl apply` of module
    /// files leaves no ConfigMap behind.
    async fn prune_parts(&self, origin: &Origin, digest: &str) {
        let Origin::ConfigMap { namespace, name } = origin else {
            return;
        };
        let module = {
            let slots = self.slots.lock().expect("slots lock");
            slots.values().cloned().collect::<Vec<Slot>>()
        };
        let mut serving = None;
        for slot in module {
            if let Some(running) = slot.lock().await.as_ref()
                && running.origin == *origin
                && running.module.digest() == digest
            {
                serving = Some(running.module.name().to_string());
            }
        }
        let Some(module) = serving else { return };
        if !self.shared.leaders.speaks_for(Some(&module)) {
            return;
        }
        let kind = config_map_kind();
        let label = Some(crate::source::pack::MODULE_LABEL);
        let Some(informer) = self
            .shared
            .informers
            .running(&kind, label, Some(namespace))
            .or_else(|| self.shared.informers.running(&kind, label, None))
        else {
            return;
        };
        let configmaps: Vec<serde_json::Value> = informer
            .list(Some(namespace))
            .iter()
            .filter_map(|c| serde_json::from_str(&c.json).ok())
            .collect();
        let Some(manifest) = configmaps
            .iter()
            .find(|c| c["metadata"]["name"] == name.as_str())
        else {
            return;
        };
        for part in crate::source::pack::stale_parts(manifest, &configmaps) {
            let target = ObjectRef {
                kind: kind.clone(),
                namespace: Some(namespace.clone()),
                name: part.clone(),
            };
            match self.shared.cluster.delete(&target, None).await {
                Ok(()) => {
                    tracing::info!(%origin, %module, part = %part, "deleted a part an earlier version of the module left behind")
                }
                Err(error) => {
                    tracing::warn!(%origin, %module, part = %part, error = %error.message, "cannot delete a part an earlier version of the module left behind")
                }
            }
        }
    }

    /// Starts a reconciler compiled into the host (not reloadable).
    pub fn start_native(&self, native: NativeReconciler) {
        let dispatcher = self.dispatch(Dispatcher::native(native, self.stats.clone()), None);
        let start = Start {
            config: self.controller.clone(),
            reloaded: false,
            handed_over: Vec::new(),
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

    /// Warns about modules the configuration names that are not running.
    pub fn check_configuration(&self) {
        let modules = self.modules.lock().expect("modules lock");
        for name in self.config.modules.keys() {
            if !modules.contains_key(name) {
                tracing::warn!(module = %name, "the configuration names a module that is not loaded");
            }
        }
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

fn info_labels(module: &Module) -> InfoLabels {
    InfoLabels {
        module: module.name().to_string(),
        version: module.manifest().version.clone(),
        digest: module.digest().to_string(),
    }
}
