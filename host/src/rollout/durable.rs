//! Each rollout written to its `Rollout` in the cluster ([`super::api`]):
//! what the module's leader runs (the serving version, its shadow or
//! canary), and each decision — the operator's, through the admin endpoint
//! or `rekon rollout`, or its policy's, with the evidence. The loader
//! follows the state (`crate::loader`), on every replica, so a decision is
//! carried out wherever it is taken and survives restarts.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use super::api::{RolloutApi, UpdateError};
use super::resource::{Candidate, Difference, Evidence, RolloutStatus, VersionRef};
use super::state::Rollout;
use super::{Command, Rollouts};
use crate::ha::Leaders;

/// Where rollouts are kept: the `Rollout` objects, and who may write what
/// a module runs (its leader).
#[derive(Clone)]
pub(crate) struct Durable {
    pub api: RolloutApi,
    pub leaders: Leaders,
    /// Where each decision is announced (an Event on the `Rollout`).
    pub events: Arc<dyn crate::cluster::Cluster>,
}

/// Set once a host keeps its rollouts in the cluster.
pub(crate) type Keeper = Arc<OnceLock<Durable>>;

/// How often the leader of each module says what it runs (a replica that
/// comes to lead says it within a step, [`super::steps::STEP_EVERY`]).
const RECORD_EVERY: Duration = Duration::from_secs(10);

/// Differences kept as a decision's evidence.
const EVIDENCE_DIFFERENCES: usize = 5;

/// Now, as RFC 3339.
pub(crate) fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

impl Rollouts {
    /// Keeps every rollout in `api`'s `Rollout` objects from now on; the
    /// leader of each module says what it runs when it comes to lead, and
    /// every [`RECORD_EVERY`] after.
    pub(crate) fn keep_in(
        self: &Arc<Self>,
        api: RolloutApi,
        leaders: Leaders,
        events: Arc<dyn crate::cluster::Cluster>,
    ) {
        if self
            .keeper
            .set(Durable {
                api,
                leaders,
                events,
            })
            .is_err()
        {
            return;
        }
        let steps = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(super::steps::STEP_EVERY);
            loop {
                tick.tick().await;
                let Some(rollouts) = steps.upgrade() else {
                    return;
                };
                rollouts.take_steps();
            }
        });
        let rollouts = Arc::downgrade(self);
        tokio::spawn(async move {
            // When each module's leadership was last seen here, and its
            // rollout last recorded: a replica that comes to lead records
            // at once (its shadow may have loaded before it led).
            let mut recorded: std::collections::HashMap<String, std::time::Instant> =
                std::collections::HashMap::new();
            let mut tick = tokio::time::interval(super::steps::STEP_EVERY);
            loop {
                tick.tick().await;
                let Some(rollouts) = rollouts.upgrade() else {
                    return;
                };
                for rollout in rollouts.all() {
                    if rollout.leading().is_none() {
                        recorded.remove(&rollout.module);
                        continue;
                    }
                    let due = recorded
                        .get(&rollout.module)
                        .is_none_or(|at| at.elapsed() >= RECORD_EVERY);
                    if due {
                        recorded.insert(rollout.module.clone(), std::time::Instant::now());
                        rollout.record();
                    }
                }
            }
        });
    }
}

impl Rollout {
    /// Where the rollout is kept, when it is and this replica leads the
    /// module (only then does it write what the module runs or decides).
    pub(super) fn leading(&self) -> Option<Durable> {
        let durable = self.keeper.get().cloned()?;
        durable
            .leaders
            .speaks_for(Some(&self.module))
            .then_some(durable)
    }

    /// The version serving, as the state names it.
    pub(crate) fn served(&self, version: VersionRef) {
        *self.serving_ref.lock().expect("rollout lock") = Some(version);
        self.record();
    }

    /// Writes what this replica runs of the module, when it leads it: its
    /// serving version (unless the state names another one, which the
    /// loader is bringing in), and its shadow as the candidate (unless
    /// aborted).
    pub(crate) fn record(&self) {
        let Some(durable) = self.leading() else {
            return;
        };
        let serving = self.serving_ref.lock().expect("rollout lock").clone();
        let candidate = self.ours();
        let stepped = self
            .shadow_version()
            .is_some_and(|s| !s.policy.steps.is_empty());
        let module = self.module.clone();
        tokio::spawn(async move {
            let now = now();
            let written = durable
                .api
                .update(&module, |status| {
                    Ok(record(
                        status,
                        serving.as_ref(),
                        candidate.as_ref(),
                        stepped,
                        &now,
                    ))
                })
                .await;
            if let Err(error) = written {
                tracing::warn!(module = %module, error = %error, "cannot write the module's rollout state");
            }
        });
    }

    /// The shadow this replica runs, as the state's candidate.
    fn ours(&self) -> Option<Candidate> {
        self.shadow_version().map(|shadow| Candidate {
            version: VersionRef {
                digest: shadow.version.digest().to_string(),
                version: shadow.version.manifest().version.clone(),
                source: shadow.origin.clone(),
            },
            canary: shadow.canary,
            ..Candidate::default()
        })
    }

    /// The shadow from `digest` ended (its source went): the state has no
    /// candidate any more, if it was that one.
    pub(crate) fn record_ended(&self, digest: String) {
        let Some(durable) = self.leading() else {
            return;
        };
        let module = self.module.clone();
        tokio::spawn(async move {
            let now = now();
            let _ = durable
                .api
                .update(&module, |status| {
                    let ends = status
                        .candidate
                        .as_ref()
                        .is_some_and(|c| c.version.digest == digest);
                    Ok(ends && status.set_candidate(None, &now))
                })
                .await;
        });
    }

    /// Carries out `command` on the state in the cluster, `by` whom, with
    /// the evidence this replica holds; `None` when the rollout is not
    /// kept there.
    pub(crate) fn decide_durably(
        &self,
        command: Command,
        by: &'static str,
        reason: String,
    ) -> Option<tokio::task::JoinHandle<Result<(), UpdateError>>> {
        let durable = self.keeper.get().cloned()?;
        if by != "operator" && !durable.leaders.speaks_for(Some(&self.module)) {
            // Fenced: only the module's leader writes what its policy or
            // its source decides.
            let module = self.module.clone();
            return Some(tokio::spawn(async move {
                Err(UpdateError::Refused(format!(
                    "this replica does not lead module {module}: its policy decides on the leader"
                )))
            }));
        }
        let ours = self.ours();
        let expected = ours.as_ref().map(|c| c.version.digest.clone());
        let evidence = self.evidence();
        let module = self.module.clone();
        Some(tokio::spawn(async move {
            let now = now();
            durable
                .api
                .update(&module, |status| {
                    let evidence = evidence.clone();
                    // The version decided on is the candidate, even if
                    // the state has not been told of it yet.
                    record(status, None, ours.as_ref(), false, &now);
                    if status.paused && by != "operator" && command == Command::Promote {
                        return Err(
                            "the Rollout is paused (spec.paused): only an operator promotes".into(),
                        );
                    }
                    match command {
                        Command::Promote => {
                            status.promote(expected.as_deref(), by, &reason, evidence, &now)
                        }
                        Command::Abort => {
                            status.abort(expected.as_deref(), by, &reason, evidence, &now)
                        }
                    }
                    .map(|()| true)
                })
                .await
                .map(|_| ())
        }))
    }

    /// What this replica saw of the candidate: its tally, and the objects
    /// the versions differ on.
    pub(super) fn evidence(&self) -> Evidence {
        let mut evidence = Evidence::default();
        {
            let tally = self.tally.lock().expect("rollout lock");
            let figures = &mut evidence.figures;
            figures.insert("shadowed".into(), tally.shadowed as f64);
            figures.insert("errors".into(), tally.errors as f64);
            figures.insert("agreeingInARow".into(), tally.agreeing_in_a_row as f64);
        }
        let health = self.health.lock().expect("rollout lock").figures();
        evidence.figures.extend(health);
        evidence.differences = self
            .compared()
            .into_iter()
            .filter(|(_, c)| !c.agrees())
            .take(EVIDENCE_DIFFERENCES)
            .map(|(object, c)| Difference {
                object,
                diff: match &c.error {
                    Some(error) => format!("error: {error}"),
                    None => c.diff.join("\n"),
                },
            })
            .collect();
        evidence
    }
}

/// The state with what the leader runs: the serving version, unless the
/// state names another one; its shadow as the candidate, unless aborted
/// or serving. Whether anything changed.
fn record(
    status: &mut RolloutStatus,
    serving: Option<&VersionRef>,
    candidate: Option<&Candidate>,
    stepped: bool,
    now: &str,
) -> bool {
    let mut changed = false;
    if let Some(serving) = serving
        && status
            .serving
            .as_ref()
            .is_none_or(|s| s.source == serving.source || s.digest == serving.digest)
    {
        changed |= status.set_serving(serving.clone());
    }
    if let Some(candidate) = candidate {
        let digest = &candidate.version.digest;
        // It serves already when the state names it, from its source (a
        // shadow of the serving build, from another file, is a candidate).
        let serves = status
            .serving
            .as_ref()
            .is_some_and(|s| s.digest == *digest && s.source == candidate.version.source);
        if !status.is_aborted(digest) && !serves {
            let mut candidate = candidate.clone();
            // With steps, the share is the step's, in the state.
            if let Some(known) = status
                .candidate
                .as_ref()
                .filter(|c| stepped && c.version.digest == *digest)
            {
                candidate.canary = known.canary;
            }
            changed |= status.set_candidate(Some(candidate), now);
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn version(digest: &str, source: &str) -> VersionRef {
        VersionRef {
            digest: digest.into(),
            version: "1.0.0".into(),
            source: source.into(),
        }
    }

    #[test]
    fn the_leader_records_what_it_runs_but_never_undoes_a_decision() {
        let mut status = RolloutStatus::default();
        let v1 = version("aaa", "configmap:rekon/v1");
        let v2 = Candidate {
            version: version("bbb", "configmap:rekon/v2"),
            canary: 10,
            ..Candidate::default()
        };
        assert!(record(&mut status, Some(&v1), Some(&v2), false, "t0"));
        assert_eq!(status.phase.as_deref(), Some("Canary"));
        assert!(
            !record(&mut status, Some(&v1), Some(&v2), false, "t1"),
            "nothing new"
        );
        assert_eq!(
            status.candidate.as_ref().unwrap().since.as_deref(),
            Some("t0")
        );

        // Promoted (by anyone): the leader, still running v1 until the
        // loader swaps, does not write v1 back.
        status
            .promote(Some("bbb"), "operator", "", Evidence::default(), "t2")
            .unwrap();
        assert!(!record(&mut status, Some(&v1), Some(&v2), false, "t3"));
        assert_eq!(status.serving.as_ref().unwrap().digest, "bbb");
        assert!(status.is_retired("aaa"));
        assert!(
            status.candidate.is_none(),
            "a serving version is no candidate"
        );

        // Aborted: the candidate is not written back either.
        let v3 = Candidate {
            version: version("ccc", "configmap:rekon/v3"),
            ..Candidate::default()
        };
        let v2_serving = v2.version.clone();
        assert!(record(
            &mut status,
            Some(&v2_serving),
            Some(&v3),
            false,
            "t4"
        ));
        status
            .abort(Some("ccc"), "policy", "writes", Evidence::default(), "t5")
            .unwrap();
        assert!(!record(
            &mut status,
            Some(&v2_serving),
            Some(&v3),
            false,
            "t6"
        ));
        assert!(status.candidate.is_none() && status.is_aborted("ccc"));

        // A serving version is never recorded as the candidate.
        assert!(!record(
            &mut status,
            Some(&v2_serving),
            Some(&v2),
            false,
            "t7"
        ));
        // A decision about a candidate that is no longer the candidate.
        let v4 = Candidate {
            version: version("ddd", "configmap:rekon/v4"),
            ..Candidate::default()
        };
        record(&mut status, Some(&v2_serving), Some(&v4), false, "t8");
        let error = status
            .promote(Some("eee"), "operator", "", Evidence::default(), "t9")
            .unwrap_err();
        assert!(
            error.contains("not the version the decision was about"),
            "{error}"
        );
    }
}
