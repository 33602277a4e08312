//! [`MemoryCluster`]: the host library's [`Cluster`] over the in-memory
//! object store (`rekon-store`), for `rekon reconcile`, benchmarks and tests. Every call
//! goes through `rekon_store::calls`, the adapter the SDK's test harness
//! uses too, so both answer as the API server does.

use rekon_host::Cluster;
use rekon_host::contract::{
    ApiError, EventType, Gvk, Index, ObjectRef, PatchType, Propagation, api_error,
};
use rekon_host::events::event_object;
use rekon_rules::KindRef;
use rekon_store::calls::{self, CallPatch, TargetRef};
use rekon_store::{Propagation as StorePropagation, Status, Store, StoreConfig};
use serde_json::Value;

/// A cluster held in memory, with Kubernetes semantics (resourceVersion,
/// generation, finalizers, owner references, selectors): the same store the
/// in-memory API server and the SDK's test harness use.
#[derive(Clone)]
pub struct MemoryCluster {
    store: Store,
}

impl std::fmt::Debug for MemoryCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryCluster").finish_non_exhaustive()
    }
}

impl Default for MemoryCluster {
    fn default() -> Self {
        MemoryCluster::new(Store::new(StoreConfig::default()))
    }
}

impl MemoryCluster {
    /// Serves host calls from `store`.
    pub fn new(store: Store) -> MemoryCluster {
        MemoryCluster { store }
    }

    /// The underlying store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Adds (or replaces) an object, registering its kind when the store
    /// does not serve it (plural `<kind>s`, namespaced if the object has a
    /// namespace), so fixtures need no CRD. The namespace is created, and
    /// a `status` given is kept.
    pub fn seed(&self, object: Value) -> Result<Value, ApiError> {
        calls::seed(&self.store, object).map_err(from_status)
    }
}

fn from_status(status: Status) -> ApiError {
    api_error(status.code, &status.reason, &status.message)
}

fn kind_ref(kind: &Gvk) -> KindRef<'_> {
    KindRef::new(&kind.group, &kind.version, &kind.kind)
}

fn target_ref(target: &ObjectRef) -> TargetRef<'_> {
    TargetRef {
        kind: kind_ref(&target.kind),
        namespace: target.namespace.as_deref(),
        name: &target.name,
    }
}

#[async_trait::async_trait]
impl Cluster for MemoryCluster {
    async fn get(&self, target: &ObjectRef) -> Result<String, ApiError> {
        calls::get(&self.store, target_ref(target)).map_err(from_status)
    }

    async fn list(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        label_selector: Option<&str>,
    ) -> Result<Vec<String>, ApiError> {
        calls::list(&self.store, kind_ref(kind), namespace, label_selector).map_err(from_status)
    }

    async fn list_by_index(
        &self,
        index: &Index,
        value: &str,
        namespace: Option<&str>,
    ) -> Result<Vec<String>, ApiError> {
        let key = index.key.as_rule();
        calls::list_by_index(&self.store, kind_ref(&index.kind), key, value, namespace)
            .map_err(from_status)
    }

    async fn create(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        object: &str,
        field_manager: &str,
    ) -> Result<String, ApiError> {
        calls::create(
            &self.store,
            kind_ref(kind),
            namespace,
            object,
            field_manager,
        )
        .map_err(from_status)
    }

    async fn replace(
        &self,
        target: &ObjectRef,
        object: &str,
        status: bool,
        field_manager: &str,
    ) -> Result<String, ApiError> {
        calls::replace(
            &self.store,
            target_ref(target),
            object,
            status,
            field_manager,
        )
        .map_err(from_status)
    }

    async fn patch(
        &self,
        target: &ObjectRef,
        patch_type: &PatchType,
        body: &str,
        status: bool,
        field_manager: &str,
    ) -> Result<String, ApiError> {
        let (patch, manager) = match patch_type {
            PatchType::Merge => (CallPatch::Merge, field_manager),
            PatchType::Json => (CallPatch::Json, field_manager),
            PatchType::Apply(options) => (
                CallPatch::Apply {
                    force: options.force,
                },
                options.field_manager.as_deref().unwrap_or(field_manager),
            ),
        };
        calls::patch(
            &self.store,
            target_ref(target),
            &patch,
            body,
            status,
            manager,
        )
        .map_err(from_status)
    }

    async fn delete(
        &self,
        target: &ObjectRef,
        propagation: Option<Propagation>,
    ) -> Result<(), ApiError> {
        let propagation = propagation.map(|p| match p {
            Propagation::Background => StorePropagation::Background,
            Propagation::Foreground => StorePropagation::Foreground,
            Propagation::Orphan => StorePropagation::Orphan,
        });
        calls::delete(&self.store, target_ref(target), propagation).map_err(from_status)
    }

    async fn record_event(
        &self,
        regarding: &ObjectRef,
        event_type: EventType,
        reason: &str,
        message: &str,
        component: &str,
    ) -> Result<(), ApiError> {
        calls::check_event_reason(reason).map_err(from_status)?;
        let uid = calls::get(&self.store, target_ref(regarding))
            .ok()
            .and_then(|o| serde_json::from_str::<Value>(&o).ok())
            .and_then(|o| o["metadata"]["uid"].as_str().map(str::to_string));
        let event = event_object(
            regarding,
            uid.as_deref(),
            event_type,
            reason,
            message,
            component,
        );
        // Best effort, as in a cluster: an Event the store refuses (its
        // namespace is being deleted) is dropped.
        let event = serde_json::to_value(&event).expect("an Event serialises");
        if let Err(status) = self.store.apply_object(event) {
            tracing::debug!(reason, error = %status.message, "event dropped: the store refused it");
        }
        Ok(())
    }
}
