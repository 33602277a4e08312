//! One reconcile: the request built from the cache, dispatched in its
//! span, what it did counted and reported (log, `ReconcileFailed` and
//! `PermissionDenied` Events), and the queue told what comes next.

use std::sync::Arc;
use std::time::Duration;

use tracing::Instrument as _;

use super::metrics::record_reconcile;
use super::queue::{Completion, Ticket, WorkQueue};
use super::triggers::{Key, request_reason};
use crate::cluster::Cluster;
use crate::contract::{Action, EventType, ObjectRef, Reason, Request, reason_name};
use crate::dispatch::Dispatch;
use crate::runtime::ReconcileError;
use crate::telemetry::Metrics;

/// What a controller's reconciles share.
#[derive(Clone)]
pub(crate) struct Worker {
    /// The serving version, with its layers (canary, recording, shadow).
    pub dispatch: Dispatch,
    /// The module's fenced view of the cluster.
    pub cluster: Arc<dyn Cluster>,
    /// A sharded module's share of the work.
    pub sharded: Option<super::Sharded>,
    pub primary: super::Primaries,
    pub queue: WorkQueue<Key, Reason>,
    pub metrics: Arc<Metrics>,
}

impl Worker {
    /// Reconciles one key and tells the queue what became of it.
    pub async fn reconcile(self, ticket: Ticket<Key, Reason>) {
        let waited = ticket.queued_at.elapsed();
        let user = ticket.priority == super::queue::Priority::High;
        self.dispatch.serving().observe_queue_latency(waited, user);
        let (namespace, name) = ticket.key.clone();
        // A sharded module: an object whose range left meanwhile is
        // another replica's now; one running is counted until it ends,
        // and writes only while its range is held here.
        let mut cluster = self.cluster.clone();
        let _running = match &self.sharded {
            Some(sharded) => {
                let point = sharded.point_of_key(&ticket.key, &self.primary);
                let Some(point) = point.filter(|p| sharded.shards.admits(*p)) else {
                    tracing::debug!(namespace = namespace.as_deref().unwrap_or(""), object = %name, "not in this replica's ranges: left to its owner");
                    self.queue.finish(ticket, Completion::Done);
                    return;
                };
                let module = self.dispatch.serving().name().to_string();
                cluster = sharded.fenced(&module, &self.metrics, point);
                Some(sharded.shards.start(point))
            }
            None => None,
        };
        let manifest = self.dispatch.serving().manifest();
        let cached = self.primary.get(namespace.as_deref(), &name);
        let reason = request_reason(
            ticket.reason,
            cached.as_deref(),
            manifest.finalizer.as_deref(),
        );
        let target = ObjectRef {
            kind: manifest.primary.clone(),
            namespace: namespace.clone(),
            name: name.clone(),
        };
        let request = Request {
            target,
            object: cached.as_ref().map(|o| o.json.to_string()),
            reason,
            attempt: ticket.attempt,
        };
        let span = tracing::info_span!(
            "reconcile",
            module = %manifest.name,
            version = %manifest.version,
            digest = %self.dispatch.serving().short_digest(),
            namespace = namespace.as_deref().unwrap_or(""),
            // Not `name`: JSON logs already use that key for the span's name.
            object = %name,
            reason = reason_name(reason),
            attempt = ticket.attempt,
            priority = ticket.priority.label(),
            // Set when the module's canary serves the object instead.
            canary_version = tracing::field::Empty,
            canary_digest = tracing::field::Empty,
        );
        let completion = self
            .run(cluster, &request, waited, cached.is_some())
            .instrument(span)
            .await;
        if let Some(sharded) = &self.sharded {
            sharded.forget(&ticket.key, &self.primary);
        }
        // The next run of this key, if the completion schedules one, says why.
        let mut ticket = ticket;
        match completion {
            Completion::RequeueAfter(_) => ticket.reason = Reason::Requeued,
            Completion::Failed { retry: true } => ticket.reason = Reason::Retry,
            _ => {}
        }
        self.queue.finish(ticket, completion);
    }

    /// Runs the module on `request` and reports; `exists`: the object is
    /// still there to carry Events.
    async fn run(
        &self,
        cluster: Arc<dyn Cluster>,
        request: &Request,
        waited: Duration,
        exists: bool,
    ) -> Completion {
        let (outcome, served_by) = self.dispatch.reconcile(cluster.clone(), request).await;
        record_reconcile(&self.metrics, &served_by, waited, &outcome);
        if !outcome.denied.is_empty() && exists {
            // Once per reconcile, however many calls were refused.
            let message = format!(
                "{} call(s) denied: {}",
                outcome.denied.len(),
                outcome.denied[0]
            );
            event(
                &cluster,
                &self.dispatch,
                &request.target,
                "PermissionDenied",
                &message,
            )
            .await;
        }
        let elapsed_us = outcome.elapsed.as_micros() as u64;
        match &outcome.result {
            Ok(Action::Done) => {
                tracing::info!(elapsed_us, "reconciled");
                Completion::Done
            }
            Ok(Action::RequeueAfter(ms)) => {
                tracing::info!(elapsed_us, requeue_after_ms = ms, "reconciled");
                Completion::RequeueAfter(Duration::from_millis(*ms))
            }
            Err(error) => {
                tracing::warn!(
                    error = %error,
                    call = outcome.failed_call.as_deref(),
                    kind = error.metric_label(),
                    retry = error.retry(),
                    "reconcile failed"
                );
                if exists {
                    let message = failure_message(error, outcome.failed_call.as_deref());
                    event(
                        &cluster,
                        &self.dispatch,
                        &request.target,
                        "ReconcileFailed",
                        &message,
                    )
                    .await;
                }
                Completion::Failed {
                    retry: error.retry(),
                }
            }
        }
    }
}

/// Records a Warning Event about `target` (best effort, never waits).
async fn event(
    cluster: &Arc<dyn Cluster>,
    dispatch: &Dispatch,
    target: &ObjectRef,
    reason: &str,
    message: &str,
) {
    let component = format!("rekon-{}", dispatch.serving().name());
    let _ = cluster
        .record_event(target, EventType::Warning, reason, message, &component)
        .await;
}

/// The note of a `ReconcileFailed` Event: what failed, naming the host
/// call the failure is put down to when there is one.
pub(crate) fn failure_message(error: &ReconcileError, call: Option<&str>) -> String {
    match (error, call) {
        (ReconcileError::Guest { message, .. }, Some(call)) => {
            format!("host call {call}; the module said: {message}")
        }
        (ReconcileError::Guest { message, .. }, None) => {
            format!("the module failed: {message}")
        }
        (other, _) => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_names_the_call_it_is_put_down_to() {
        let guest = ReconcileError::Guest {
            message: "500 InternalError: boom".into(),
            retry: true,
        };
        assert_eq!(
            failure_message(
                &guest,
                Some("patch Deployment.apps/v1 default/web: 500 InternalError: boom")
            ),
            "host call patch Deployment.apps/v1 default/web: 500 InternalError: boom; the module said: 500 InternalError: boom"
        );
        assert_eq!(
            failure_message(&guest, None),
            "the module failed: 500 InternalError: boom"
        );
        let timeout = ReconcileError::Timeout {
            limit: Duration::from_millis(200),
        };
        assert_eq!(
            failure_message(&timeout, Some("ignored")),
            "guest exceeded its CPU time limit of 200ms"
        );
    }
}
