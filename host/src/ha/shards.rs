//! Sharding: one module's objects spread over every replica by a hash of
//! their uid (or namespace). This is the handle the controllers, informers
//! and writes of sharded modules share; [`super::ring`] moves its ranges.
//!
//! Two sets of ranges, as the handoff needs them:
//! - **held**: the points whose objects this replica may write for, and
//!   which its sharded informers cache. A range joins it once claimed in
//!   this replica's membership Lease with no other live replica claiming
//!   it, and leaves it only once no reconcile of it runs any more.
//! - **admitted**: the points whose objects are queued and reconciled here
//!   now. A range leaves it first (no new work), and joins it last (once
//!   the caches hold its objects), when every object in it is queued once.
//!
//! Without coordination (one replica, no Leases) both are every point.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rekon_rules::ShardRanges;
use tokio::sync::watch;

use super::leader::{Holder, Leadership};

/// The shard ranges of this replica, shared. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Shards(Arc<Inner>);

struct Inner {
    held: watch::Sender<ShardRanges>,
    admitted: watch::Sender<ShardRanges>,
    /// Points of the reconciles running now (a multiset).
    in_flight: Mutex<Vec<u64>>,
    /// What each sharded informer's cache holds.
    caches: Mutex<Vec<watch::Receiver<Option<ShardRanges>>>>,
    /// Writes of sharded modules go out while this leads: the membership
    /// Lease renewed within the renew deadline.
    leadership: Leadership,
    holder: Option<Holder>,
}

impl std::fmt::Debug for Shards {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shards")
            .field("held", &*self.0.held.borrow())
            .field("admitted", &*self.0.admitted.borrow())
            .finish_non_exhaustive()
    }
}

/// One reconcile of a sharded module running; counted until dropped.
pub(crate) struct InFlight {
    shards: Shards,
    point: u64,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        let mut in_flight = self.shards.0.in_flight.lock().expect("in flight lock");
        if let Some(at) = in_flight.iter().position(|p| *p == self.point) {
            in_flight.swap_remove(at);
        }
    }
}

impl Shards {
    /// Every point, for good: one replica, nothing to coordinate.
    pub fn whole() -> Shards {
        Shards::with(ShardRanges::all(), Leadership::always(), None)
    }

    /// No point until the ring gives some; writes go out while the
    /// membership Lease is renewed within `renew_deadline`.
    pub fn coordinated(renew_deadline: Duration) -> Shards {
        let (holder, leadership) = Holder::new(renew_deadline);
        Shards::with(ShardRanges::none(), leadership, Some(holder))
    }

    fn with(ranges: ShardRanges, leadership: Leadership, holder: Option<Holder>) -> Shards {
        Shards(Arc::new(Inner {
            held: watch::Sender::new(ranges.clone()),
            admitted: watch::Sender::new(ranges),
            in_flight: Mutex::new(Vec::new()),
            caches: Mutex::new(Vec::new()),
            leadership,
            holder,
        }))
    }

    /// What the writes of sharded modules are fenced by.
    pub fn leadership(&self) -> Leadership {
        self.0.leadership.clone()
    }

    /// The ranges held, changing as they move (what sharded informers
    /// cache).
    pub fn held(&self) -> watch::Receiver<ShardRanges> {
        self.0.held.subscribe()
    }

    /// The ranges admitted, changing as they move.
    pub fn admitted(&self) -> watch::Receiver<ShardRanges> {
        self.0.admitted.subscribe()
    }

    /// Whether an object at `point` is queued and reconciled here now.
    pub fn admits(&self, point: u64) -> bool {
        self.0.admitted.borrow().contains(point)
    }

    /// Whether a reconcile of an object at `point` may write: its range
    /// is held and the membership is current.
    pub fn may_write(&self, point: u64) -> bool {
        self.0.leadership.is_leading() && self.0.held.borrow().contains(point)
    }

    /// Counts a reconcile of an object at `point` until the guard drops.
    pub fn start(&self, point: u64) -> InFlight {
        self.0.in_flight.lock().expect("in flight lock").push(point);
        InFlight {
            shards: self.clone(),
            point,
        }
    }

    /// Follows a sharded informer's cache: ranges are admitted only once
    /// every cache followed holds them.
    pub fn follow_cache(&self, synced: watch::Receiver<Option<ShardRanges>>) {
        let mut caches = self.0.caches.lock().expect("caches lock");
        caches.retain(|c| c.has_changed().is_ok());
        caches.push(synced);
    }

    pub(super) fn holder(&self) -> Option<&Holder> {
        self.0.holder.as_ref()
    }

    pub(super) fn held_now(&self) -> ShardRanges {
        self.0.held.borrow().clone()
    }

    pub(super) fn admitted_now(&self) -> ShardRanges {
        self.0.admitted.borrow().clone()
    }

    pub(super) fn set_held(&self, ranges: ShardRanges) {
        self.0.held.send_if_modified(|held| {
            let changed = *held != ranges;
            *held = ranges;
            changed
        });
    }

    pub(super) fn set_admitted(&self, ranges: ShardRanges) {
        self.0.admitted.send_if_modified(|admitted| {
            let changed = *admitted != ranges;
            *admitted = ranges;
            changed
        });
    }

    /// Waits until no reconcile of a point in `ranges` runs, or `limit`
    /// passes; says whether they drained.
    pub(super) async fn drain(&self, ranges: &ShardRanges, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            let busy = self
                .0
                .in_flight
                .lock()
                .expect("in flight lock")
                .iter()
                .any(|p| ranges.contains(*p));
            if !busy {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Waits until every sharded informer's cache holds `ranges` (their
    /// list with them completed), or `limit` passes; says whether they do.
    pub(super) async fn caches_hold(&self, ranges: &ShardRanges, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            let ready = self
                .0
                .caches
                .lock()
                .expect("caches lock")
                .iter()
                .filter(|c| c.has_changed().is_ok())
                .all(|c| c.borrow().as_ref() == Some(ranges));
            if ready {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_range_drains_once_its_reconciles_end() {
        let shards = Shards::whole();
        let low = ShardRanges::part(0, 2);
        let running = shards.start(7);
        let elsewhere = shards.start(u64::MAX);
        assert!(!shards.drain(&low, Duration::from_millis(50)).await);
        drop(running);
        assert!(shards.drain(&low, Duration::from_millis(50)).await);
        drop(elsewhere);
        assert!(shards.may_write(7) && shards.admits(u64::MAX));
        shards.set_held(ShardRanges::part(1, 2));
        assert!(!shards.may_write(7), "a range no longer held is fenced");
    }

    #[tokio::test]
    async fn ranges_are_admitted_once_the_caches_hold_them() {
        let shards = Shards::whole();
        let (cache, synced) = watch::channel(None);
        shards.follow_cache(synced);
        let half = ShardRanges::part(0, 2);
        assert!(!shards.caches_hold(&half, Duration::from_millis(30)).await);
        cache.send_replace(Some(half.clone()));
        assert!(shards.caches_hold(&half, Duration::from_millis(30)).await);
        drop(cache);
        assert!(
            shards
                .caches_hold(&ShardRanges::all(), Duration::from_millis(30))
                .await,
            "an informer gone is not waited for"
        );
    }
}
