//! Dispatch: what a controller hands each request to — the serving
//! version, with the layers the operator asked for around it.
//! May call: replay (traces), runtime, cluster, telemetry (and contract, names).
//!
//! The serving version (`serving`: a module version or a reconciler
//! compiled into the host) runs each request; around it, in this order:
//! - the canary (`canary`): an object in the canary share of a shadow
//!   version is served by that version, live;
//! - recording: each reconcile kept as a trace (`replay`);
//! - the shadow (`shadow`): the request reconciled again by the shadow
//!   version, its writes dry runs, and the two versions' writes compared
//!   (`compare`).
//!
//! Which shadow runs, and what becomes of a comparison, is the module's
//! rollout's to say: the rollout room above implements `Shadowing`.

pub(crate) mod canary;
pub(crate) mod compare;
pub(crate) mod serving;
pub(crate) mod shadow;

use std::sync::Arc;

use tokio::sync::watch;

pub use canary::in_canary;
pub use compare::Compared;
pub(crate) use serving::Dispatcher;
pub use serving::{DispatchStats, NativeFuture, NativeReconciler};
pub use shadow::SHADOW_BACKLOG;
pub(crate) use shadow::ShadowQueue;

use crate::cluster::Cluster;
use crate::contract::Request;
use crate::names::namespaced_name;
use crate::replay::{Recording, Trace};
use crate::runtime::{DispatchOptions, Outcome};
use crate::telemetry::{InfoLabels, Metrics, ModuleLabel};

/// The version shadowing a module's serving version, as the dispatch
/// runs it.
#[derive(Clone)]
pub(crate) struct Shadow {
    /// What runs its reconciles.
    pub module: Dispatcher,
    /// The percentage of objects it serves live ([`in_canary`]).
    pub canary: u8,
}

/// What a module's rollout tells its dispatch, and is told: the rollout
/// room implements it.
pub(crate) trait Shadowing: Send + Sync {
    /// The version shadowing the serving one now, if any.
    fn shadow(&self) -> Option<Shadow>;
    /// Changes whenever a shadow version arrives (its controller then
    /// queues every object once, so each is compared), and when a canary
    /// gives objects back (so the serving version reconciles them again).
    fn arrivals(&self) -> watch::Receiver<u64>;
    /// Where the shadow's reconciles wait.
    fn queue(&self) -> &Arc<ShadowQueue>;
    /// How the versions compared on `object`'s latest request; whether it
    /// is news to announce (the first time they differ on it).
    fn compared(&self, object: &str, compared: Compared) -> bool;
    /// The canary served `object` live, with this outcome (its health).
    fn canary_served(&self, object: &str, outcome: &Outcome);
}

/// What a controller dispatches into: the serving version and its layers.
#[derive(Clone)]
pub(crate) struct Dispatch {
    serving: Dispatcher,
    rollout: Arc<dyn Shadowing>,
    /// Where each reconcile is recorded, when the operator asks for it.
    recording: Option<Arc<Recording>>,
    metrics: Arc<Metrics>,
}

impl Dispatch {
    /// Dispatches into `serving`, with the layers `rollout` and `recording`
    /// ask for.
    pub fn new(
        serving: Dispatcher,
        rollout: Arc<dyn Shadowing>,
        recording: Option<Arc<Recording>>,
        metrics: Arc<Metrics>,
    ) -> Dispatch {
        Dispatch {
            serving,
            rollout,
            recording,
            metrics,
        }
    }

    /// The serving version.
    pub fn serving(&self) -> &Dispatcher {
        &self.serving
    }

    /// Whether a shadow version runs now.
    pub fn shadowed(&self) -> bool {
        self.rollout.shadow().is_some()
    }

    /// Changes whenever a shadow version arrives or a canary gives
    /// objects back.
    pub fn arrivals(&self) -> watch::Receiver<u64> {
        self.rollout.arrivals()
    }

    /// Runs one request through the layers; the outcome of the version
    /// that served it (the canary's, or the serving version's), and that
    /// version (its metric labels: the module keeps the serving version's
    /// name).
    pub async fn reconcile(
        &self,
        cluster: Arc<dyn Cluster>,
        request: &Request,
    ) -> (Outcome, InfoLabels) {
        let started = std::time::SystemTime::now();
        let mut shadow = self.rollout.shadow();
        // An object in the shadow's canary is served by the shadow, live.
        let mut module = &self.serving;
        let canary = shadow.take_if(|s| {
            s.canary > 0
                && in_canary(
                    request.target.namespace.as_deref(),
                    &request.target.name,
                    s.canary,
                )
        });
        if let Some(canary) = &canary {
            module = &canary.module;
            // The reconcile's span says which version served it.
            let span = tracing::Span::current();
            span.record("canary_version", canary.module.manifest().version.as_str());
            span.record("canary_digest", canary.module.short_digest());
            let label = ModuleLabel {
                module: self.serving.name().to_string(),
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
        let mut outcome = module.reconcile(cluster.clone(), request, options).await;
        if canary.is_some() {
            let object = namespaced_name(request.target.namespace.as_deref(), &request.target.name);
            self.rollout.canary_served(&object, &outcome);
        }
        if let Some(recording) = &self.recording {
            let contract = module.contract_version();
            recording.push(Trace::of(
                module.manifest(),
                contract,
                started,
                request,
                &outcome,
            ));
        }
        if let Some(shadow) = shadow {
            let served = shadow::Served {
                request,
                object: namespaced_name(request.target.namespace.as_deref(), &request.target.name),
                calls: std::mem::take(&mut outcome.calls),
                result: &outcome.result,
                version: &self.serving.manifest().version,
            };
            shadow::shadow(
                self.serving.name(),
                shadow,
                served,
                &self.rollout,
                &cluster,
                &self.metrics,
            );
        }
        (outcome, module.version_labels())
    }
}
