//! A canary's steps, taken over time: each step serves its share of the
//! objects live for its pause, then the next; after the last (and the
//! minimum soak), the candidate is promoted. The step, its share and when
//! it began are in the state in the cluster, so a restart or a failover
//! goes on where it was; the module's leader takes the steps, every
//! replica serves the share the state says.

use std::time::Duration;

use chrono::{DateTime, Utc};

use super::Rollouts;
use super::resource::{Evidence, RolloutStatus};
use super::state::Rollout;

/// How often the leader looks whether a step is due.
pub(super) const STEP_EVERY: Duration = Duration::from_secs(1);

impl Rollouts {
    /// Takes each due step of the rollouts this replica leads.
    pub(super) fn take_steps(&self) {
        for rollout in self.all() {
            rollout.take_step();
        }
    }
}

impl Rollout {
    /// The state in the cluster changed: kept, and the share the state
    /// says the candidate serves is served here from now on.
    pub(crate) fn seen(&self, status: Option<RolloutStatus>) {
        let mut shadow = self.shadow.lock().expect("rollout lock");
        if let (Some(shadow), Some(candidate)) = (
            shadow.as_mut(),
            status.as_ref().and_then(|s| s.candidate.as_ref()),
        ) && shadow.version.digest() == candidate.version.digest
            && !shadow.policy.steps.is_empty()
        {
            shadow.canary = candidate.canary;
            if let Some(metrics) = &self.metrics {
                let labels = self.labels_of(shadow);
                metrics
                    .candidate_canary
                    .get_or_create(&labels)
                    .set(i64::from(candidate.canary));
            }
        }
        drop(shadow);
        let before = std::mem::replace(
            &mut *self.seen.lock().expect("rollout lock"),
            status.clone(),
        );
        // A new decision, announced once, by the module's leader (a state
        // seen for the first time is not news: it was announced before).
        if let (Some(before), Some(now)) = (before, status)
            && let Some(decision) = now.last_decision
            && before.last_decision.as_ref() != Some(&decision)
        {
            self.announce(&decision);
        }
    }

    /// An Event on the module's `Rollout` telling `decision` and why.
    fn announce(&self, decision: &super::resource::DecisionRecord) {
        let Some(durable) = self.leading() else {
            return;
        };
        let (kind, reason) = match decision.action {
            super::resource::Action::Promote => (crate::contract::EventType::Normal, "Promoted"),
            super::resource::Action::Abort => (crate::contract::EventType::Warning, "Aborted"),
        };
        let figures: Vec<String> = decision
            .evidence
            .figures
            .iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect();
        let note = format!(
            "{:?} of {} ({}) by {}: {}{}",
            decision.action,
            decision.version.version,
            super::resource::short(&decision.version.digest),
            decision.by,
            decision.reason,
            if figures.is_empty() {
                String::new()
            } else {
                format!(" [{}]", figures.join(", "))
            }
        );
        let regarding = crate::contract::ObjectRef {
            kind: super::follow::rollout_kind(),
            namespace: Some(durable.api.namespace().to_string()),
            name: self.module.clone(),
        };
        tokio::spawn(async move {
            let note: String = note.chars().take(1000).collect();
            let _ = durable
                .events
                .record_event(&regarding, kind, reason, &note, "rekon-rollout")
                .await;
        });
    }

    /// Takes the candidate's next step, or promotes it after its last,
    /// when due and this replica leads the module.
    fn take_step(&self) {
        let Some(shadow) = self.shadow_version() else {
            return;
        };
        let Ok(steps) = shadow.policy.steps() else {
            return;
        };
        if steps.is_empty() {
            return;
        }
        let Some(durable) = self.leading() else {
            return;
        };
        let digest = shadow.version.digest().to_string();
        let soak = shadow.policy.soak();
        let at = Utc::now();
        // Only a due step is written: the state as last seen says.
        let mut seen = self
            .seen
            .lock()
            .expect("rollout lock")
            .clone()
            .unwrap_or_default();
        if !matches!(
            step(&mut seen, &digest, &steps, soak, at, Evidence::default()),
            Ok(true)
        ) {
            return;
        }
        let evidence = self.evidence();
        let module = self.module.clone();
        tokio::spawn(async move {
            let written = durable
                .api
                .update(&module, |status| {
                    step(status, &digest, &steps, soak, at, evidence.clone())
                })
                .await;
            match written {
                Ok(Some(status)) => tracing::info!(
                    module = %module,
                    phase = status.phase.as_deref().unwrap_or_default(),
                    canary = status.candidate.as_ref().map(|c| c.canary),
                    "the canary takes its next step"
                ),
                Ok(None) => {}
                Err(error) => {
                    tracing::warn!(module = %module, error = %error, "cannot take the canary's step")
                }
            }
        });
    }
}

/// The state with the candidate `digest`'s step taken when due at `at`:
/// its first step's share set, the next step begun once the pause is
/// over, or the candidate promoted after the last step and `soak`.
/// Whether it changed.
pub(super) fn step(
    status: &mut RolloutStatus,
    digest: &str,
    steps: &[(u8, Option<Duration>)],
    soak: Duration,
    at: DateTime<Utc>,
    evidence: Evidence,
) -> Result<bool, String> {
    let now = at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    if status.paused {
        return Ok(false);
    }
    let Some(candidate) = status.candidate.as_mut() else {
        return Ok(false);
    };
    if candidate.version.digest != digest {
        return Ok(false);
    }
    let index = candidate.step as usize;
    let Some((share, pause)) = steps.get(index).copied() else {
        return Ok(false);
    };
    let mut changed = false;
    if candidate.canary != share {
        candidate.canary = share;
        changed = true;
    }
    let elapsed = |since: &Option<String>| {
        since
            .as_deref()
            .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
            .map_or(Duration::ZERO, |s| {
                (at - s.with_timezone(&Utc)).to_std().unwrap_or_default()
            })
    };
    // A step without a pause waits for an operator.
    let Some(pause) = pause else {
        return Ok(changed);
    };
    if elapsed(&candidate.step_since) < pause {
        return Ok(changed);
    }
    if let Some((next, _)) = steps.get(index + 1) {
        candidate.step += 1;
        candidate.canary = *next;
        candidate.step_since = Some(now);
        status.phase = Some(if *next > 0 { "Canary" } else { "Shadowing" }.to_string());
        return Ok(true);
    }
    if elapsed(&candidate.since) < soak {
        return Ok(changed);
    }
    let reason = format!("its {} steps passed and it soaked {soak:?}", steps.len());
    status.promote(Some(digest), "policy", &reason, evidence, &now)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rollout::resource::{Action, Candidate, VersionRef};

    #[test]
    fn steps_advance_by_time_and_promote_after_the_soak() {
        let t0: DateTime<Utc> = "2026-11-29T07:00:00Z".parse().unwrap();
        let secs = |n: i64| t0 + chrono::Duration::seconds(n);
        let mut status = RolloutStatus::default();
        status.set_serving(VersionRef {
            digest: "a".into(),
            ..VersionRef::default()
        });
        status.set_candidate(
            Some(Candidate {
                version: VersionRef {
                    digest: "b".into(),
                    ..VersionRef::default()
                },
                ..Candidate::default()
            }),
            "2026-11-29T07:00:00Z",
        );
        let steps = [
            (10, Some(Duration::from_secs(60))),
            (50, Some(Duration::from_secs(60))),
        ];
        let soak = Duration::from_secs(300);
        let take = |status: &mut RolloutStatus, at| {
            step(status, "b", &steps, soak, at, Evidence::default()).unwrap()
        };
        assert!(take(&mut status, secs(1)), "the first step's share is set");
        assert_eq!(status.candidate.as_ref().unwrap().canary, 10);
        assert!(!take(&mut status, secs(30)), "the pause is not over");
        assert!(take(&mut status, secs(61)));
        let candidate = status.candidate.clone().unwrap();
        assert_eq!((candidate.step, candidate.canary), (1, 50));
        assert!(!take(&mut status, secs(100)));
        assert!(
            !take(&mut status, secs(200)),
            "the last step is over, not the soak"
        );
        assert!(take(&mut status, secs(301)), "soaked: promoted");
        assert_eq!(status.serving.as_ref().unwrap().digest, "b");
        let decision = status.last_decision.clone().unwrap();
        assert_eq!(
            (decision.action, decision.by.as_str()),
            (Action::Promote, "policy")
        );
        // Another candidate's step is not this one's.
        assert!(
            !step(
                &mut status,
                "c",
                &steps,
                soak,
                secs(400),
                Evidence::default()
            )
            .unwrap()
        );
        // Paused by the operator: no step is taken however late it is.
        let mut held = RolloutStatus {
            paused: true,
            ..RolloutStatus::default()
        };
        held.set_candidate(
            Some(Candidate {
                version: VersionRef {
                    digest: "c".into(),
                    ..VersionRef::default()
                },
                ..Candidate::default()
            }),
            "2026-11-29T07:00:00Z",
        );
        let late = step(
            &mut held,
            "c",
            &steps,
            soak,
            secs(4000),
            Evidence::default(),
        );
        assert!(!late.unwrap());
        assert_eq!(held.candidate.unwrap().canary, 0);
    }
}
