//! One reconcile: the request built from the cache, the module run in its
//! span, what it did counted and reported (log, `ReconcileFailed` and
//! `PermissionDenied` Events), and the queue told what comes next.

use std::sync::Arc;
use std::time::Duration;

use tracing::Instrument as _;

use super::metrics::record_reconcile;
use super::queue::{Completion, Ticket, WorkQueue};
use super::triggers::{Key, reason_name, request_reason};
use crate::cluster::Cluster;
use crate::contract::{Action, EventType, ObjectRef, Reason, Request};
use crate::runtime::{DispatchOptions, Dispatcher, ReconcileError};
use crate::telemetry::Metrics;

/// What a controller's reconciles share.
#[derive(Clone)]
pub(crate) struct Worker {
    pub module: Dispatcher,
    /// The module's fenced view of the cluster.
    pub cluster: Arc<dyn Cluster>,
    pub primary: super::Primaries,
    pub queue: WorkQueue<Key, Reason>,
    pub metrics: Arc<Metrics>,
    /// Where each reconcile is recorded, when the operator asks for it.
    pub recording: Option<Arc<crate::replay::Recording>>,
    /// The module's rollout: the shadow that reconciles each request too.
    pub rollout: Arc<crate::rollout::Rollout>,
}

impl Worker {
    /// Reconciles one key and tells the queue what became of it.
    pub async fn reconcile(self, ticket: Ticket<Key, Reason>) {
        let waited = ticket.queued_at.elapsed();
        let user = ticket.priority == super::queue::Priority::High;
        self.module.observe_queue_latency(waited, user);
        let (namespace, name) = ticket.key.clone();
        let manifest = self.module.manifest();
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
            digest = %self.module.short_digest(),
            namespace = namespace.as_deref().unwrap_or(""),
            // Not `name`: JSON logs already use that key for the span's name.
            object = %name,
            reason = reason_name(reason),
            attempt = ticket.attempt,
            priority = ticket.priority.label(),
        );
        let completion = self
            .run(&request, waited, cached.is_some())
            .instrument(span)
            .await;
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
    async fn run(&self, request: &Request, waited: Duration, exists: bool) -> Completion {
        let manifest = self.module.manifest();
        let started = std::time::SystemTime::now();
        let mut shadow = self.rollout.shadow();
        // An object in the shadow's canary is served by the shadow, live.
        let mut module = &self.module;
        let canary = shadow.take_if(|s| {
            s.canary > 0
                && crate::rollout::in_canary(
                    request.target.namespace.as_deref(),
                    &request.target.name,
                    s.canary,
                )
        });
        if let Some(canary) = &canary {
            module = &canary.module;
            let label = crate::telemetry::ModuleLabel {
                module: self.module.name().to_string(),
            };
            self.metrics.canary_reconciles.get_or_create(&label).inc();
        }
        // For a shadow alone, the answers are parsed when (and if) the
        // shadow compares them, off the serving path.
        let options = DispatchOptions {
            record: self.recording.is_some() || shadow.is_some(),
            answers_as_text: self.recording.is_none(),
            ..DispatchOptions::default()
        };
        let mut outcome = module
            .reconcile(self.cluster.clone(), request, options)
            .await;
        if let Some(recording) = &self.recording {
            let contract = module.contract_version();
            let trace =
                crate::replay::Trace::of(module.manifest(), contract, started, request, &outcome);
            recording.push(trace);
        }
        if let Some(shadow) = shadow {
            let calls = std::mem::take(&mut outcome.calls);
            self.shadow(shadow, request, calls, &outcome.result);
        }
        record_reconcile(&self.metrics, &manifest.name, waited, &outcome);
        if !outcome.denied.is_empty() && exists {
            // Once per reconcile, however many calls were refused.
            let message = format!(
                "{} call(s) denied: {}",
                outcome.denied.len(),
                outcome.denied[0]
            );
            self.event(&request.target, "PermissionDenied", &message)
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
                    self.event(&request.target, "ReconcileFailed", &message)
                        .await;
                }
                Completion::Failed {
                    retry: error.retry(),
                }
            }
        }
    }

    /// Reconciles `request` with the shadow too, on the shadow's task (after
    /// the objects waiting before it; replaced by a newer request of the
    /// same object that comes first; not at all when too many objects
    /// wait), its writes dry runs, and keeps how its writes compare with
    /// the serving version's.
    fn shadow(
        &self,
        shadow: crate::rollout::Shadow,
        request: &Request,
        mut serving_calls: Vec<crate::CallRecord>,
        serving_result: &Result<Action, crate::runtime::ReconcileError>,
    ) {
        use crate::rollout::{Compared, diff, writes_text};
        let module = self.module.name().to_string();
        let label = crate::telemetry::ModuleLabel {
            module: module.clone(),
        };
        let object = crate::shared::namespaced_name(
            request.target.namespace.as_deref(),
            &request.target.name,
        );
        // Built only when the shadow takes the request.
        let job = || -> crate::rollout::Job {
            let serving_result = crate::replay::result_json(serving_result);
            let serving_version = self.module.manifest().version.clone();
            let (rollout, metrics, cluster) = (
                self.rollout.clone(),
                self.metrics.clone(),
                self.cluster.clone(),
            );
            let (request, object, label) = (request.clone(), object.clone(), label.clone());
            Box::new(move || {
                Box::pin(async move {
                    serving_calls
                        .iter_mut()
                        .for_each(crate::CallRecord::parse_answer);
                    let serving_writes = writes_text(&crate::replay::calls_json(&serving_calls));
                    let reason = super::triggers::reason_name(request.reason).to_string();
                    let shadow_version = shadow.module.manifest().version.clone();
                    let compared = match cluster.dry_run() {
                        None => Compared {
                            reason,
                            diff: Vec::new(),
                            error: Some("this cluster cannot dry-run the shadow's writes".into()),
                        },
                        Some(dry) => {
                            let options = DispatchOptions {
                                record: true,
                                ..DispatchOptions::default()
                            };
                            let outcome = shadow.module.reconcile(dry, &request, options).await;
                            let writes = writes_text(&crate::replay::calls_json(&outcome.calls));
                            let mut diff = diff(
                                &serving_writes,
                                &writes,
                                (&serving_version, &shadow_version),
                            );
                            let result = crate::replay::result_json(&outcome.result);
                            let mut error = None;
                            if result != serving_result {
                                match &outcome.result {
                                    Err(failure) => error = Some(failure.to_string()),
                                    Ok(_) => diff.push(format!(
                                        "result: serving {serving_result}, shadow {result}"
                                    )),
                                }
                            }
                            Compared {
                                reason,
                                diff,
                                error,
                            }
                        }
                    };
                    metrics.shadow_reconciles.get_or_create(&label).inc();
                    if !compared.agrees() {
                        metrics.shadow_differences.get_or_create(&label).inc();
                    }
                    if compared.error.is_some() {
                        metrics.shadow_errors.get_or_create(&label).inc();
                        tracing::warn!(module = %module, object = %request.target.name, error = compared.error.as_deref(), "shadow reconcile failed");
                    }
                    if let Some(command) = rollout.judge(&compared, &shadow.policy) {
                        tracing::info!(module = %module, ?command, "the rollout policy decides");
                        if let Err(why) = metrics.rollouts.command(&module, command) {
                            tracing::warn!(module = %module, ?command, error = %why, "the rollout policy's decision was not carried out");
                        }
                    }
                    if rollout.keep(&object, compared) {
                        let message = format!(
                            "shadow version {shadow_version} of module {module} writes differently from serving version {serving_version}: see `rekon rollout status {module}`"
                        );
                        let _ = cluster
                            .record_event(
                                &request.target,
                                EventType::Warning,
                                "ShadowDiffers",
                                &message,
                                &format!("rekon-{module}"),
                            )
                            .await;
                    }
                })
            })
        };
        match self.rollout.enqueue(object.clone(), job) {
            crate::rollout::Queued::Waiting => {}
            crate::rollout::Queued::Superseded => {
                self.metrics.shadow_superseded.get_or_create(&label).inc();
            }
            crate::rollout::Queued::Skipped => {
                self.metrics.shadow_skipped.get_or_create(&label).inc();
            }
        }
    }

    /// Records a Warning Event about `target` (best effort, never waits).
    async fn event(&self, target: &ObjectRef, reason: &str, message: &str) {
        let component = format!("rekon-{}", self.module.name());
        let _ = self
            .cluster
            .record_event(target, EventType::Warning, reason, message, &component)
            .await;
    }
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
