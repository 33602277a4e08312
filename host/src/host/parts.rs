//! The parts of a ConfigMap module that earlier versions left behind,
//! deleted once a version has served a while.

use super::running::Slot;
use super::supervisor::Supervisor;
use crate::contract::ObjectRef;
use crate::names::config_map_kind;
use crate::source::Origin;

/// How long a ConfigMap module's version serves before the parts earlier
/// versions left behind are deleted: well past the time the parts of one
/// `kubectl apply` take to arrive.
pub(crate) const STALE_PARTS_AFTER: std::time::Duration = std::time::Duration::from_secs(20);

impl Supervisor {
    /// Deletes the parts earlier versions of a ConfigMap module left behind
    /// (a version in fewer parts does not overwrite them all), once the
    /// version `digest` has served for [`STALE_PARTS_AFTER`] and while this
    /// replica speaks for the module: a user's `kubectl apply` of module
    /// files leaves no ConfigMap behind.
    pub(super) async fn prune_parts(&self, origin: &Origin, digest: &str) {
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
}
