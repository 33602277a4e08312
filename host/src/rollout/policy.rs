//! A shadow's policy, judged: promote after enough agreeing reconciles in
//! a row, abort on a difference or above an error rate.

use super::Command;
use super::state::Rollout;
use crate::config::{MIN_JUDGED, PolicyConfig};
use crate::dispatch::Compared;

/// What a shadow did so far, for its policy.
#[derive(Default)]
pub(crate) struct Tally {
    pub shadowed: u64,
    pub errors: u64,
    pub agreeing_in_a_row: u64,
    /// The policy has asked for a promotion or an abort.
    pub decided: bool,
}

impl Rollout {
    /// Counts one more shadowed reconcile; what `policy` asks for now, if
    /// anything (once).
    pub(crate) fn judge(&self, compared: &Compared, policy: &PolicyConfig) -> Option<Command> {
        let mut tally = self.tally.lock().expect("rollout lock");
        tally.shadowed += 1;
        if compared.error.is_some() {
            tally.errors += 1;
        }
        if compared.agrees() {
            tally.agreeing_in_a_row += 1;
        } else {
            tally.agreeing_in_a_row = 0;
        }
        if tally.decided {
            return None;
        }
        let error_rate = tally.errors as f64 / tally.shadowed as f64;
        let abort = (policy.abort_on_difference && !compared.agrees())
            || policy
                .abort_error_rate
                .is_some_and(|rate| tally.shadowed >= MIN_JUDGED && error_rate > rate);
        let promote = policy
            .promote_after
            .is_some_and(|n| tally.agreeing_in_a_row >= n);
        let command = if abort {
            Some(Command::Abort)
        } else if promote {
            Some(Command::Promote)
        } else {
            None
        };
        tally.decided = command.is_some();
        command
    }
}

impl Rollout {
    /// Why the policy decided `command`, for people (kept with the
    /// decision).
    pub(crate) fn reason_of(
        &self,
        command: Command,
        compared: &Compared,
        policy: &PolicyConfig,
    ) -> String {
        let tally = self.tally.lock().expect("rollout lock");
        match command {
            Command::Promote => format!(
                "{} shadowed reconciles in a row agreed with the serving version (promoteAfter: {})",
                tally.agreeing_in_a_row,
                policy.promote_after.unwrap_or_default()
            ),
            Command::Abort if policy.abort_on_difference && !compared.agrees() => format!(
                "the versions differed on a {} request (abortOnDifference)",
                compared.reason
            ),
            Command::Abort => format!(
                "{} of {} shadowed reconciles failed (abortErrorRate: {})",
                tally.errors,
                tally.shadowed,
                policy.abort_error_rate.unwrap_or_default()
            ),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A rollout of module `app` that sends its commands nowhere.
    pub(crate) fn new_rollout() -> Rollout {
        Rollout::new(
            "app",
            super::super::Commands::default(),
            super::super::Keeper::default(),
        )
    }

    /// A comparison that agrees, and one that differs.
    pub(crate) fn agree_and_differ() -> (Compared, Compared) {
        let agree = Compared {
            reason: "added".into(),
            diff: Vec::new(),
            error: None,
        };
        let differ = Compared {
            diff: vec!["-a".into()],
            ..agree.clone()
        };
        (agree, differ)
    }

    #[test]
    fn the_policy_promotes_after_agreement_in_a_row_and_aborts_on_failure() {
        let (agree, differ) = agree_and_differ();
        let failed = Compared {
            error: Some("trapped".into()),
            ..agree.clone()
        };
        let promote = PolicyConfig {
            promote_after: Some(3),
            ..PolicyConfig::default()
        };
        let rollout = new_rollout();
        assert_eq!(rollout.judge(&agree, &promote), None);
        assert_eq!(rollout.judge(&agree, &promote), None);
        assert_eq!(
            rollout.judge(&differ, &promote),
            None,
            "a difference starts over"
        );
        assert_eq!(rollout.judge(&agree, &promote), None);
        assert_eq!(rollout.judge(&agree, &promote), None);
        assert_eq!(rollout.judge(&agree, &promote), Some(Command::Promote));
        assert_eq!(rollout.judge(&agree, &promote), None, "asked once");

        let strict = PolicyConfig {
            abort_on_difference: true,
            ..promote.clone()
        };
        let rollout = new_rollout();
        assert_eq!(rollout.judge(&differ, &strict), Some(Command::Abort));

        let rate = PolicyConfig {
            abort_error_rate: Some(0.1),
            ..PolicyConfig::default()
        };
        let rollout = new_rollout();
        for _ in 0..17 {
            assert_eq!(rollout.judge(&agree, &rate), None);
        }
        assert_eq!(rollout.judge(&failed, &rate), None);
        assert_eq!(rollout.judge(&failed, &rate), None, "19 judged: too few");
        assert_eq!(
            rollout.judge(&failed, &rate),
            Some(Command::Abort),
            "3 of 20"
        );
    }
}
