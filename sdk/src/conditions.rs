//! Status conditions in the Kubernetes convention
//! (`type`, `status`, `reason`, `message`, `lastTransitionTime`,
//! `observedGeneration`).

use serde::{Deserialize, Serialize};

/// One status condition, serialised like `metav1.Condition`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Condition {
    /// Condition type in CamelCase, e.g. `Ready`.
    #[serde(rename = "type")]
    pub type_: String,
    /// `"True"`, `"False"` or `"Unknown"`.
    pub status: String,
    /// One CamelCase word saying why.
    #[serde(default)]
    pub reason: String,
    /// Human-readable detail.
    #[serde(default)]
    pub message: String,
    /// When `status` last changed (RFC 3339, UTC).
    #[serde(default)]
    pub last_transition_time: String,
    /// The `metadata.generation` the condition was computed from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

impl Condition {
    /// A condition with `status` `"True"` or `"False"`, stamped now.
    pub fn new(type_: &str, status: bool, reason: &str, message: &str) -> Self {
        Condition {
            type_: type_.to_owned(),
            status: if status { "True" } else { "False" }.to_owned(),
            reason: reason.to_owned(),
            message: message.to_owned(),
            last_transition_time: now_rfc3339(),
            observed_generation: None,
        }
    }

    /// Sets `observedGeneration`.
    #[must_use]
    pub fn observed_generation(mut self, generation: Option<i64>) -> Self {
        self.observed_generation = generation;
        self
    }

    /// Whether the status is `"True"`.
    pub fn is_true(&self) -> bool {
        self.status == "True"
    }
}

/// Sets `condition` in `conditions`, replacing the one of the same type.
/// `lastTransitionTime` changes only when the status changes; otherwise the
/// old time is kept. Returns whether anything changed.
pub fn set_condition(conditions: &mut Vec<Condition>, mut condition: Condition) -> bool {
    match conditions.iter_mut().find(|c| c.type_ == condition.type_) {
        Some(old) => {
            if old.status == condition.status {
                condition.last_transition_time = old.last_transition_time.clone();
            }
            let changed = *old != condition;
            *old = condition;
            changed
        }
        None => {
            conditions.push(condition);
            true
        }
    }
}

/// The condition of type `type_`, if present.
pub fn find_condition<'a>(conditions: &'a [Condition], type_: &str) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// The current time as RFC 3339 in UTC with second precision
/// (`2024-05-01T12:00:00Z`), the format of Kubernetes timestamps.
pub fn now_rfc3339() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format_rfc3339(secs)
}

/// Formats seconds since the Unix epoch as RFC 3339 in UTC.
pub fn format_rfc3339(unix_secs: u64) -> String {
    let days = i64::try_from(unix_secs / 86_400).unwrap_or(0);
    let rem = unix_secs % 86_400;
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_timestamps() {
        assert_eq!(format_rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_rfc3339(1_709_210_096), "2024-02-29T12:34:56Z");
        assert_eq!(format_rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn transition_time_changes_only_with_status() {
        let mut conds = Vec::new();
        let mut first = Condition::new("Ready", false, "Progressing", "0/1");
        first.last_transition_time = "t0".into();
        assert!(set_condition(&mut conds, first));

        let mut same = Condition::new("Ready", false, "Progressing", "0/1");
        same.last_transition_time = "t1".into();
        assert!(!set_condition(&mut conds, same), "nothing changed");
        assert_eq!(conds[0].last_transition_time, "t0");

        let mut msg = Condition::new("Ready", false, "Progressing", "0/2");
        msg.last_transition_time = "t2".into();
        assert!(set_condition(&mut conds, msg));
        assert_eq!(
            conds[0].last_transition_time, "t0",
            "message change keeps the time"
        );

        let mut ready = Condition::new("Ready", true, "Available", "2/2");
        ready.last_transition_time = "t3".into();
        assert!(set_condition(&mut conds, ready));
        assert_eq!(conds[0].last_transition_time, "t3");
        assert_eq!(conds.len(), 1);
    }
}
