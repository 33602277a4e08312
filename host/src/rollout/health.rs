//! A canary judged by its own health: what the objects it serves live
//! cost — errors, requeues, writes per object per minute (a create/delete
//! loop trips it), host calls refused for lack of permission — with the
//! figures kept as the evidence of an automatic rollback.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::{Duration, Instant};

use crate::config::{MIN_JUDGED, PolicyConfig};
use crate::contract::Action;
use crate::runtime::Outcome;

/// The window writes per object are counted over.
const MINUTE: Duration = Duration::from_secs(60);

/// The calls that write.
const WRITES: [&str; 6] = [
    "create",
    "replace",
    "replace-status",
    "patch",
    "patch-status",
    "delete",
];

/// What a canary did so far.
#[derive(Debug, Default)]
pub(crate) struct Health {
    reconciles: u64,
    errors: u64,
    requeues: u64,
    denials: u64,
    /// Per object: when it was written, within the last minute.
    writes: HashMap<String, VecDeque<Instant>>,
    /// The most writes of one object within a minute so far, and which.
    worst: Option<(String, usize)>,
    /// The first denial seen.
    denied: Option<String>,
}

impl Health {
    /// Counts one reconcile of `object` the canary served; why the policy
    /// drops the canary now, if it does.
    pub fn count(
        &mut self,
        object: &str,
        outcome: &Outcome,
        policy: &PolicyConfig,
    ) -> Option<String> {
        self.count_at(object, outcome, policy, Instant::now())
    }

    fn count_at(
        &mut self,
        object: &str,
        outcome: &Outcome,
        policy: &PolicyConfig,
        now: Instant,
    ) -> Option<String> {
        self.reconciles += 1;
        match &outcome.result {
            Err(_) => self.errors += 1,
            Ok(Action::RequeueAfter(_)) => self.requeues += 1,
            Ok(Action::Done) => {}
        }
        if let Some(denied) = outcome.denied.first() {
            self.denials += outcome.denied.len() as u64;
            self.denied.get_or_insert_with(|| denied.clone());
        }
        let written = outcome
            .host_calls
            .iter()
            .filter(|(call, result)| WRITES.contains(call) && result == "ok")
            .count();
        let times = self.writes.entry(object.to_string()).or_default();
        times.extend(std::iter::repeat_n(now, written));
        while times
            .front()
            .is_some_and(|t| now.duration_since(*t) > MINUTE)
        {
            times.pop_front();
        }
        let in_a_minute = times.len();
        if self.worst.as_ref().is_none_or(|(_, n)| in_a_minute > *n) {
            self.worst = Some((object.to_string(), in_a_minute));
        }
        self.judge(object, in_a_minute, policy)
    }

    fn judge(&self, object: &str, in_a_minute: usize, policy: &PolicyConfig) -> Option<String> {
        let limit = policy.max_writes() as usize;
        if in_a_minute > limit {
            return Some(format!(
                "the canary wrote {in_a_minute} times in a minute reconciling {object} (maxWritesPerObjectPerMinute: {limit})"
            ));
        }
        if policy.aborts_on_denial()
            && let Some(denied) = &self.denied
        {
            return Some(format!(
                "a host call of the canary was refused for lack of permission: {denied}"
            ));
        }
        let rate = self.errors as f64 / self.reconciles as f64;
        if let Some(max) = policy.abort_error_rate
            && self.reconciles >= MIN_JUDGED
            && rate > max
        {
            return Some(format!(
                "{} of {} canary reconciles failed (abortErrorRate: {max})",
                self.errors, self.reconciles
            ));
        }
        None
    }

    /// The figures, for a decision's evidence.
    pub fn figures(&self) -> BTreeMap<String, f64> {
        let mut figures = BTreeMap::new();
        if self.reconciles == 0 {
            return figures;
        }
        figures.insert("canaryReconciles".into(), self.reconciles as f64);
        figures.insert("canaryErrors".into(), self.errors as f64);
        figures.insert("canaryRequeues".into(), self.requeues as f64);
        figures.insert("canaryDenials".into(), self.denials as f64);
        if let Some((_, n)) = &self.worst {
            figures.insert("canaryMaxWritesPerObjectPerMinute".into(), *n as f64);
        }
        figures
    }

    /// One line for `rekon rollout status`.
    pub fn summary(&self) -> Option<String> {
        if self.reconciles == 0 {
            return None;
        }
        let worst = self
            .worst
            .as_ref()
            .map(|(object, n)| format!(", at most {n} writes of one object in a minute ({object})"))
            .unwrap_or_default();
        Some(format!(
            "canary health: {} reconciles, {} errors, {} requeues, {} denials{worst}",
            self.reconciles, self.errors, self.requeues, self.denials
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(writes: usize, denied: &[&str]) -> Outcome {
        Outcome {
            result: Ok(Action::Done),
            calls: Vec::new(),
            denied: denied.iter().map(|d| d.to_string()).collect(),
            host_calls: std::iter::repeat_n(("delete", "ok".to_string()), writes)
                .chain([("get", "ok".to_string())])
                .collect(),
            failed_call: None,
            elapsed: Duration::ZERO,
        }
    }

    #[test]
    fn a_write_loop_trips_the_canary_within_its_minute() {
        let policy = PolicyConfig {
            max_writes_per_object_per_minute: Some(10),
            ..PolicyConfig::default()
        };
        let mut health = Health::default();
        let start = Instant::now();
        // Two writes per reconcile of one object, a reconcile every 5 s:
        // 24 in a minute, over 10 at the sixth reconcile.
        let mut tripped = None;
        for i in 0..12 {
            let at = start + Duration::from_secs(5 * i);
            if let Some(why) = health.count_at("shop/loop", &outcome(2, &[]), &policy, at) {
                tripped = Some((i, why));
                break;
            }
        }
        let (at, why) = tripped.expect("the loop trips the canary");
        assert_eq!(at, 5, "{why}");
        assert!(
            why.contains("wrote 12 times in a minute reconciling shop/loop"),
            "{why}"
        );
        assert_eq!(health.figures()["canaryMaxWritesPerObjectPerMinute"], 12.0);

        // The same writes spread over time stay within the limit.
        let mut calm = Health::default();
        for i in 0..30 {
            let at = start + Duration::from_secs(20 * i);
            assert_eq!(
                calm.count_at("shop/calm", &outcome(2, &[]), &policy, at),
                None
            );
        }
        // A denial trips it at once (unless the policy says otherwise).
        let mut denied = Health::default();
        let why = denied
            .count_at(
                "shop/a",
                &outcome(0, &["delete Secret default/x"]),
                &policy,
                start,
            )
            .expect("a denial trips the canary");
        assert!(why.contains("delete Secret default/x"), "{why}");
        let lenient = PolicyConfig {
            abort_on_denial: Some(false),
            ..policy
        };
        let mut tolerated = Health::default();
        assert_eq!(
            tolerated.count_at(
                "shop/a",
                &outcome(0, &["delete Secret default/x"]),
                &lenient,
                start
            ),
            None
        );
    }
}
