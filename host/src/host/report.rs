//! What the supervisor tells the operator: a version refused (log,
//! metric, an Event on its ConfigMap), a module whose webhooks nobody
//! serves, finalizers an unloaded module leaves, a configuration naming
//! modules that are not there.

use super::supervisor::Supervisor;
use crate::contract::{EventType, ObjectRef};
use crate::names::{config_map_kind, truncate};
use crate::runtime::Module;
use crate::source::Origin;
use crate::telemetry::ReasonLabel;

impl Supervisor {
    /// Objects that still carry an unloaded module's finalizer cannot be
    /// deleted until it comes back: say so.
    pub(super) async fn warn_stuck_finalizers(&self, module: &Module) {
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
    pub(super) async fn report_unserved(&self, module: &Module, origin: &Origin) {
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

    /// Warns about modules the configuration names that are not running.
    pub fn check_configuration(&self) {
        let modules = self.modules.lock().expect("modules lock");
        for name in self.config.modules.keys() {
            if !modules.contains_key(name) {
                tracing::warn!(module = %name, "the configuration names a module that is not loaded");
            }
        }
    }
}
