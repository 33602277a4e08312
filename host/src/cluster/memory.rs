//! [`MemoryCluster`]: the [`Cluster`] backend over the in-memory object store
//! (`rekon-apiserver`), for `rekon reconcile`, benchmarks and tests.

use rekon_store::{ListOptions, ResourceInfo, Status, Store, StoreConfig, WriteOptions};
use rekon_store::{PatchType as StorePatch, Propagation as StorePropagation};
use serde_json::Value;

use super::Cluster;
use super::events::event_object;
use crate::contract::{ApiError, EventType, Gvk, ObjectRef, PatchType, Propagation, api_error};
use crate::shared::{api_version, split_api_version};

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

    /// Adds (or replaces) an object, creating its kind when the store does
    /// not know it (a namespaced custom kind, plural `<kind>s`), so fixtures
    /// need no CRD.
    pub fn seed(&self, object: Value) -> Result<Value, ApiError> {
        let api_version = object["apiVersion"].as_str().unwrap_or_default();
        let kind = object["kind"].as_str().unwrap_or_default();
        let (group, version) = split_api_version(api_version);
        if !kind.is_empty()
            && kind != "CustomResourceDefinition"
            && self.store.resource_for_kind(group, version, kind).is_none()
        {
            let plural = format!("{}s", kind.to_lowercase());
            let mut info = ResourceInfo::new(group, version, kind, &plural, true);
            info.status_subresource = true;
            self.store.register(info);
        }
        self.store.apply_object(object).map_err(from_status)
    }

    fn resource(&self, kind: &Gvk) -> Result<ResourceInfo, ApiError> {
        self.store
            .resource_for_kind(&kind.group, &kind.version, &kind.kind)
            .ok_or_else(|| {
                api_error(
                    404,
                    "NotFound",
                    &format!(
                        "the server could not find the requested resource ({} {})",
                        api_version(kind),
                        kind.kind
                    ),
                )
            })
    }
}

fn from_status(status: Status) -> ApiError {
    api_error(status.code, &status.reason, &status.message)
}

fn parse(text: &str) -> Result<Value, ApiError> {
    serde_json::from_str(text).map_err(|e| {
        api_error(
            400,
            "BadRequest",
            &format!("the object is not valid JSON: {e}"),
        )
    })
}

fn text(value: &Value) -> String {
    value.to_string()
}

fn status_options(field_manager: &str, status: bool) -> WriteOptions {
    WriteOptions {
        field_manager: Some(field_manager.to_string()),
        subresource: status.then(|| "status".to_string()),
        ..WriteOptions::default()
    }
}

#[async_trait::async_trait]
impl Cluster for MemoryCluster {
    async fn get(&self, target: &ObjectRef) -> Result<String, ApiError> {
        let res = self.resource(&target.kind)?;
        self.store
            .get(&res, target.namespace.as_deref(), &target.name)
            .map(|v| text(&v))
            .map_err(from_status)
    }

    async fn list(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        label_selector: Option<&str>,
    ) -> Result<Vec<String>, ApiError> {
        let res = self.resource(kind)?;
        let options = ListOptions {
            namespace: namespace.map(str::to_string),
            label_selector: label_selector.map(str::to_string),
            ..ListOptions::default()
        };
        let list = self.store.list(&res, &options).map_err(from_status)?;
        Ok(list.items.iter().map(text).collect())
    }

    async fn create(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        object: &str,
        field_manager: &str,
    ) -> Result<String, ApiError> {
        let res = self.resource(kind)?;
        self.store
            .create(
                &res,
                namespace,
                parse(object)?,
                &status_options(field_manager, false),
            )
            .map(|v| text(&v))
            .map_err(from_status)
    }

    async fn replace(
        &self,
        target: &ObjectRef,
        object: &str,
        status: bool,
        field_manager: &str,
    ) -> Result<String, ApiError> {
        let res = self.resource(&target.kind)?;
        self.store
            .replace(
                &res,
                target.namespace.as_deref(),
                &target.name,
                parse(object)?,
                &status_options(field_manager, status),
            )
            .map(|v| text(&v))
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
        let res = self.resource(&target.kind)?;
        let mut options = status_options(field_manager, status);
        let patch = match patch_type {
            PatchType::Merge => StorePatch::Merge,
            PatchType::Json => StorePatch::Json,
            PatchType::Apply(apply) => {
                if let Some(manager) = &apply.field_manager {
                    options.field_manager = Some(manager.clone());
                }
                StorePatch::Apply { force: apply.force }
            }
        };
        self.store
            .patch(
                &res,
                target.namespace.as_deref(),
                &target.name,
                &patch,
                body.as_bytes(),
                &options,
            )
            .map(|v| text(&v))
            .map_err(from_status)
    }

    async fn delete(
        &self,
        target: &ObjectRef,
        propagation: Option<Propagation>,
    ) -> Result<(), ApiError> {
        let res = self.resource(&target.kind)?;
        let propagation = propagation.map(|p| match p {
            Propagation::Background => StorePropagation::Background,
            Propagation::Foreground => StorePropagation::Foreground,
            Propagation::Orphan => StorePropagation::Orphan,
        });
        self.store
            .delete(&res, target.namespace.as_deref(), &target.name, propagation)
            .map(|_| ())
            .map_err(from_status)
    }

    async fn record_event(
        &self,
        regarding: &ObjectRef,
        event_type: EventType,
        reason: &str,
        message: &str,
        component: &str,
    ) -> Result<(), ApiError> {
        let uid = self
            .resource(&regarding.kind)
            .and_then(|res| {
                self.store
                    .get(&res, regarding.namespace.as_deref(), &regarding.name)
                    .map_err(from_status)
            })
            .ok()
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
        if let Err(status) = self.store.apply_object(event) {
            tracing::debug!(reason, error = %status.message, "event dropped: the store refused it");
        }
        Ok(())
    }
}
