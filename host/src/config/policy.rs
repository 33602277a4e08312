//! A rollout's policy (`modules.<name>.policy`, or the shadow's ConfigMap
//! annotations): when a shadow is promoted or dropped on its own, the
//! canary's steps and soak, and the health a canary must keep.

use std::time::Duration;

use serde::Deserialize;

use super::duration::go_duration;

/// When a shadow is promoted or dropped on its own (`modules.<name>.policy`).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PolicyConfig {
    /// Promote the shadow once this many of its reconciles in a row agree
    /// with the serving version's.
    pub promote_after: Option<u64>,
    /// Drop the shadow at its first difference.
    #[serde(default)]
    pub abort_on_difference: bool,
    /// Drop the shadow when more than this share (0 to 1) of its
    /// reconciles fail (shadowed, or served live as a canary), once it has
    /// made at least [`MIN_JUDGED`].
    pub abort_error_rate: Option<f64>,
    /// The canary's steps: each serves its share of the objects live for
    /// its pause, then the next; after the last, the candidate is
    /// promoted. A step without a pause waits for `rekon rollout promote`.
    #[serde(default)]
    pub steps: Vec<StepConfig>,
    /// No automatic promotion before the candidate has run this long
    /// (`5m`; promoteAfter and steps alike).
    pub min_soak: Option<String>,
    /// Drop a canary that writes more than this many times per object in
    /// a minute (default 60 for a canary: a create/delete loop trips it).
    pub max_writes_per_object_per_minute: Option<u32>,
    /// Drop a canary whose host call is refused for lack of permission
    /// (default true).
    pub abort_on_denial: Option<bool>,
}

/// One step of a canary.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StepConfig {
    /// The share of objects (0 to 100) the candidate serves live.
    pub canary: u8,
    /// How long the step lasts (`5m`); none: until promoted by hand.
    pub pause: Option<String>,
}

/// Shadowed reconciles before an error rate is judged.
pub const MIN_JUDGED: u64 = 20;

/// Writes per object per minute a canary may make when its policy does not say.
pub const DEFAULT_MAX_WRITES_PER_OBJECT_PER_MINUTE: u32 = 60;

impl PolicyConfig {
    /// The steps as shares and pauses (`None`: wait for an operator);
    /// why not, when a pause is not a duration or a share is over 100.
    pub fn steps(&self) -> Result<Vec<(u8, Option<Duration>)>, String> {
        self.steps
            .iter()
            .enumerate()
            .map(|(i, step)| {
                if step.canary > 100 {
                    return Err(format!("steps[{i}].canary {} is over 100", step.canary));
                }
                let pause = match &step.pause {
                    None => None,
                    Some(text) => Some(go_duration(text).ok_or_else(|| {
                        format!("steps[{i}].pause {text:?} is not a duration (30s, 5m, 1h)")
                    })?),
                };
                Ok((step.canary, pause))
            })
            .collect()
    }

    /// The minimum soak (zero when none is given or it does not parse).
    pub fn soak(&self) -> Duration {
        self.min_soak
            .as_deref()
            .and_then(go_duration)
            .unwrap_or_default()
    }

    /// The most writes per object per minute a canary may make.
    pub fn max_writes(&self) -> u32 {
        self.max_writes_per_object_per_minute
            .unwrap_or(DEFAULT_MAX_WRITES_PER_OBJECT_PER_MINUTE)
    }

    /// Whether a denied host call drops a canary.
    pub fn aborts_on_denial(&self) -> bool {
        self.abort_on_denial.unwrap_or(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_and_soak_read_as_written_and_defaults_hold() {
        let policy: PolicyConfig = serde_yaml_ng::from_str(
            "steps:\n- {canary: 10, pause: 5m}\n- {canary: 50}\nminSoak: 90s\n",
        )
        .unwrap();
        assert_eq!(
            policy.steps().unwrap(),
            vec![(10, Some(Duration::from_secs(300))), (50, None)]
        );
        assert_eq!(policy.soak(), Duration::from_secs(90));
        assert_eq!(
            policy.max_writes(),
            DEFAULT_MAX_WRITES_PER_OBJECT_PER_MINUTE
        );
        assert!(policy.aborts_on_denial());
        let bad: PolicyConfig =
            serde_yaml_ng::from_str("steps:\n- {canary: 10, pause: soon}\n").unwrap();
        assert!(bad.steps().unwrap_err().contains("steps[0].pause \"soon\""));
    }
}
