//! The shadow layer: every request the serving version reconciled is
//! reconciled by the shadow version too, its writes dry runs, on a task of
//! its own, and the two versions' writes compared.
//!
//! A shadow never slows or changes the serving version: it runs after it,
//! one reconcile at a time per module, within the module's own CPU
//! deadline and memory cap. Requests wait per object ([`ShadowQueue`]): a
//! newer request of an object waiting replaces the older one (only the
//! object's latest state is compared; counted as superseded), and at most
//! [`SHADOW_BACKLOG`] objects wait (more are not shadowed, and counted as
//! skipped). Under a burst the shadow lags behind and compares each
//! object's latest request rather than taking CPU from the serving
//! version. A shadow that traps, loops, eats memory or is refused by the
//! server counts as a difference and an error.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use super::compare::{Compared, diff, writes_text};
use super::{Shadow, Shadowing};
use crate::cluster::Cluster;
use crate::contract::{Action, EventType, Request, reason_name};
use crate::replay::{calls_json, result_json};
use crate::runtime::{CallRecord, DispatchOptions, ReconcileError};
use crate::telemetry::{Metrics, ModuleLabel};

/// Objects of one module waiting for their shadow reconcile; requests of
/// more are skipped (and counted in `rekon_shadow_skipped_total`).
pub const SHADOW_BACKLOG: usize = 1000;

/// A shadow reconcile waiting to run: what it does, with everything it
/// needs.
pub(crate) type Job = Box<dyn FnOnce() -> futures::future::BoxFuture<'static, ()> + Send>;

/// What became of a request handed to the shadow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Queued {
    /// It waits its turn (the shadow's task is started when it runs none).
    Waiting,
    /// It replaced an older request of the same object that was waiting.
    Superseded,
    /// [`SHADOW_BACKLOG`] objects wait already: it is not shadowed.
    Skipped,
}

/// The shadow reconciles of one module waiting, per object, in arrival
/// order, and the task that runs them.
#[derive(Default)]
pub(crate) struct ShadowQueue {
    pending: Mutex<Pending>,
}

/// The shadow reconciles waiting.
#[derive(Default)]
struct Pending {
    order: VecDeque<String>,
    jobs: HashMap<String, Job>,
    /// A task runs the jobs (until none waits).
    running: bool,
}

/// The task running a module's shadow reconciles: should a job panic, the
/// next request starts another.
struct Task(Arc<ShadowQueue>);

impl Drop for Task {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.pending.lock().expect("shadow queue lock").running = false;
        }
    }
}

impl ShadowQueue {
    /// Forgets what waits (it was for a shadow that is no more).
    pub(crate) fn clear(&self) {
        let mut pending = self.pending.lock().expect("shadow queue lock");
        pending.order.clear();
        pending.jobs.clear();
    }

    /// Hands a shadow reconcile of `object` over, `job` building it (only
    /// when it is taken): it runs after the jobs of the objects waiting
    /// before it, on the shadow's task (started here when none runs),
    /// unless a newer job of `object` replaces it first.
    pub(crate) fn enqueue(self: &Arc<Self>, object: String, job: impl FnOnce() -> Job) -> Queued {
        let mut pending = self.pending.lock().expect("shadow queue lock");
        let queued = if let Some(waiting) = pending.jobs.get_mut(&object) {
            *waiting = job();
            Queued::Superseded
        } else if pending.jobs.len() >= SHADOW_BACKLOG {
            return Queued::Skipped;
        } else {
            pending.order.push_back(object.clone());
            pending.jobs.insert(object, job());
            Queued::Waiting
        };
        if !pending.running {
            pending.running = true;
            let task = Task(self.clone());
            tokio::spawn(async move {
                while let Some(job) = task.0.next_job() {
                    job().await;
                }
            });
        }
        queued
    }

    /// The next job to run; `None` (the task ends) when none waits.
    fn next_job(&self) -> Option<Job> {
        let mut pending = self.pending.lock().expect("shadow queue lock");
        while let Some(object) = pending.order.pop_front() {
            if let Some(job) = pending.jobs.remove(&object) {
                return Some(job);
            }
        }
        pending.running = false;
        None
    }

    /// Whether a task runs the jobs.
    #[cfg(test)]
    fn running(&self) -> bool {
        self.pending.lock().expect("shadow queue lock").running
    }
}

/// What the serving version did on a request, for its shadow to compare.
pub(crate) struct Served<'a> {
    pub request: &'a Request,
    /// The object, `namespace/name`.
    pub object: String,
    pub calls: Vec<CallRecord>,
    pub result: &'a Result<Action, ReconcileError>,
    pub version: &'a str,
}

/// Hands `served` to `shadow`: reconciled again by the shadow version on
/// its module's task, compared, and the comparison given to `rollout`.
pub(crate) fn shadow(
    module: &str,
    shadow: Shadow,
    served: Served<'_>,
    rollout: &Arc<dyn Shadowing>,
    cluster: &Arc<dyn Cluster>,
    metrics: &Arc<Metrics>,
) {
    let label = ModuleLabel {
        module: module.to_string(),
    };
    let Served {
        request,
        object,
        mut calls,
        result,
        version,
    } = served;
    // Built only when the shadow takes the request.
    let job = || -> Job {
        let serving_result = result_json(result);
        let serving_version = version.to_string();
        let (rollout, metrics, cluster) = (rollout.clone(), metrics.clone(), cluster.clone());
        let (request, object, label, module) = (
            request.clone(),
            object.clone(),
            label.clone(),
            module.to_string(),
        );
        Box::new(move || {
            Box::pin(async move {
                calls.iter_mut().for_each(CallRecord::parse_answer);
                let serving_writes = writes_text(&calls_json(&calls));
                let reason = reason_name(request.reason).to_string();
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
                        let writes = writes_text(&calls_json(&outcome.calls));
                        let mut diff = diff(
                            &serving_writes,
                            &writes,
                            (&serving_version, &shadow_version),
                        );
                        let result = result_json(&outcome.result);
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
                if rollout.compared(&object, compared) {
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
    match rollout.queue().enqueue(object.clone(), job) {
        Queued::Waiting => {}
        Queued::Superseded => {
            metrics.shadow_superseded.get_or_create(&label).inc();
        }
        Queued::Skipped => {
            metrics.shadow_skipped.get_or_create(&label).inc();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shadow reconciles wait per object: a newer request of an object
    /// still waiting replaces the older one, objects run in the order they
    /// came, and beyond the backlog requests are skipped.
    #[tokio::test]
    async fn shadow_jobs_wait_per_object_and_the_newest_of_each_runs() {
        let queue = Arc::new(ShadowQueue::default());
        let ran = Arc::new(Mutex::new(Vec::new()));
        let (release, gate) = tokio::sync::oneshot::channel::<()>();
        let gate = Arc::new(Mutex::new(Some(gate)));
        let job = |name: &'static str| -> Job {
            let (ran, gate) = (ran.clone(), gate.clone());
            Box::new(move || {
                Box::pin(async move {
                    let wait = gate.lock().unwrap().take();
                    if let Some(wait) = wait {
                        let _ = wait.await;
                    }
                    ran.lock().unwrap().push(name);
                })
            })
        };
        // The first job holds the task until released.
        assert_eq!(queue.enqueue("a".into(), || job("a1")), Queued::Waiting);
        tokio::task::yield_now().await;
        assert_eq!(queue.enqueue("b".into(), || job("b1")), Queued::Waiting);
        assert_eq!(queue.enqueue("c".into(), || job("c1")), Queued::Waiting);
        assert_eq!(queue.enqueue("b".into(), || job("b2")), Queued::Superseded);
        for i in 0..SHADOW_BACKLOG - 2 {
            queue.enqueue(format!("filler-{i}"), || Box::new(|| Box::pin(async {})));
        }
        assert_eq!(queue.enqueue("d".into(), || job("d1")), Queued::Skipped);
        release.send(()).unwrap();
        for _ in 0..100 {
            if ran.lock().unwrap().len() == 3 && !queue.running() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert_eq!(*ran.lock().unwrap(), ["a1", "b2", "c1"]);
        // The task ended once nothing waited; the next job starts another.
        assert_eq!(queue.enqueue("d".into(), || job("d2")), Queued::Waiting);
        for _ in 0..100 {
            if ran.lock().unwrap().len() == 4 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert_eq!(ran.lock().unwrap().last(), Some(&"d2"));
    }
}
