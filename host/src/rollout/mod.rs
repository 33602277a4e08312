//! Rollout: a new version of a module runs in **shadow** beside the
//! serving one — every request the serving version reconciles is
//! reconciled by the shadow too, its writes dry runs (`dryRun=All`:
//! admitted, defaulted and validated, nothing stored) and its Events
//! dropped — optionally serving a **canary** share of the objects live;
//! the host compares the two versions' writes and keeps, per object,
//! whether they agree and a unified diff. A policy promotes or aborts the
//! shadow on its own; an operator does it by hand.
//! May call: source (origins), dispatch (the shadow's layer), replay (the
//! recordings served), runtime, telemetry (and config, names, contract).
//!
//! This room keeps each module's rollout ([`Rollout`]: which shadow runs,
//! what it did, its policy's tally — `state`, `policy`), answers for it
//! (`rekon rollout status`, `status`) and serves the admin endpoints on
//! the metrics port ([`Admin`]: `/rollout/<module>`, its `promote` and
//! `abort`, `/recordings/<module>`); running the shadow and comparing is
//! the dispatch's ([`crate::dispatch`]), which this room tells what runs
//! through `Shadowing`.
//!
//! What the user sees: `/rollout/<module>` (`rekon rollout status
//! MODULE`), the metrics `rekon_shadow_reconciles_total`,
//! `rekon_shadow_differences_total`, `rekon_shadow_errors_total`, and one
//! `ShadowDiffers` Event per object the first time the versions differ.

mod admin;
pub mod api;
mod durable;
mod follow;
mod health;
mod policy;
pub mod resource;
mod state;
mod status;
mod steps;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;

pub use crate::dispatch::{Compared, SHADOW_BACKLOG, in_canary};
pub use admin::Admin;
pub use api::RolloutApi;
pub(crate) use durable::Keeper;
pub(crate) use follow::{StateChange, follow};
pub use state::Rollout;
pub(crate) use state::ShadowVersion;

/// What an operator asks of a module's rollout (`rekon rollout`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// The shadow becomes the serving version.
    Promote,
    /// The shadow goes; the serving version goes on alone.
    Abort,
}

/// Where the rollouts' commands go (the loader's driver), once the host
/// runs.
type Commands = Arc<Mutex<Option<mpsc::UnboundedSender<(String, Command)>>>>;

/// The modules' rollouts, by module name (kept across versions).
#[derive(Default)]
pub struct Rollouts {
    map: Mutex<BTreeMap<String, Arc<Rollout>>>,
    commands: Commands,
    /// Where the rollouts are kept in the cluster, once they are.
    keeper: Keeper,
    /// Where each candidate is shown (`rekon_candidate_canary_percent`).
    metrics: Arc<crate::telemetry::Metrics>,
}

impl std::fmt::Debug for Rollouts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rollouts").finish_non_exhaustive()
    }
}

impl Rollouts {
    /// The rollouts of a host whose metrics are `metrics`.
    pub fn new(metrics: Arc<crate::telemetry::Metrics>) -> Rollouts {
        Rollouts {
            metrics,
            ..Rollouts::default()
        }
    }

    /// The rollout of `module`.
    pub fn of(&self, module: &str) -> Arc<Rollout> {
        self.map
            .lock()
            .expect("rollouts lock")
            .entry(module.to_string())
            .or_insert_with(|| {
                let mut rollout = Rollout::new(module, self.commands.clone(), self.keeper.clone());
                rollout.metrics = Some(self.metrics.clone());
                Arc::new(rollout)
            })
            .clone()
    }

    /// Every module's rollout.
    pub(crate) fn all(&self) -> Vec<Arc<Rollout>> {
        self.map
            .lock()
            .expect("rollouts lock")
            .values()
            .cloned()
            .collect()
    }

    /// The rollout of `module`, if it ever had a shadow.
    pub fn get(&self, module: &str) -> Option<Arc<Rollout>> {
        self.map.lock().expect("rollouts lock").get(module).cloned()
    }

    /// Sends the commands to `sender` from now on.
    pub(crate) fn command_to(&self, sender: mpsc::UnboundedSender<(String, Command)>) {
        *self.commands.lock().expect("rollouts lock") = Some(sender);
    }

    /// Asks `command` of `module`'s rollout; why not, when it cannot be.
    pub fn command(&self, module: &str, command: Command) -> Result<(), String> {
        match self.get(module) {
            Some(rollout) => rollout.command(command),
            None => Err(format!("no module {module:?} runs on this host")),
        }
    }
}
