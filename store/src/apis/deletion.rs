//! What a kind's strategy says of its deletion (the `RESTDeleteStrategy`
//! extensions of `staging/src/k8s.io/apiserver/pkg/registry/rest`):
//! whether it is deleted gracefully (`RESTGracefulDeleteStrategy`: only
//! Pods) and what becomes of its dependents when a DELETE names no policy
//! (`GarbageCollectionDeleteStrategy`); and the deletes a kind's REST
//! storage refuses outright (a system priority class).

use serde_json::Value;

use super::{core, scheduling};
use crate::meta::status::Status;
use crate::resource::info::ResourceInfo;

/// Why a DELETE of `name` of `res`'s kind is refused before anything else,
/// when its REST storage refuses it (`REST.Delete` of
/// `pkg/registry/scheduling/priorityclass/storage`: the system classes).
pub(crate) fn refuse_delete(res: &ResourceInfo, name: &str) -> Option<Status> {
    let priority_classes =
        res.custom.is_none() && res.group == "scheduling.k8s.io" && res.kind == "PriorityClass";
    priority_classes
        .then(|| scheduling::priorityclass::refuse_delete(res, name))
        .flatten()
}

/// A kind's default garbage collection policy (`rest.GarbageCollectionPolicy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum GcPolicy {
    /// Dependents are collected (in the background unless asked otherwise).
    DeleteDependents,
    /// Dependents are kept: the owner gets the `orphan` finalizer.
    OrphanDependents,
    /// No garbage collection at all: neither `orphan` nor
    /// `foregroundDeletion` is ever added, whatever the DELETE asks.
    Unsupported,
}

/// The default garbage collection policy of `res`'s kind, as each
/// strategy's `DefaultGarbageCollectionPolicy` answers it: Events
/// (`pkg/registry/core/event/strategy.go`, events.k8s.io too) have none;
/// `batch/v1` Jobs and `v1` ReplicationControllers keep their dependents
/// for backwards compatibility (`pkg/registry/batch/job`,
/// `pkg/registry/core/replicationcontroller`); the rest, custom resources
/// included, collect them.
pub(crate) fn default_gc_policy(res: &ResourceInfo) -> GcPolicy {
    if res.custom.is_some() {
        return GcPolicy::DeleteDependents;
    }
    match (res.group.as_str(), res.version.as_str(), res.kind.as_str()) {
        ("" | "events.k8s.io", _, "Event") => GcPolicy::Unsupported,
        ("batch", "v1", "Job") | ("", "v1", "ReplicationController") => GcPolicy::OrphanDependents,
        _ => GcPolicy::DeleteDependents,
    }
}

/// The grace period an object of `res`'s kind not yet being deleted is
/// deleted with (`CheckGracefulDelete`), the DELETE having asked `asked`
/// (a negative one already taken as 1 s); `None` for a kind that is not
/// deleted gracefully (every kind but Pods).
pub(crate) fn check_graceful_delete(
    res: &ResourceInfo,
    obj: &Value,
    asked: Option<i64>,
) -> Option<i64> {
    let pods = res.custom.is_none() && res.group.is_empty() && res.kind == "Pod";
    pods.then(|| core::pod::check_graceful_delete(obj, asked))
}
