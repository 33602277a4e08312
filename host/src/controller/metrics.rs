//! What a controller counts: one reconcile's metrics, the queue and
//! informer gauges, and the series a stopped controller leaves behind.

use std::time::Duration;

use super::queue::Priority;
use crate::contract::Action;
use crate::informer::Filtering;
use crate::runtime::{Outcome, ReconcileError};
use crate::telemetry::{
    CallLabels, FilteringLabels, InfoLabels, InformerLabel, KindLabels, Metrics, ModuleLabel,
    PriorityLabels,
};

/// Counts one reconcile that waited `waited` in the queue, served by
/// `version` (of its module; a canary's for the objects it serves).
pub(crate) fn record_reconcile(
    metrics: &Metrics,
    version: &InfoLabels,
    waited: Duration,
    outcome: &Outcome,
) {
    let module = version.module.as_str();
    let label = ModuleLabel {
        module: module.to_string(),
    };
    metrics
        .queue_wait
        .get_or_create(&label)
        .observe(waited.as_secs_f64());
    let result = match &outcome.result {
        Ok(Action::Done) => "done",
        Ok(Action::RequeueAfter(_)) => "requeue",
        Err(error) => error.metric_label(),
    };
    metrics.count_reconcile(version, result, outcome.elapsed);
    if let Err(error) = &outcome.result {
        if error.retry() {
            metrics.retries.get_or_create(&label).inc();
        }
        if !matches!(error, ReconcileError::Guest { .. }) {
            metrics
                .guest_failures
                .get_or_create(&KindLabels {
                    module: module.to_string(),
                    kind: error.metric_label().to_string(),
                })
                .inc();
        }
    }
    for (verb, result) in &outcome.host_calls {
        metrics.count_host_call(CallLabels {
            module: module.to_string(),
            verb: (*verb).to_string(),
            result: result.clone(),
        });
    }
}

/// Sets the gauges a running controller keeps up to date.
pub(crate) fn record_gauges(
    metrics: &Metrics,
    module: &str,
    queued: [usize; Priority::COUNT],
    informers: &[std::sync::Arc<crate::informer::Informer>],
) {
    for (priority, depth) in Priority::ALL.into_iter().zip(queued) {
        metrics
            .queue_depth
            .get_or_create(&PriorityLabels {
                module: module.to_string(),
                priority: priority.label().to_string(),
            })
            .set(depth as i64);
    }
    let mut sharded: std::collections::BTreeMap<String, usize> = Default::default();
    for informer in informers {
        let kind = crate::names::display_kind(&informer.gvk);
        let Some(filtering) = informer.filtering() else {
            metrics
                .informer_objects
                .get_or_create(&InformerLabel { kind })
                .set(informer.len() as i64);
            continue;
        };
        *sharded.entry(kind.clone()).or_default() += informer.len();
        for mode in [Filtering::Host, Filtering::Server] {
            metrics
                .shard_filtering
                .get_or_create(&FilteringLabels {
                    kind: kind.clone(),
                    mode: mode.label().to_string(),
                })
                .set(i64::from(mode == filtering));
        }
    }
    // A sharded module's own share of its primaries and owned objects.
    for (kind, objects) in sharded {
        metrics
            .shard_objects
            .get_or_create(&KindLabels {
                module: module.to_string(),
                kind,
            })
            .set(objects as i64);
    }
}

/// Removes the gauges of a stopped controller (a new version's
/// controller sets them again).
pub(crate) fn forget_gauges(metrics: &Metrics, module: &str) {
    let label = ModuleLabel {
        module: module.to_string(),
    };
    for priority in Priority::ALL {
        metrics.queue_depth.remove(&PriorityLabels {
            module: module.to_string(),
            priority: priority.label().to_string(),
        });
    }
    metrics.module_leader.remove(&label);
}
