//! Feeding one informer's objects and changes into a controller's queue,
//! as requests for the primaries they concern (for a sharded module, those
//! in this replica's ranges only).

use std::sync::Arc;

use super::queue::Priority;
use super::sources::Source;
use super::triggers::{Key, Primary, Role, change_reason, keys, passes};
use super::worker::Worker;
use crate::contract::Reason;
use crate::informer::{Cached, Change, Informer, OwnWrites};

/// Feeds one informer's objects and changes into the queue: what others
/// cause first; a change that only echoes one of this process's writes
/// (`own`) after the backlog, as the backlog is.
pub(crate) async fn feed(
    informer: Arc<Informer>,
    source: Source,
    worker: Worker,
    reloaded: bool,
    own: Arc<OwnWrites>,
) {
    let role = source.role;
    let primary = &worker.primary;
    // Once the first list is in: subscribe, then take what the cache holds;
    // later changes arrive on the channel (one made between the two is
    // seen twice, and merged by the queue while pending). Subscribing only
    // now keeps the first list's burst of changes out of the channel: the
    // list below covers it, and the same object would run twice otherwise.
    informer.wait_ready().await;
    primary.wait_ready().await;
    let mut changes = informer.subscribe();
    let primary_kind = worker.dispatch.serving().manifest().primary.clone();
    let view = Primary {
        kind: &primary_kind,
        namespaced: primary.namespaced(),
    };
    let all_primaries = || {
        primary
            .list()
            .iter()
            .map(|p| (p.namespace().map(str::to_string), p.name().to_string()))
            .collect()
    };
    // Every primary is reconciled once at start: `added`, or
    // `module-reloaded` for a new version of a running module. The
    // primary's feeder queues them all; the others queue only the
    // primaries their objects point to that are gone (their `deleted`
    // reconcile), so nothing runs twice. The first list is a backlog: low
    // priority, after what users cause.
    let initial = if reloaded {
        Reason::ModuleReloaded
    } else {
        Reason::Added
    };
    let only_missing_primaries = !matches!(role, Role::Primary);
    let ours = |key: &Key, object: &Cached| {
        worker
            .sharded
            .as_ref()
            .is_none_or(|s| s.admits(key, &role, object, primary))
    };
    for object in informer.list(None) {
        for key in keys(&role, &object, &view, all_primaries) {
            if only_missing_primaries && primary.get(key.0.as_deref(), &key.1).is_some() {
                continue;
            }
            if !ours(&key, &object) {
                continue;
            }
            worker.queue.add_with(key, initial, Priority::Low);
        }
    }
    loop {
        let (object, reason) = match changes.recv().await {
            Some(Change::Added(object)) => (object, change_reason(&role, Reason::Added)),
            Some(Change::Updated(old, object)) => {
                if !passes(&source.predicates, &old, &object) {
                    continue;
                }
                (object, change_reason(&role, Reason::Updated))
            }
            Some(Change::Deleted(object)) => (object, change_reason(&role, Reason::Deleted)),
            None => return,
        };
        let priority = if own.is_echo(&object) {
            Priority::Low
        } else {
            Priority::High
        };
        for key in keys(&role, &object, &view, all_primaries) {
            if ours(&key, &object) {
                worker.queue.add_with(key, reason, priority);
            }
        }
    }
}
