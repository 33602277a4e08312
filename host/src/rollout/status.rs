//! A rollout as `rekon rollout status` prints it.

use super::state::Rollout;

impl Rollout {
    /// The rollout as `rekon rollout status` prints it.
    pub fn status(&self, module: &str) -> String {
        let mut out = String::new();
        let serving = self.serving().unwrap_or_else(|| "none".into());
        match self.shadow_version() {
            None => out.push_str(&format!("module {module}: serving {serving}, no shadow\n")),
            Some(shadow) => {
                out.push_str(&format!(
                    "module {module}: serving {serving}, shadow {} ({}) from {}\n",
                    shadow.module.manifest().version,
                    shadow.module.short_digest(),
                    shadow.origin
                ));
                if shadow.canary > 0 {
                    out.push_str(&format!(
                        "canary: the shadow serves {}% of the objects live\n",
                        shadow.canary
                    ));
                }
                if let Some(health) = self.health.lock().expect("rollout lock").summary() {
                    out.push_str(&health);
                    out.push('\n');
                }
                let policy = &shadow.policy;
                let tally = self.tally.lock().expect("rollout lock");
                let mut rules = Vec::new();
                if let Some(n) = policy.promote_after {
                    rules.push(format!(
                        "promote after {n} agreeing in a row ({} so far)",
                        tally.agreeing_in_a_row
                    ));
                }
                if policy.abort_on_difference {
                    rules.push("abort on a difference".to_string());
                }
                if let Some(rate) = policy.abort_error_rate {
                    rules.push(format!(
                        "abort above {rate} errors per reconcile ({} of {} so far)",
                        tally.errors, tally.shadowed
                    ));
                }
                if !rules.is_empty() {
                    out.push_str(&format!("policy: {}\n", rules.join(", ")));
                }
            }
        }
        let compared = self.compared();
        let differ = compared.iter().filter(|(_, c)| !c.agrees()).count();
        out.push_str(&format!(
            "{} objects shadowed: {} agree, {differ} differ\n",
            compared.len(),
            compared.len() - differ
        ));
        for (object, c) in &compared {
            match (&c.error, c.agrees()) {
                (_, true) => out.push_str(&format!("agree   {object} ({})\n", c.reason)),
                (Some(error), _) => {
                    out.push_str(&format!("error   {object} ({}): {error}\n", c.reason))
                }
                (None, false) => out.push_str(&format!("differ  {object} ({})\n", c.reason)),
            }
            for line in &c.diff {
                out.push_str("  ");
                out.push_str(line);
                out.push('\n');
            }
        }
        out
    }
}
