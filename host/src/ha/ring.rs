//! The ring: which ranges of the hash space each replica reconciles for
//! sharded modules, coordinated with nothing but Leases.
//!
//! Each replica holds a membership Lease `<prefix>-shard-<identity>`
//! (label `rekon.dev/shard-group: <prefix>`), renewed every retry period,
//! whose annotation `rekon.dev/shard-ranges` says the ranges it claims.
//! The live replicas (Leases not seen unchanged for a lease duration)
//! share the hash space's slots equally, each slot going to the replica
//! that wants it most with room left (rendezvous hashing,
//! [`ShardRanges::assigned`]): every replica computes the same target from
//! the same Leases, and when one leaves only its slots move, spread over
//! the others.
//!
//! A round, for this replica:
//! 1. **Claim** what its target holds that no other live replica claims:
//!    written into its Lease first, then the Leases read again; a range
//!    another live replica claims by then is given back (of two replicas
//!    claiming at once, the second to read sees the first, so never both
//!    keep it). Then its sharded caches list the new ranges, and every
//!    object in them is queued once. (First: a dead replica's ranges wait
//!    for nobody.)
//! 2. **Release** what it holds outside its target: no new work for those
//!    objects at once, reconciles in flight finish (bounded by half the
//!    renew deadline; then their writes are refused), and only then the
//!    claim is taken out of its Lease.
//!
//! A replica that stops renewing stops writing at its renew deadline; the
//! others ignore its claims once its Lease has not changed for a lease
//! duration, which is longer. So no object has two writers, and a range
//! whose replica died is taken over within a lease duration and a round.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use kube::ResourceExt as _;
use rekon_rules::ShardRanges;
use tokio::sync::watch;

use super::leader::LeaderConfig;
use super::leases::{Leases, lease_name};
use super::shards::Shards;
use crate::telemetry::{DirectionLabel, Metrics};

/// The label on every membership Lease of a shard ring; its value is the
/// prefix.
pub const GROUP_LABEL: &str = "rekon.dev/shard-group";
/// The annotation of a membership Lease: the ranges its replica claims.
pub const RANGES_ANNOTATION: &str = "rekon.dev/shard-ranges";

/// A membership Lease not renewed for this many lease durations is deleted
/// by the others (its replica is gone for good).
const STALE_MEMBER: u32 = 10;

/// This replica's target among `members` (sorted, itself included): its
/// slots of the hash space ([`ShardRanges::assigned`]).
pub(super) fn target(members: &[String], me: &str) -> ShardRanges {
    ShardRanges::assigned(members, me)
}

/// The ranges a membership Lease claims (none if it says nothing readable).
pub(super) fn claims(lease: &Lease) -> ShardRanges {
    lease
        .annotations()
        .get(RANGES_ANNOTATION)
        .and_then(|text| ShardRanges::parse(text))
        .unwrap_or_default()
}

/// What this replica read of the ring in one list.
struct View {
    /// Live replicas, sorted, this one included.
    members: Vec<String>,
    /// What the other live replicas claim.
    others: ShardRanges,
    /// Our own Lease as read.
    mine: Option<Lease>,
    /// How long until the first live member's Lease expires, unrenewed.
    first_expiry: Option<Duration>,
}

struct Ring {
    config: LeaderConfig,
    leases: Leases,
    selector: String,
    member: String,
    shards: Shards,
    metrics: Arc<Metrics>,
    /// When the current target was first seen different from what is held.
    moving_since: Option<Instant>,
    /// Our membership Lease as last written (the next write's base).
    mine: Option<Lease>,
}

/// Runs this replica's part in the ring until `stop`; then hands every
/// range over and deletes its membership Lease, so the others take over
/// at once.
pub(crate) async fn run(
    client: kube::Client,
    config: LeaderConfig,
    shards: Shards,
    metrics: Arc<Metrics>,
    mut stop: watch::Receiver<bool>,
) {
    let mut ring = Ring {
        leases: Leases::new(client, &config),
        selector: format!("{GROUP_LABEL}={}", config.name),
        member: lease_name(&config.name, "shard", &config.identity),
        config,
        shards,
        metrics,
        moving_since: None,
        mine: None,
    };
    tracing::info!(identity = %ring.config.identity, group = %ring.config.name, "sharding: joining the ring");
    loop {
        let next = ring.round().await;
        tokio::select! {
            _ = tokio::time::sleep(next) => {}
            _ = stop.wait_for(|s| *s) => break,
        }
    }
    ring.leave().await;
}

impl Ring {
    fn labels(&self) -> BTreeMap<String, String> {
        let mut labels = super::leader::managed_by();
        labels.insert(GROUP_LABEL.to_string(), self.config.name.clone());
        labels
    }

    /// Reads the ring: the live members and what the others claim.
    async fn view(&mut self) -> Option<View> {
        let listed = match self.leases.list(&self.selector).await {
            Ok(listed) => listed,
            Err(error) => {
                tracing::warn!(error = %error, "sharding: cannot list the membership Leases");
                return None;
            }
        };
        let me = self.leases.identity().to_string();
        let mut view = View {
            members: vec![me],
            others: ShardRanges::none(),
            mine: None,
            first_expiry: None,
        };
        let mut stale = Vec::new();
        for lease in listed {
            let name = lease.name_any();
            if name == self.member {
                view.mine = Some(lease);
                continue;
            }
            if !self.leases.expired(&lease) {
                view.members
                    .push(super::leases::holder_of(&lease).to_string());
                view.others = view.others.union(&claims(&lease));
                let duration =
                    super::leases::duration_of(&lease).unwrap_or(self.config.lease_duration);
                let left = duration.saturating_sub(self.leases.unchanged_for(&lease));
                view.first_expiry = Some(view.first_expiry.map_or(left, |f| f.min(left)));
            } else if self.leases.unchanged_for(&lease) >= self.config.lease_duration * STALE_MEMBER
            {
                stale.push(name);
            }
        }
        for name in stale {
            tracing::info!(lease = %name, "sharding: deleting the Lease of a replica long gone");
            self.leases.delete(&name).await;
        }
        view.members.sort();
        view.members.dedup();
        Some(view)
    }

    /// Writes our membership Lease claiming `ranges` over `current` (None:
    /// over the Lease as we last wrote it, or as read now); says whether it
    /// was written (and renews the write fence if so).
    async fn publish(&mut self, current: Option<&Lease>, ranges: &ShardRanges) -> bool {
        let started = Instant::now();
        let member = self.member.clone();
        let base = match current {
            Some(lease) => Some(lease.clone()),
            None => match self.mine.clone() {
                Some(lease) => Some(lease),
                None => self.leases.get(&member).await.ok().flatten(),
            },
        };
        let labels = self.labels();
        let text = ranges.to_string();
        let written = self
            .leases
            .acquire_or_renew_annotated(&member, base.as_ref(), &labels, (RANGES_ANNOTATION, &text))
            .await;
        match written {
            Ok(Some(lease)) => {
                self.mine = Some(lease);
                if let Some(holder) = self.shards.holder() {
                    holder.renewed(started);
                    holder.publish();
                }
                true
            }
            Ok(None) => {
                self.mine = None;
                false
            }
            Err(error) => {
                self.mine = None;
                tracing::warn!(lease = %member, error = %error, "sharding: cannot renew the membership Lease");
                false
            }
        }
    }

    /// One round; returns how long to wait before the next: a retry
    /// period, or less when a member's Lease expires sooner (a dead
    /// replica's ranges are taken as soon as they may be).
    async fn round(&mut self) -> Duration {
        let retry = self.config.retry_period;
        let next = self.round_once().await;
        next.min(retry)
    }

    async fn round_once(&mut self) -> Duration {
        let retry = self.config.retry_period;
        let Some(view) = self.view().await else {
            return retry;
        };
        let held = self.shards.held_now();
        if !self.publish(view.mine.as_ref(), &held).await {
            return retry;
        }
        self.metrics.shard_members.set(view.members.len() as i64);
        let me = self.leases.identity().to_string();
        let target = target(&view.members, &me);
        let expiry = view
            .first_expiry
            .map_or(retry, |left| left + Duration::from_millis(20));
        if target == held && self.shards.admitted_now() == held {
            self.moving_since = None;
            return expiry;
        }
        let since = *self.moving_since.get_or_insert_with(Instant::now);
        // What nobody claims first (a dead replica's ranges are waited on),
        // then what another replica waits for.
        let wanted = target.minus(&held).minus(&view.others);
        if !wanted.is_empty() {
            self.claim(wanted, since).await;
        }
        let lost = self.shards.held_now().minus(&target);
        if !lost.is_empty() {
            self.release(&lost).await;
            self.metrics
                .shard_handoff_duration
                .observe(since.elapsed().as_secs_f64());
        }
        // A range still to come (another replica releasing it): look again
        // soon rather than a whole retry period later.
        if self.shards.held_now() != target {
            return (retry / 4).max(Duration::from_millis(50)).min(expiry);
        }
        expiry
    }

    /// Stops new work on `lost`, lets its reconciles finish, then takes it
    /// out of the held ranges and our Lease.
    async fn release(&mut self, lost: &ShardRanges) {
        let held = self.shards.held_now();
        let keep = held.minus(lost);
        self.shards
            .set_admitted(self.shards.admitted_now().minus(lost));
        let limit = self.config.renew_deadline / 2;
        if !self.shards.drain(lost, limit).await {
            tracing::warn!(ranges = %lost, limit = ?limit, "sharding: reconciles still running in ranges handed over; their writes are refused from now on");
        }
        self.shards.set_held(keep.clone());
        self.publish(None, &keep).await;
        self.metrics
            .shard_handoffs
            .get_or_create(&DirectionLabel {
                direction: "released".into(),
            })
            .inc();
        self.metrics.shard_fraction.set(keep.fraction());
        tracing::info!(released = %lost, holds = %keep, "sharding: ranges handed over");
    }

    /// Claims `wanted` in our Lease, gives back what another replica
    /// claimed meanwhile, then holds the rest: caches listed, then every
    /// object in it queued.
    async fn claim(&mut self, wanted: ShardRanges, since: Instant) {
        let held = self.shards.held_now();
        if !self.publish(None, &held.union(&wanted)).await {
            return;
        }
        let Some(view) = self.view().await else {
            return;
        };
        let contested = wanted.intersection(&view.others);
        let gained = wanted.minus(&contested);
        if !contested.is_empty() {
            tracing::info!(ranges = %contested, "sharding: another replica claims these too; giving them back");
            self.publish(None, &held.union(&gained)).await;
        }
        if gained.is_empty() {
            return;
        }
        let holds = held.union(&gained);
        self.shards.set_held(holds.clone());
        let limit = self.config.lease_duration;
        if !self.shards.caches_hold(&holds, limit).await {
            tracing::warn!(ranges = %gained, "sharding: caches not listed in time; reconciling the new ranges from what they hold");
        }
        self.shards.set_admitted(holds.clone());
        self.metrics
            .shard_handoffs
            .get_or_create(&DirectionLabel {
                direction: "gained".into(),
            })
            .inc();
        self.metrics
            .shard_handoff_duration
            .observe(since.elapsed().as_secs_f64());
        self.metrics.shard_fraction.set(holds.fraction());
        tracing::info!(gained = %gained, holds = %holds, "sharding: ranges taken");
    }

    /// Leaves the ring: hands every range over, deletes the Lease.
    async fn leave(&mut self) {
        let held = self.shards.held_now();
        if !held.is_empty() {
            self.release(&held).await;
        }
        if let Some(holder) = self.shards.holder() {
            holder.lost();
            holder.publish();
        }
        let member = self.member.clone();
        self.leases.delete(&member).await;
        self.metrics.shard_fraction.set(0.0);
        tracing::info!("sharding: left the ring");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_member_computes_a_part_of_its_own() {
        let members: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        let parts: Vec<ShardRanges> = members.iter().map(|m| target(&members, m)).collect();
        assert!(
            parts
                .iter()
                .all(|p| p.selector("object.metadata.uid").is_some())
        );
        let mut all = ShardRanges::none();
        for (i, part) in parts.iter().enumerate() {
            assert!((part.fraction() - 1.0 / 3.0).abs() < 1e-9);
            assert!(parts[i + 1..].iter().all(|p| !p.overlaps(part)));
            all = all.union(part);
        }
        assert_eq!(all, ShardRanges::all());
        assert!(target(&members, "d").is_empty(), "not a member");
    }

    #[test]
    fn claims_are_read_from_the_annotation() {
        let mut lease = Lease::default();
        assert!(claims(&lease).is_empty());
        let half = ShardRanges::part(1, 2);
        lease
            .annotations_mut()
            .insert(RANGES_ANNOTATION.into(), half.to_string());
        assert_eq!(claims(&lease), half);
        lease
            .annotations_mut()
            .insert(RANGES_ANNOTATION.into(), "garbage".into());
        assert!(claims(&lease).is_empty());
    }
}
