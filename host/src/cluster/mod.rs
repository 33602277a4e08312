//! Cluster: what a guest's calls reach, reads from the caches and writes to the API server.
//! May call: ha (the fence), informer, discovery, events, telemetry, the API server.
//!
//! The [`Cluster`] seam and its backend: the informer caches and API
//! client of a real (or in-memory) API server ([`KubeCluster`], its direct
//! reads in `direct`), and each module's leadership fence (`fence`).

mod direct;
pub(crate) mod fence;
pub(crate) mod kube;

pub use kube::KubeCluster;

use std::sync::Arc;

use crate::contract::{ApiError, EventType, Gvk, Index, ObjectRef, PatchType, Propagation};

/// The cluster a guest's host calls are served from: in a cluster, the
/// informer caches and the API client; offline, `rekon_offline`'s
/// in-memory store.
///
/// Objects travel as JSON text so a backend can pass them on without
/// re-encoding. Permissions are checked before a call reaches the backend.
#[async_trait::async_trait]
pub trait Cluster: Send + Sync + 'static {
    /// Reads one object.
    async fn get(&self, target: &ObjectRef) -> Result<String, ApiError>;
    /// Lists objects of a kind, ordered by namespace then name.
    async fn list(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        label_selector: Option<&str>,
    ) -> Result<Vec<String>, ApiError>;
    /// Lists the objects whose key in `index` is `value`, ordered as
    /// [`list`](Self::list). The default lists the kind and keeps the
    /// matches; a backend with indexed caches answers in O(matches).
    async fn list_by_index(
        &self,
        index: &Index,
        value: &str,
        namespace: Option<&str>,
    ) -> Result<Vec<String>, ApiError> {
        let all = self.list(&index.kind, namespace, None).await?;
        Ok(all
            .into_iter()
            .filter(|text| {
                serde_json::from_str::<serde_json::Value>(text).is_ok_and(|object| {
                    crate::informer::index::keys(&object, &index.key)
                        .iter()
                        .any(|k| k == value)
                })
            })
            .collect())
    }
    /// Creates an object.
    async fn create(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        object: &str,
        field_manager: &str,
    ) -> Result<String, ApiError>;
    /// Replaces an object, or its status subresource when `status` is set.
    async fn replace(
        &self,
        target: &ObjectRef,
        object: &str,
        status: bool,
        field_manager: &str,
    ) -> Result<String, ApiError>;
    /// Patches an object, or its status subresource when `status` is set.
    async fn patch(
        &self,
        target: &ObjectRef,
        patch_type: &PatchType,
        body: &str,
        status: bool,
        field_manager: &str,
    ) -> Result<String, ApiError>;
    /// Deletes an object.
    async fn delete(
        &self,
        target: &ObjectRef,
        propagation: Option<Propagation>,
    ) -> Result<(), ApiError>;
    /// This cluster with every write sent as a server-side dry run
    /// (`dryRun=All`: admitted, validated and answered as it would be
    /// stored, nothing persisted) and Events not recorded; `None` when the
    /// backend cannot dry-run.
    fn dry_run(&self) -> Option<Arc<dyn Cluster>> {
        None
    }
    /// Records an Event about an object, reported by `component`. Best
    /// effort: a backend hands the Event over and returns without waiting
    /// for the API server, and answers an error only for an Event it
    /// refuses itself.
    async fn record_event(
        &self,
        regarding: &ObjectRef,
        event_type: EventType,
        reason: &str,
        message: &str,
        component: &str,
    ) -> Result<(), ApiError>;
}

/// How a patch of `patch_type` is sent: its content type, the field manager
/// named in the query (an apply's own, else `field_manager`) and whether it
/// is forced.
pub fn patch_request<'a>(
    patch_type: &'a PatchType,
    field_manager: &'a str,
) -> (&'static str, &'a str, bool) {
    match patch_type {
        PatchType::Merge => ("application/merge-patch+json", field_manager, false),
        PatchType::Json => ("application/json-patch+json", field_manager, false),
        PatchType::Apply(options) => (
            "application/apply-patch+yaml",
            options.field_manager.as_deref().unwrap_or(field_manager),
            options.force,
        ),
    }
}
