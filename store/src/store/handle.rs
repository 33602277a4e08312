//! The [`Store`] handle: a store with the built-in namespaces, its lock,
//! reset, and the converter it installs.

use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::json;

use crate::apis::scheduling::priorityclass::system_classes;
use crate::meta::types::{StoreConfig, WriteOptions};
use crate::registry::registry::Registry;
use crate::resource::builtin::builtin_resources;
use crate::resource::conversion::Converter;

/// The in-memory object store. Cheap to clone (an `Arc` inside) and thread-safe.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Mutex<Registry>>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").finish_non_exhaustive()
    }
}

impl Store {
    /// A store with the built-in kinds registered, the namespaces
    /// `default`, `kube-system`, `kube-public` and `kube-node-lease`, and
    /// the system priority classes.
    pub fn new(config: StoreConfig) -> Store {
        let store = Store {
            inner: Arc::new(Mutex::new(Registry::new(config))),
        };
        store.seed();
        store
    }

    pub(crate) fn seed(&self) {
        let ns = builtin_resources()
            .into_iter()
            .find(|r| r.plural == "namespaces")
            .expect("namespaces is built in");
        for name in ["default", "kube-system", "kube-public", "kube-node-lease"] {
            let opts = WriteOptions {
                field_manager: Some("kube-apiserver".into()),
                ..WriteOptions::default()
            };
            // The store is empty, so creating these cannot fail.
            let _ = self.create(&ns, None, json!({"metadata": {"name": name}}), &opts);
        }
        // The system priority classes, as the scheduling storage's
        // post-start hook creates them.
        let priority_classes = builtin_resources()
            .into_iter()
            .find(|r| r.plural == "priorityclasses")
            .expect("priorityclasses is built in");
        for class in system_classes() {
            let opts = WriteOptions {
                field_manager: Some("kube-apiserver".into()),
                ..WriteOptions::default()
            };
            let _ = self.create(&priority_classes, None, class, &opts);
        }
        // The control plane's health, as `kubectl get componentstatuses`
        // shows it (the kind takes no writes: only get and list).
        let statuses = builtin_resources()
            .into_iter()
            .find(|r| r.plural == "componentstatuses")
            .expect("componentstatuses is built in");
        for name in ["scheduler", "controller-manager", "etcd-0"] {
            let status = json!({
                "metadata": {"name": name},
                "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}],
            });
            let _ = self.create(&statuses, None, status, &WriteOptions::default());
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Registry> {
        // A panic while holding the lock leaves consistent data (every write
        // is applied at once), so a poisoned lock is still usable.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Forgets every object and every open watch, keeping the resourceVersion
    /// counter moving forward and the registered resources; the history is
    /// compacted so resuming watches get 410. Built-in namespaces are recreated.
    pub fn reset(&self) {
        self.lock().reset();
        self.seed();
    }

    /// Installs (or with `None` removes) the converter of custom resources'
    /// versions. Call it again when what it converts changes.
    pub fn set_converter(&self, converter: Option<Arc<dyn Converter>>) {
        let mut inner = self.lock();
        inner.converter = converter;
        inner.apply_converter();
    }
}
