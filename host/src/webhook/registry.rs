//! The modules that serve webhooks in this process, by name: a new version
//! takes the place of the running one at once (it answers the next
//! review), a module that goes stops answering.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use crate::runtime::Module;

/// The modules serving webhooks, by name. Cheap to clone: clones share
/// the set.
#[derive(Clone)]
pub struct WebhookModules(
    Arc<RwLock<BTreeMap<String, Module>>>,
    tokio::sync::watch::Sender<u64>,
);

impl Default for WebhookModules {
    fn default() -> Self {
        WebhookModules(Arc::default(), tokio::sync::watch::Sender::new(0))
    }
}

impl std::fmt::Debug for WebhookModules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.names()).finish()
    }
}

impl WebhookModules {
    /// Serves `module`'s webhooks (in place of its previous version's);
    /// a version that declares none takes the module out.
    pub fn set(&self, module: &Module) {
        let webhooks = module.webhooks();
        let serves = !(webhooks.mutating.is_empty()
            && webhooks.validating.is_empty()
            && webhooks.conversions.is_empty());
        let mut modules = self.0.write().unwrap_or_else(|e| e.into_inner());
        if serves {
            modules.insert(module.name().to_string(), module.clone());
        } else {
            modules.remove(module.name());
        }
        drop(modules);
        self.1.send_modify(|n| *n += 1);
    }

    /// Told of every change of the set.
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.1.subscribe()
    }

    /// Stops serving the module `name`.
    pub fn remove(&self, name: &str) {
        let removed = self
            .0
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name);
        if removed.is_some() {
            self.1.send_modify(|n| *n += 1);
        }
    }

    /// The module `name`, if it serves webhooks.
    pub fn get(&self, name: &str) -> Option<Module> {
        self.0
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .cloned()
    }

    /// The module that converts `kind` in `group` between its versions.
    pub fn converting(&self, group: &str, kind: &str) -> Option<Module> {
        self.all()
            .into_iter()
            .find(|m| m.webhooks().converts(group, kind))
    }

    /// Every module serving webhooks, by name.
    pub fn all(&self) -> Vec<Module> {
        self.0
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .cloned()
            .collect()
    }

    /// The names of the modules serving webhooks.
    pub fn names(&self) -> Vec<String> {
        self.0
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .keys()
            .cloned()
            .collect()
    }
}
