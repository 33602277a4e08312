//! The leadership fence: a module's writes reach the cluster only while the
//! module leads on this replica (for a sharded module: while the object's
//! range is held here).

use std::sync::Arc;

use super::Cluster;
use crate::contract::{ApiError, EventType, Gvk, ObjectRef, PatchType, Propagation, api_error};
use crate::ha::{Leadership, Shards};
use crate::telemetry::Metrics;

/// A module's view of the cluster: reads pass, writes are refused unless
/// the module leads on this replica (so a replica that lost, or could not
/// renew, a Lease never writes alongside the new holder).
pub(crate) struct Fenced {
    pub inner: Arc<dyn Cluster>,
    pub leadership: Leadership,
    pub module: String,
    pub metrics: Arc<Metrics>,
    /// A sharded module's reconcile: its object's point, whose range must
    /// be held here for a write to go out.
    pub shard: Option<(Shards, u64)>,
}

impl Fenced {
    fn check(&self) -> Result<(), ApiError> {
        let (allowed, what) = match &self.shard {
            Some((shards, point)) => (shards.may_write(*point), "hold the shard of this object of"),
            None => (self.leadership.is_leading(), "lead"),
        };
        if allowed {
            return Ok(());
        }
        Err(api_error(
            503,
            "ServiceUnavailable",
            &format!(
                "this replica does not {what} module {}: it does not write to the cluster",
                self.module
            ),
        ))
    }
}

#[async_trait::async_trait]
impl Cluster for Fenced {
    async fn get(&self, target: &ObjectRef) -> Result<String, ApiError> {
        self.inner.get(target).await
    }

    async fn list(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        label_selector: Option<&str>,
    ) -> Result<Vec<String>, ApiError> {
        self.inner.list(kind, namespace, label_selector).await
    }

    async fn create(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        object: &str,
        field_manager: &str,
    ) -> Result<String, ApiError> {
        self.check()?;
        self.inner
            .create(kind, namespace, object, field_manager)
            .await
    }

    async fn replace(
        &self,
        target: &ObjectRef,
        object: &str,
        status: bool,
        field_manager: &str,
    ) -> Result<String, ApiError> {
        self.check()?;
        self.inner
            .replace(target, object, status, field_manager)
            .await
    }

    async fn patch(
        &self,
        target: &ObjectRef,
        patch_type: &PatchType,
        body: &str,
        status: bool,
        field_manager: &str,
    ) -> Result<String, ApiError> {
        self.check()?;
        self.inner
            .patch(target, patch_type, body, status, field_manager)
            .await
    }

    async fn delete(
        &self,
        target: &ObjectRef,
        propagation: Option<Propagation>,
    ) -> Result<(), ApiError> {
        self.check()?;
        self.inner.delete(target, propagation).await
    }

    fn dry_run(&self) -> Option<Arc<dyn Cluster>> {
        Some(Arc::new(Fenced {
            inner: self.inner.dry_run()?,
            leadership: self.leadership.clone(),
            module: self.module.clone(),
            metrics: self.metrics.clone(),
            shard: self.shard.clone(),
        }))
    }

    async fn record_event(
        &self,
        regarding: &ObjectRef,
        event_type: EventType,
        reason: &str,
        message: &str,
        component: &str,
    ) -> Result<(), ApiError> {
        // Events are best effort: one recorded without the lead is dropped.
        if self.check().is_err() {
            tracing::debug!(module = %self.module, reason, "event dropped: this replica does not lead the module");
            crate::events::dropped_not_leading(&self.metrics);
            return Ok(());
        }
        self.inner
            .record_event(regarding, event_type, reason, message, component)
            .await
    }
}
