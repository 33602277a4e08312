//! A module's rollout kept in the cluster: one `Rollout`
//! (`rekon.dev/v1alpha1`) per module, named after it, in the host's
//! namespace. Its status says which version serves, which one is tried
//! beside it (shadow or canary), what was retired or aborted, and the last
//! decision with its evidence. Every replica follows it, so a restart, a
//! failover or a rolling restart changes nothing; the module's leader
//! writes it (what it serves, what its policy decides), and so does the
//! operator through `rekon rollout promote|abort`.
//!
//! Start with [`RolloutStatus`] (the state and its two decisions,
//! [`RolloutStatus::promote`] and [`RolloutStatus::abort`]) and
//! [`RolloutApi`] (reading and writing it).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The API group of `Rollout`.
pub const GROUP: &str = "rekon.dev";
/// Its version.
pub const VERSION: &str = "v1alpha1";
/// Its kind.
pub const KIND: &str = "Rollout";
/// Its resource.
pub const PLURAL: &str = "rollouts";
/// The CustomResourceDefinition of `Rollout` (also `deploy/crds/rollouts.yaml`).
pub const CRD: &str = include_str!("rollouts.crd.yaml");

/// One version of a module, as the state names it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionRef {
    /// The SHA-256 of the component, in hex: what identifies the version.
    pub digest: String,
    /// The manifest's version, for people.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
    /// Where it comes from (`configmap:<ns>/<name>`, or a file).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
}

/// The version tried beside the serving one.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Candidate {
    /// Which version.
    #[serde(flatten)]
    pub version: VersionRef,
    /// The share of objects (a percentage) it serves live; 0 shadows all.
    #[serde(default)]
    pub canary: u8,
    /// The index of its step, when its policy has steps.
    #[serde(default)]
    pub step: u32,
    /// When it arrived (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// When its step began (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_since: Option<String>,
}

/// A promotion or an abort.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Action {
    /// The candidate became the serving version.
    Promote,
    /// The candidate was dropped.
    Abort,
}

/// What tipped a decision: figures, and the differences seen.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// Named figures (`errorRate`, `writesPerObjectPerMinute`, ...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub figures: BTreeMap<String, f64>,
    /// Objects the versions differed on, with the unified diff.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub differences: Vec<Difference>,
}

/// One object the versions differed on.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Difference {
    /// `namespace/name`.
    pub object: String,
    /// The unified diff of the two versions' writes (or the error).
    pub diff: String,
}

/// The last decision taken on a rollout.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DecisionRecord {
    /// What was decided.
    pub action: Action,
    /// Who: `operator` or `policy`.
    pub by: String,
    /// Why, for people.
    #[serde(default)]
    pub reason: String,
    /// When (RFC 3339).
    #[serde(default)]
    pub at: String,
    /// The candidate it was about.
    pub version: VersionRef,
    /// What tipped it.
    #[serde(default)]
    pub evidence: Evidence,
}

/// Versions kept in `retired` and `aborted`: the latest.
pub const KEPT: usize = 10;

/// A module's rollout state: the `status` of its `Rollout`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RolloutStatus {
    /// The version that serves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serving: Option<VersionRef>,
    /// The version tried beside it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub candidate: Option<Candidate>,
    /// `Serving`, `Shadowing` or `Canary`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Versions that served before: they never serve again by accident.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retired: Vec<VersionRef>,
    /// Candidates dropped: not tried again until their bytes change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aborted: Vec<VersionRef>,
    /// The last promotion or abort.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_decision: Option<DecisionRecord>,
    /// The operator holds the candidate (`spec.paused`): no step is taken
    /// and its policy promotes nothing. Read from the spec, never written.
    #[serde(skip)]
    pub paused: bool,
}

impl RolloutStatus {
    /// Reads the status of a `Rollout` object (none: the default).
    pub fn of(object: &serde_json::Value) -> RolloutStatus {
        let mut status: RolloutStatus =
            serde_json::from_value(object["status"].clone()).unwrap_or_default();
        status.paused = object["spec"]["paused"] == true;
        status
    }

    /// Whether `digest` was aborted.
    pub fn is_aborted(&self, digest: &str) -> bool {
        self.aborted.iter().any(|v| v.digest == digest)
    }

    /// Whether `digest` served before and was retired.
    pub fn is_retired(&self, digest: &str) -> bool {
        self.retired.iter().any(|v| v.digest == digest)
    }

    /// Says `version` serves; whether that changed anything.
    pub fn set_serving(&mut self, version: VersionRef) -> bool {
        if self.serving.as_ref() == Some(&version) {
            return false;
        }
        self.serving = Some(version);
        self.phase = Some(self.phase_now());
        true
    }

    /// Says `candidate` is tried (none: no candidate any more); whether
    /// that changed anything. A candidate already there keeps when it came
    /// and its step.
    pub fn set_candidate(&mut self, candidate: Option<Candidate>, now: &str) -> bool {
        let next = candidate.map(|mut c| {
            match &self.candidate {
                Some(old) if old.version.digest == c.version.digest => {
                    c.since.clone_from(&old.since);
                    c.step = old.step;
                    c.step_since.clone_from(&old.step_since);
                }
                _ => {
                    c.since = Some(now.to_string());
                    c.step_since = Some(now.to_string());
                }
            }
            c
        });
        if next == self.candidate {
            return false;
        }
        self.candidate = next;
        self.phase = Some(self.phase_now());
        true
    }

    /// The candidate serves from now on: the serving version is retired.
    /// `expected` is the candidate's digest the decision was taken on: a
    /// decision about another version (a newer candidate came meanwhile)
    /// is refused.
    pub fn promote(
        &mut self,
        expected: Option<&str>,
        by: &str,
        reason: &str,
        evidence: Evidence,
        now: &str,
    ) -> Result<(), String> {
        let candidate = self.expected_candidate(expected)?;
        if let Some(old) = self.serving.take() {
            keep(&mut self.retired, old);
        }
        self.retired
            .retain(|v| v.digest != candidate.version.digest);
        self.serving = Some(candidate.version.clone());
        self.candidate = None;
        self.phase = Some(self.phase_now());
        self.last_decision = Some(DecisionRecord {
            action: Action::Promote,
            by: by.to_string(),
            reason: reason.to_string(),
            at: now.to_string(),
            version: candidate.version,
            evidence,
        });
        Ok(())
    }

    /// The candidate is dropped and not tried again until its bytes
    /// change; `expected` as for [`RolloutStatus::promote`].
    pub fn abort(
        &mut self,
        expected: Option<&str>,
        by: &str,
        reason: &str,
        evidence: Evidence,
        now: &str,
    ) -> Result<(), String> {
        let candidate = self.expected_candidate(expected)?;
        keep(&mut self.aborted, candidate.version.clone());
        self.candidate = None;
        self.phase = Some(self.phase_now());
        self.last_decision = Some(DecisionRecord {
            action: Action::Abort,
            by: by.to_string(),
            reason: reason.to_string(),
            at: now.to_string(),
            version: candidate.version,
            evidence,
        });
        Ok(())
    }

    fn expected_candidate(&self, expected: Option<&str>) -> Result<Candidate, String> {
        let candidate = self
            .candidate
            .clone()
            .ok_or_else(|| "it has no shadow or canary to decide on".to_string())?;
        match expected {
            Some(digest) if digest != candidate.version.digest => Err(format!(
                "its candidate is now {} ({}), not the version the decision was about",
                candidate.version.version,
                short(&candidate.version.digest)
            )),
            _ => Ok(candidate),
        }
    }

    fn phase_now(&self) -> String {
        match &self.candidate {
            None => "Serving",
            Some(c) if c.canary > 0 => "Canary",
            Some(_) => "Shadowing",
        }
        .to_string()
    }
}

/// Adds `version` to a bounded list (the latest [`KEPT`]), once.
fn keep(list: &mut Vec<VersionRef>, version: VersionRef) {
    list.retain(|v| v.digest != version.digest);
    list.push(version);
    if list.len() > KEPT {
        list.remove(0);
    }
}

/// The first 12 hex digits of a digest.
pub fn short(digest: &str) -> &str {
    &digest[..digest.len().min(12)]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_crd_the_host_applies_is_the_one_deploy_installs() {
        let deployed = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../deploy/crds/rollouts.yaml"
        ))
        .expect("deploy/crds/rollouts.yaml");
        assert_eq!(
            CRD, deployed,
            "copy deploy/crds/rollouts.yaml to host/src/rollout/"
        );
    }

    #[test]
    fn a_status_reads_back_as_written_and_decisions_keep_their_evidence() {
        let mut status = RolloutStatus::default();
        let v1 = VersionRef {
            digest: "a".repeat(64),
            version: "1.0.0".into(),
            source: "configmap:rekon/app-v1".into(),
        };
        assert!(status.set_serving(v1.clone()));
        let candidate = Candidate {
            version: VersionRef {
                digest: "b".repeat(64),
                version: "1.1.0".into(),
                source: "configmap:rekon/app-v2".into(),
            },
            canary: 25,
            ..Candidate::default()
        };
        assert!(status.set_candidate(Some(candidate), "2026-11-29T07:00:00Z"));
        let evidence = Evidence {
            figures: [("writesPerObjectPerMinute".to_string(), 142.0)].into(),
            differences: vec![Difference {
                object: "shop/web".into(),
                diff: "- a\n+ b".into(),
            }],
        };
        status
            .abort(
                None,
                "policy",
                "a write loop",
                evidence.clone(),
                "2026-11-29T07:01:00Z",
            )
            .unwrap();
        let json = serde_json::to_value(&status).unwrap();
        assert_eq!(json["aborted"][0]["digest"], "b".repeat(64));
        assert_eq!(
            json["lastDecision"]["evidence"]["figures"]["writesPerObjectPerMinute"],
            142.0
        );
        assert_eq!(json["phase"], "Serving");
        let back = RolloutStatus::of(&serde_json::json!({ "status": json }));
        assert_eq!(back, status);
        assert!(back.is_aborted(&"b".repeat(64)));
        assert_eq!(back.last_decision.unwrap().evidence, evidence);
        assert!(
            status
                .promote(None, "operator", "", Evidence::default(), "t")
                .unwrap_err()
                .contains("no shadow or canary")
        );
    }
}
