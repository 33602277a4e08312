//! A sharded module's controller: which requests are this replica's (the
//! point of their primary in the admitted ranges), the write fence of one
//! reconcile, and every object of a range gained queued once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rekon_rules::shard_point;

use super::Primaries;
use super::queue::{Priority, WorkQueue};
use super::triggers::{Key, Role};
use crate::cluster::Cluster;
use crate::cluster::fence::Fenced;
use crate::config::ShardBy;
use crate::contract::{Mapping, Reason};
use crate::ha::{Leadership, Shards};
use crate::informer::{Cached, ShardField};
use crate::telemetry::Metrics;

/// A sharded controller's share of the work.
#[derive(Clone)]
pub(crate) struct Sharded {
    pub by: ShardBy,
    pub shards: Shards,
    /// The points of the keys queued, for those whose primary is not
    /// cached (a deleted one).
    points: Arc<Mutex<HashMap<Key, u64>>>,
    /// The unfenced cluster, and the module's fence, for one reconcile's
    /// fence.
    pub inner: Arc<dyn Cluster>,
    pub leadership: Leadership,
}

impl Sharded {
    pub fn new(
        by: ShardBy,
        shards: Shards,
        inner: Arc<dyn Cluster>,
        leadership: Leadership,
    ) -> Sharded {
        Sharded {
            by,
            shards,
            points: Arc::default(),
            inner,
            leadership,
        }
    }

    /// What places the primary kind's objects in its informer.
    pub fn field(by: ShardBy) -> ShardField {
        match by {
            ShardBy::Uid => ShardField::Uid,
            ShardBy::Namespace => ShardField::Namespace,
        }
    }

    /// What places the owned kinds' objects in their informers: their
    /// controller owner (by uid), or their namespace.
    pub fn owned_field(by: ShardBy) -> ShardField {
        match by {
            ShardBy::Uid => ShardField::Owner,
            ShardBy::Namespace => ShardField::Namespace,
        }
    }

    /// The point of `key`, queued because of `object` seen in `role`: the
    /// primary's uid (an owned object names it in its owner reference), or
    /// the namespace. None when it cannot be told (the primary is not in
    /// this replica's cache: another replica's).
    pub fn point(
        &self,
        key: &Key,
        role: &Role,
        object: &Cached,
        primaries: &Primaries,
    ) -> Option<u64> {
        if self.by == ShardBy::Namespace {
            return Some(shard_point(key.0.as_deref().unwrap_or_default()));
        }
        let point = match role {
            Role::Primary => Some(shard_point(object.uid())),
            Role::Owned | Role::Watched(Mapping::OwnerReference) => object
                .owners
                .iter()
                .find(|o| o.controller && o.name == key.1)
                .map(|o| shard_point(&o.uid)),
            _ => None,
        }
        .or_else(|| self.cached_point(key, primaries))?;
        self.points
            .lock()
            .expect("points lock")
            .insert(key.clone(), point);
        Some(point)
    }

    fn cached_point(&self, key: &Key, primaries: &Primaries) -> Option<u64> {
        primaries
            .get(key.0.as_deref(), &key.1)
            .map(|p| shard_point(p.uid()))
    }

    /// The point of a key taken from the queue.
    pub fn point_of_key(&self, key: &Key, primaries: &Primaries) -> Option<u64> {
        if self.by == ShardBy::Namespace {
            return Some(shard_point(key.0.as_deref().unwrap_or_default()));
        }
        self.cached_point(key, primaries)
            .or_else(|| self.points.lock().expect("points lock").get(key).copied())
    }

    /// Whether `key` (of `object` in `role`) is queued here.
    pub fn admits(&self, key: &Key, role: &Role, object: &Cached, primaries: &Primaries) -> bool {
        self.point(key, role, object, primaries)
            .is_some_and(|p| self.shards.admits(p))
    }

    /// A key done with: its point need not be remembered once its primary
    /// is gone.
    pub fn forget(&self, key: &Key, primaries: &Primaries) {
        if primaries.get(key.0.as_deref(), &key.1).is_none() {
            self.points.lock().expect("points lock").remove(key);
        }
    }

    /// The cluster of one reconcile of an object at `point`: writes go
    /// out only while its range is held here and the membership current.
    pub fn fenced(&self, module: &str, metrics: &Arc<Metrics>, point: u64) -> Arc<dyn Cluster> {
        Arc::new(Fenced {
            inner: self.inner.clone(),
            leadership: self.leadership.clone(),
            module: module.to_string(),
            metrics: metrics.clone(),
            shard: Some((self.shards.clone(), point)),
        })
    }
}

/// Queues every primary of a range once it is admitted here (the first
/// ranges included), until the controller stops.
pub(crate) async fn queue_gained(
    sharded: Sharded,
    primaries: Primaries,
    queue: WorkQueue<Key, Reason>,
) {
    let mut admitted = sharded.shards.admitted();
    let mut before = admitted.borrow_and_update().clone();
    while admitted.changed().await.is_ok() {
        let now = admitted.borrow_and_update().clone();
        let gained = now.minus(&before);
        before = now;
        if gained.is_empty() {
            continue;
        }
        let mut queued = 0usize;
        for object in primaries.list() {
            let key = (
                object.namespace().map(str::to_string),
                object.name().to_string(),
            );
            if sharded
                .point_of_key(&key, &primaries)
                .is_some_and(|p| gained.contains(p))
            {
                queue.add_with(key, Reason::Added, Priority::Normal);
                queued += 1;
            }
        }
        tracing::info!(ranges = %gained, queued, "sharding: objects of the ranges gained queued");
    }
}
