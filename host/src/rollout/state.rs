//! One module's rollout: its serving version's name, its shadow, what the
//! shadow did, and the commands its policy gives.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use super::durable::Keeper;
use super::policy::Tally;
use super::resource::VersionRef;
use super::{Command, Commands};
use crate::config::PolicyConfig;
use crate::dispatch::{Compared, Dispatcher, Shadow, ShadowQueue, Shadowing};
use crate::runtime::Module;
use crate::source::Origin;

/// The version shadowing a module's serving version.
#[derive(Clone)]
pub(crate) struct ShadowVersion {
    /// What runs its reconciles.
    pub module: Dispatcher,
    /// The version itself (what a promotion installs).
    pub version: Module,
    /// Where it comes from (`configmap:ns/name`, a path).
    pub origin: String,
    /// The percentage of objects it serves live
    /// ([`in_canary`](crate::dispatch::in_canary)).
    pub canary: u8,
    /// When it is promoted or dropped on its own.
    pub policy: PolicyConfig,
}

/// One module's rollout: its shadow, if any, and what the shadow did.
pub struct Rollout {
    pub(super) module: String,
    /// The serving version, as the state in the cluster names it.
    pub(super) serving_ref: Mutex<Option<VersionRef>>,
    /// Where the rollout is kept in the cluster, once it is.
    pub(super) keeper: Keeper,
    /// Where its candidate is shown (`rekon_candidate_canary_percent`).
    pub(super) metrics: Option<Arc<crate::telemetry::Metrics>>,
    /// The state in the cluster, as last seen.
    pub(super) seen: Mutex<Option<super::resource::RolloutStatus>>,
    /// The serving version, as `1.0.0 (digest)`, while one runs.
    serving: Mutex<Option<String>>,
    pub(super) shadow: Mutex<Option<ShadowVersion>>,
    /// Bumped whenever a shadow arrives (its controller queues every
    /// object once, so each is compared).
    arrivals: watch::Sender<u64>,
    pub(super) tally: Mutex<Tally>,
    /// What the candidate's live (canary) reconciles cost.
    pub(super) health: Mutex<super::health::Health>,
    /// Per object (`namespace/name`): the latest comparison, and whether
    /// the versions ever differed on it (its Event is sent once).
    objects: Mutex<BTreeMap<String, (Compared, bool)>>,
    /// The shadow's reconciles waiting.
    queue: Arc<ShadowQueue>,
    commands: Commands,
}

impl std::fmt::Debug for Rollout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rollout")
            .field("module", &self.module)
            .finish_non_exhaustive()
    }
}

impl Rollout {
    /// The rollout of `module`, its commands sent to `commands`.
    pub(super) fn new(module: &str, commands: Commands, keeper: Keeper) -> Rollout {
        Rollout {
            module: module.to_string(),
            serving_ref: Mutex::new(None),
            keeper,
            seen: Mutex::new(None),
            metrics: None,
            serving: Mutex::new(None),
            shadow: Mutex::new(None),
            arrivals: watch::Sender::new(0),
            tally: Mutex::new(Tally::default()),
            health: Mutex::default(),
            objects: Mutex::new(BTreeMap::new()),
            queue: Arc::default(),
            commands,
        }
    }

    /// Says which version serves (`None`: none now).
    pub(crate) fn set_serving(&self, serving: Option<String>) {
        *self.serving.lock().expect("rollout lock") = serving;
    }

    /// The serving version, as `1.0.0 (digest)`, while one runs.
    pub(super) fn serving(&self) -> Option<String> {
        self.serving.lock().expect("rollout lock").clone()
    }

    /// The shadow version, if one runs.
    pub(crate) fn shadow_version(&self) -> Option<ShadowVersion> {
        self.shadow.lock().expect("rollout lock").clone()
    }

    /// The shadow, if one runs from `origin`.
    pub(crate) fn shadow_from(&self, origin: &Origin) -> Option<ShadowVersion> {
        self.shadow_version()
            .filter(|s| s.origin == origin.to_string())
    }

    /// Ends the shadow if it runs from `origin`; whether it did.
    pub(crate) fn end_shadow_from(&self, origin: &Origin) -> bool {
        let Some(shadow) = self.shadow_from(origin) else {
            return false;
        };
        self.set_shadow(None);
        self.record_ended(shadow.version.digest().to_string());
        true
    }

    /// Runs `shadow` (replacing the one running: what it compared is
    /// forgotten), or none.
    pub(crate) fn set_shadow(&self, mut shadow: Option<ShadowVersion>) {
        let arrives = shadow.is_some();
        if let Some(shadow) = shadow.as_mut().filter(|s| !s.policy.steps.is_empty()) {
            // Its share is the state's (the step it is at), 0 before any.
            let seen = self.seen.lock().expect("rollout lock");
            shadow.canary = seen
                .as_ref()
                .and_then(|s| s.candidate.as_ref())
                .filter(|c| c.version.digest == shadow.version.digest())
                .map_or(0, |c| c.canary);
        }
        let shown = shadow.as_ref().map(|s| (self.labels_of(s), s.canary));
        let share = shadow.as_ref().map_or(0, |s| s.canary);
        let before = std::mem::replace(&mut *self.shadow.lock().expect("rollout lock"), shadow);
        // A canary that ends (aborted, rolled back) or shrinks gives its
        // objects back: the serving version reconciles them again.
        let gives_back = before.as_ref().is_some_and(|b| b.canary > share);
        if let Some(metrics) = &self.metrics {
            if let Some(before) = before {
                metrics.candidate_canary.remove(&self.labels_of(&before));
            }
            if let Some((labels, canary)) = shown {
                metrics
                    .candidate_canary
                    .get_or_create(&labels)
                    .set(i64::from(canary));
            }
        }
        // What waited was for the shadow that was.
        self.queue.clear();
        self.objects.lock().expect("rollout lock").clear();
        *self.tally.lock().expect("rollout lock") = Tally::default();
        *self.health.lock().expect("rollout lock") = super::health::Health::default();
        if arrives || gives_back {
            self.arrivals.send_modify(|n| *n += 1);
        }
    }

    /// Keeps the comparison for `object`; whether it is the first time the
    /// versions differ on it.
    pub(crate) fn keep(&self, object: &str, compared: Compared) -> bool {
        let mut objects = self.objects.lock().expect("rollout lock");
        let differed = objects.get(object).is_some_and(|(_, d)| *d);
        let differs = !compared.agrees();
        objects.insert(object.to_string(), (compared, differed || differs));
        differs && !differed
    }

    /// The latest comparison per object.
    pub fn compared(&self) -> Vec<(String, Compared)> {
        self.objects
            .lock()
            .expect("rollout lock")
            .iter()
            .map(|(k, (c, _))| (k.clone(), c.clone()))
            .collect()
    }

    /// Asks `command` of this rollout, by the operator; why not, when it
    /// cannot be.
    pub fn command(&self, command: Command) -> Result<(), String> {
        self.decide(command, "operator", "asked by the operator".to_string())
    }

    /// Carries out `command`, `by` whom and why: written to the state in
    /// the cluster when the rollout is kept there (every replica follows
    /// it), else handed to this host's loader.
    pub(crate) fn decide(
        &self,
        command: Command,
        by: &'static str,
        reason: String,
    ) -> Result<(), String> {
        if self.shadow_version().is_none() {
            return Err(format!(
                "module {:?} has no shadow (mark a version `rekon.dev/rollout: shadow`, `rekon pack --rollout shadow`, or name one in `shadow:` of the operator configuration)",
                self.module
            ));
        }
        if self.write_decision(command, by, reason) {
            return Ok(());
        }
        let commands = self.commands.lock().expect("rollouts lock");
        let sent = commands
            .as_ref()
            .is_some_and(|c| c.send((self.module.clone(), command)).is_ok());
        if sent {
            Ok(())
        } else {
            Err("the host is not taking commands (starting or stopping)".into())
        }
    }
}

impl Rollout {
    /// The labels of `shadow`'s series.
    pub(super) fn labels_of(&self, shadow: &ShadowVersion) -> crate::telemetry::InfoLabels {
        crate::telemetry::InfoLabels {
            module: self.module.clone(),
            version: shadow.version.manifest().version.clone(),
            digest: shadow.version.digest().to_string(),
        }
    }

    /// Writes `command`, `by` whom and why, to the state in the cluster
    /// (in the background, saying how it went); whether the rollout is
    /// kept there.
    pub(crate) fn write_decision(
        &self,
        command: Command,
        by: &'static str,
        reason: String,
    ) -> bool {
        let Some(written) = self.decide_durably(command, by, reason) else {
            return false;
        };
        let module = self.module.clone();
        tokio::spawn(async move {
            match written.await {
                Ok(Ok(())) => {
                    tracing::info!(module = %module, ?command, by, "rollout decision written")
                }
                Ok(Err(error)) => {
                    tracing::warn!(module = %module, ?command, by, error = %error, "the rollout decision was not written")
                }
                Err(error) => {
                    tracing::warn!(module = %module, error = %error, "the rollout decision's write failed")
                }
            }
        });
        true
    }
}

impl Shadowing for Rollout {
    fn shadow(&self) -> Option<Shadow> {
        self.shadow_version().map(|s| Shadow {
            module: s.module,
            canary: s.canary,
        })
    }

    fn canary_served(&self, object: &str, outcome: &crate::runtime::Outcome) {
        let Some(shadow) = self.shadow_version() else {
            return;
        };
        let tripped =
            self.health
                .lock()
                .expect("rollout lock")
                .count(object, outcome, &shadow.policy);
        let Some(why) = tripped else {
            return;
        };
        // Once: the tally says whether the policy has decided.
        {
            let mut tally = self.tally.lock().expect("rollout lock");
            if tally.decided {
                return;
            }
            tally.decided = true;
        }
        tracing::warn!(module = %self.module, reason = %why, "the canary is unhealthy: the rollout policy aborts it");
        if let Err(error) = self.decide(Command::Abort, "policy", why) {
            tracing::warn!(module = %self.module, error = %error, "the rollout policy's decision was not carried out");
        }
    }

    fn arrivals(&self) -> watch::Receiver<u64> {
        self.arrivals.subscribe()
    }

    fn queue(&self) -> &Arc<ShadowQueue> {
        &self.queue
    }

    fn compared(&self, object: &str, compared: Compared) -> bool {
        if let Some(shadow) = self.shadow_version()
            && let Some(command) = self.judge(&compared, &shadow.policy)
        {
            let module = &self.module;
            tracing::info!(module = %module, ?command, "the rollout policy decides");
            let reason = self.reason_of(command, &compared, &shadow.policy);
            if let Err(why) = self.decide(command, "policy", reason) {
                tracing::warn!(module = %module, ?command, error = %why, "the rollout policy's decision was not carried out");
            }
        }
        self.keep(object, compared)
    }
}

#[cfg(test)]
mod tests {
    use super::super::policy::tests::{agree_and_differ, new_rollout};

    #[test]
    fn an_object_is_announced_once_when_the_versions_first_differ() {
        let rollout = new_rollout();
        let (agree, differ) = agree_and_differ();
        assert!(!rollout.keep("shop/a", agree.clone()));
        assert!(rollout.keep("shop/a", differ.clone()));
        assert!(!rollout.keep("shop/a", differ));
        assert!(!rollout.keep("shop/a", agree));
        rollout.set_serving(Some("1.0.0 (abc)".into()));
        let status = rollout.status("app");
        assert!(
            status.starts_with("module app: serving 1.0.0 (abc), no shadow"),
            "{status}"
        );
        assert!(
            status.contains("1 objects shadowed: 1 agree, 0 differ"),
            "{status}"
        );
    }
}
