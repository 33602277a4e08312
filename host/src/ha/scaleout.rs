//! Scale-out mode (`rekon run --scale-out`): the modules are spread across
//! the replicas, each module owned through its own Lease.
//!
//! Every replica loads every module and keeps its informers synced (so a
//! takeover starts on warm caches), but reconciles a module only while it
//! holds the module's Lease `<prefix>-module-<module>`. Each replica also
//! holds a membership Lease `<prefix>-replica-<identity>`, renewed every
//! retry period: the live replicas are those whose membership Lease has
//! not been seen unchanged for a whole lease duration. All Leases of a
//! group carry the label `rekon.dev/scale-out: <prefix>`, and one list of
//! them per round is all a replica reads.
//!
//! Each round, a replica renews the module Leases it holds and computes its
//! share, `ceil(modules / live replicas)`:
//! - above its share (a replica joined), it stops reconciling the excess
//!   modules, then releases their Leases so others take them at once;
//! - below its share, it takes free Leases (never held, released, or
//!   expired) until it reaches it; when a replica dies, its Leases expire
//!   after a lease duration and the others take them.
//!
//! Which modules a replica prefers is rendezvous hashing of (identity,
//! module): replicas go for different free Leases and rarely collide, and
//! when one gives modules up it gives those it prefers least. Writes of a
//! module are fenced by its Lease exactly like the host's writes are in
//! leader-election mode (see [`super::leader`]).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::Lease;
use kube::ResourceExt as _;
use tokio::sync::{Notify, watch};

use super::leader::{Holder, LeaderConfig, Leadership};
use super::leases::lease_name;
use super::leases::{Leases, holder_of};
use super::shares::{score, share};
use crate::telemetry::Metrics;

/// The label on every Lease of a scale-out group; its value is the prefix.
pub const GROUP_LABEL: &str = "rekon.dev/scale-out";
/// The label telling a module Lease (`module`) from a membership Lease
/// (`replica`).
pub const ROLE_LABEL: &str = "rekon.dev/lease-role";

/// A membership Lease not renewed for this many lease durations is deleted
/// by the other replicas (its replica is gone for good).
const STALE_MEMBER: u32 = 10;

/// The module Leases of this replica: one [`Leadership`] per loaded module.
#[derive(Clone, Default)]
pub(crate) struct ModuleLeases {
    slots: Arc<Mutex<BTreeMap<String, Slot>>>,
    changed: Arc<Notify>,
    renew_deadline: Duration,
}

struct Slot {
    holder: Holder,
    leadership: Leadership,
    /// False once the module is unloaded: its Lease is released, then the
    /// slot goes.
    loaded: bool,
}

impl ModuleLeases {
    pub fn new(renew_deadline: Duration) -> ModuleLeases {
        ModuleLeases {
            renew_deadline,
            ..ModuleLeases::default()
        }
    }

    /// The leadership of `module`, which competes for its Lease from now on.
    pub fn for_module(&self, module: &str) -> Leadership {
        let mut slots = self.slots.lock().expect("module leases lock");
        let slot = slots.entry(module.to_string()).or_insert_with(|| {
            let (holder, leadership) = Holder::new(self.renew_deadline);
            Slot {
                holder,
                leadership,
                loaded: true,
            }
        });
        slot.loaded = true;
        self.changed.notify_one();
        slot.leadership.clone()
    }

    /// Whether this replica holds `module`'s Lease.
    pub fn leads(&self, module: &str) -> bool {
        self.slots
            .lock()
            .expect("module leases lock")
            .get(module)
            .is_some_and(|s| s.leadership.is_leading())
    }

    /// `module` was unloaded: its Lease is given up.
    pub fn unload(&self, module: &str) {
        if let Some(slot) = self
            .slots
            .lock()
            .expect("module leases lock")
            .get_mut(module)
        {
            slot.holder.lost();
            slot.loaded = false;
        }
        self.changed.notify_one();
    }
}

/// Runs the coordination until `stop`; then releases every module Lease
/// held and deletes the membership Lease, so the others take over at once.
pub(crate) async fn run(
    client: kube::Client,
    config: LeaderConfig,
    leases: ModuleLeases,
    metrics: Arc<Metrics>,
    mut stop: watch::Receiver<bool>,
) {
    let mut coordinator = Coordinator {
        leases: Leases::new(client, &config),
        selector: format!("{GROUP_LABEL}={}", config.name),
        member: lease_name(&config.name, "replica", &config.identity),
        config,
        modules: leases.clone(),
        metrics,
        held: BTreeSet::new(),
    };
    tracing::info!(
        identity = %coordinator.config.identity,
        group = %coordinator.config.name,
        "scale-out: competing for module Leases"
    );
    loop {
        coordinator.round().await;
        tokio::select! {
            _ = tokio::time::sleep(coordinator.config.retry_period) => {}
            _ = leases.changed.notified() => {}
            _ = stop.wait_for(|s| *s) => break,
        }
    }
    coordinator.leave().await;
}

/// This replica's part in the scale-out group: the Leases it holds and
/// competes for, round after round.
struct Coordinator {
    config: LeaderConfig,
    leases: Leases,
    selector: String,
    member: String,
    modules: ModuleLeases,
    metrics: Arc<Metrics>,
    /// The module Leases held after the last round.
    held: BTreeSet<String>,
}

impl Coordinator {
    fn labels(&self, role: &str) -> BTreeMap<String, String> {
        let mut labels = super::leader::managed_by();
        labels.insert(GROUP_LABEL.to_string(), self.config.name.clone());
        labels.insert(ROLE_LABEL.to_string(), role.to_string());
        labels
    }

    fn module_lease(&self, module: &str) -> String {
        lease_name(&self.config.name, "module", module)
    }

    /// One round: renew the membership, count the live replicas, give up
    /// unloaded modules, renew the module Leases held, then hand over or
    /// take Leases to reach this replica's share.
    async fn round(&mut self) {
        let started = Instant::now();
        let by_name = match self.leases.list(&self.selector).await {
            Ok(listed) => listed
                .into_iter()
                .filter_map(|l| Some((l.metadata.name.clone()?, l)))
                .collect::<BTreeMap<String, Lease>>(),
            Err(error) => {
                tracing::warn!(error = %error, "scale-out: cannot list the Leases");
                self.publish();
                return;
            }
        };
        let replicas = self.membership(&by_name).await;
        let loaded = self.loaded_modules().await;
        let target = share(loaded.len(), replicas);
        let (mut mine, free) = self.renew(&loaded, &by_name, started).await;
        let me = self.leases.identity().to_string();
        // Too many (a replica joined): hand over those we want least.
        mine.sort_by_key(|m| std::cmp::Reverse(score(&me, m)));
        while mine.len() > target {
            let module = mine.pop().expect("more than the target");
            self.give_up(&module, "rebalancing").await;
        }
        self.take(free, &mut mine, target, &by_name).await;
        self.publish();
        if mine.len() != self.held.len() || mine.iter().any(|m| !self.held.contains(m)) {
            tracing::info!(
                replicas,
                share = target,
                modules = ?mine,
                "scale-out: module Leases held"
            );
        }
        self.held = mine.into_iter().collect();
        self.metrics.leader.set(i64::from(!self.held.is_empty()));
    }

    /// Renews this replica's membership Lease, deletes those of replicas
    /// long gone, and returns how many replicas are live (this one too).
    async fn membership(&mut self, by_name: &BTreeMap<String, Lease>) -> usize {
        let member = self.member.clone();
        let labels = self.labels("replica");
        if let Err(error) = self
            .leases
            .acquire_or_renew(&member, by_name.get(&member), &labels)
            .await
        {
            tracing::warn!(lease = %member, error = %error, "scale-out: cannot renew the membership Lease");
        }
        let mut replicas = 1;
        let mut stale = Vec::new();
        for (name, lease) in by_name {
            if lease.labels().get(ROLE_LABEL).map(String::as_str) != Some("replica")
                || *name == member
            {
                continue;
            }
            if !self.leases.expired(lease) {
                replicas += 1;
            } else if self.leases.unchanged_for(lease) >= self.config.lease_duration * STALE_MEMBER
            {
                stale.push(name.clone());
            }
        }
        for name in stale {
            tracing::info!(lease = %name, "scale-out: deleting the Lease of a replica long gone");
            self.leases.delete(&name).await;
        }
        replicas
    }

    /// The modules loaded here; those unloaded give their Lease up first.
    async fn loaded_modules(&mut self) -> Vec<String> {
        let (loaded, unloaded): (Vec<String>, Vec<String>) = {
            let slots = self.modules.slots.lock().expect("module leases lock");
            let (loaded, unloaded): (Vec<_>, Vec<_>) = slots.iter().partition(|(_, s)| s.loaded);
            (
                loaded.into_iter().map(|(m, _)| m.clone()).collect(),
                unloaded.into_iter().map(|(m, _)| m.clone()).collect(),
            )
        };
        for module in unloaded {
            self.give_up(&module, "unloaded").await;
            let mut slots = self.modules.slots.lock().expect("module leases lock");
            // Unless it was loaded again meanwhile.
            if slots.get(&module).is_some_and(|s| !s.loaded) {
                slots.remove(&module);
            }
        }
        loaded
    }

    /// Renews the module Leases held; returns the modules still held and
    /// those whose Lease is free (never held, released, or expired).
    async fn renew(
        &mut self,
        loaded: &[String],
        by_name: &BTreeMap<String, Lease>,
        started: Instant,
    ) -> (Vec<String>, Vec<String>) {
        let me = self.leases.identity().to_string();
        let labels = self.labels("module");
        let mut mine = Vec::new();
        let mut free = Vec::new();
        for module in loaded {
            let name = self.module_lease(module);
            let current = by_name.get(&name);
            if current.is_none_or(|l| holder_of(l) != me) {
                self.with_holder(module, Holder::lost);
                if current.is_none_or(|l| self.leases.expired(l)) {
                    free.push(module.clone());
                }
                continue;
            }
            match self.leases.acquire_or_renew(&name, current, &labels).await {
                Ok(true) => {
                    self.with_holder(module, |h| h.renewed(started));
                    mine.push(module.clone());
                }
                Ok(false) => {
                    self.with_holder(module, Holder::lost);
                }
                Err(error) => {
                    tracing::warn!(lease = %name, error = %error, "scale-out: cannot renew a module Lease");
                    // Still ours until the renew deadline says otherwise.
                    if self.with_holder(module, |h| h.leading()) == Some(true) {
                        mine.push(module.clone());
                    }
                }
            }
        }
        (mine, free)
    }

    /// Takes free Leases, those this replica wants most first, until it
    /// holds `target`.
    async fn take(
        &mut self,
        mut free: Vec<String>,
        mine: &mut Vec<String>,
        target: usize,
        by_name: &BTreeMap<String, Lease>,
    ) {
        let me = self.leases.identity().to_string();
        let labels = self.labels("module");
        free.sort_by_key(|m| std::cmp::Reverse(score(&me, m)));
        for module in free {
            if mine.len() >= target {
                break;
            }
            let name = self.module_lease(&module);
            let attempt = Instant::now();
            match self
                .leases
                .acquire_or_renew(&name, by_name.get(&name), &labels)
                .await
            {
                Ok(true) => {
                    self.with_holder(&module, |h| h.renewed(attempt));
                    mine.push(module);
                }
                Ok(false) => {}
                Err(error) => {
                    tracing::warn!(lease = %name, error = %error, "scale-out: cannot take a module Lease")
                }
            }
        }
    }

    fn with_holder<T>(&self, module: &str, f: impl FnOnce(&Holder) -> T) -> Option<T> {
        self.modules
            .slots
            .lock()
            .expect("module leases lock")
            .get(module)
            .map(|s| f(&s.holder))
    }

    /// Stops reconciling `module` here (writes are refused from now on),
    /// then releases its Lease.
    async fn give_up(&mut self, module: &str, why: &str) {
        let held = self.with_holder(module, |h| {
            let leading = h.leading();
            h.lost();
            h.publish();
            leading
        });
        if held.unwrap_or(false) || self.held.contains(module) {
            tracing::info!(module, why, "scale-out: handing the module over");
            let name = self.module_lease(module);
            self.leases.release(&name).await;
        }
    }

    /// Tells the controllers whose leadership changed.
    fn publish(&self) {
        let slots = self.modules.slots.lock().expect("module leases lock");
        for (module, slot) in slots.iter() {
            match slot.holder.publish() {
                Some(true) => {
                    tracing::info!(module = %module, "scale-out: reconciling the module here")
                }
                Some(false) => {
                    tracing::info!(module = %module, "scale-out: no longer reconciling the module here")
                }
                None => {}
            }
        }
    }

    /// Leaves the group: releases every module Lease, deletes the
    /// membership Lease.
    async fn leave(&mut self) {
        let modules: Vec<String> = self
            .modules
            .slots
            .lock()
            .expect("module leases lock")
            .keys()
            .cloned()
            .collect();
        for module in modules {
            self.give_up(&module, "shutting down").await;
        }
        let member = self.member.clone();
        self.leases.delete(&member).await;
        self.metrics.leader.set(0);
    }
}
