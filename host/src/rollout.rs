//! Safe rollout: a new version of a module runs in **shadow** beside the
//! serving one. Every request the serving version reconciles is reconciled
//! by the shadow too, on the same request, its writes sent to the API
//! server as dry runs (`dryRun=All`: admitted, defaulted and validated,
//! nothing stored) and its Events dropped; the host compares the writes
//! the two made (the objects the server stored or would store, and the
//! calls) and keeps, per object, whether they agree and a unified diff.
//!
//! - A shadow never slows or changes the serving version: it runs after
//!   it, on a task of its own, one reconcile at a time per module, within
//!   the module's own CPU deadline and memory cap. Requests wait per
//!   object: a newer request of an object waiting replaces the older one
//!   (only the object's latest state is compared; counted as superseded),
//!   and at most [`SHADOW_BACKLOG`] objects wait (more are not shadowed,
//!   and counted as skipped). Under a burst the shadow lags behind and
//!   compares each object's latest request rather than taking CPU from
//!   the serving version.
//! - A shadow that traps, loops, eats memory or is refused by the server
//!   counts as a difference and an error.
//! - What the user sees: `/rollout/<module>` on the metrics port (`rekon
//!   rollout status MODULE`), the metrics `rekon_shadow_reconciles_total`,
//!   `rekon_shadow_differences_total`, `rekon_shadow_errors_total`, and one
//!   `ShadowDiffers` Event per object the first time the versions differ.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::runtime::Dispatcher;

/// Objects of one module waiting for their shadow reconcile; requests of
/// more are skipped (and counted in `rekon_shadow_skipped_total`).
pub const SHADOW_BACKLOG: usize = 1000;

/// A shadow reconcile waiting to run: what it does, with everything it
/// needs.
pub(crate) type Job = Box<dyn FnOnce() -> futures::future::BoxFuture<'static, ()> + Send>;

/// What became of a request handed to the shadow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Queued {
    /// It waits its turn (the shadow's task is started when it runs none).
    Waiting,
    /// It replaced an older request of the same object that was waiting.
    Superseded,
    /// [`SHADOW_BACKLOG`] objects wait already: it is not shadowed.
    Skipped,
}

/// The task running a rollout's shadow reconciles: should a job panic, the
/// next request starts another.
struct Task(Arc<Rollout>);

impl Drop for Task {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.pending.lock().expect("rollout lock").running = false;
        }
    }
}

/// The shadow reconciles waiting, per object, in arrival order.
#[derive(Default)]
struct Pending {
    order: std::collections::VecDeque<String>,
    jobs: std::collections::HashMap<String, Job>,
    /// A task runs the jobs (until none waits).
    running: bool,
}

/// Longest line of a diff (longer ones are cut, saying how much).
const DIFF_LINE: usize = 200;

/// The calls that write (what is compared).
const WRITES: [&str; 7] = [
    "create",
    "replace",
    "replace-status",
    "patch",
    "patch-status",
    "delete",
    "record-event",
];

/// The version shadowing a module's serving version.
#[derive(Clone)]
pub(crate) struct Shadow {
    pub module: Dispatcher,
    /// The version itself (what a promotion installs).
    pub version: crate::runtime::Module,
    /// Where it comes from (`configmap:ns/name`, a path).
    pub origin: String,
    /// The percentage of objects it serves live ([`in_canary`]).
    pub canary: u8,
    /// When it is promoted or dropped on its own.
    pub policy: crate::config::PolicyConfig,
}

/// What a shadow did so far, for its policy.
#[derive(Default)]
struct Tally {
    shadowed: u64,
    errors: u64,
    agreeing_in_a_row: u64,
    /// The policy has asked for a promotion or an abort.
    decided: bool,
}

/// Whether the object `namespace/name` is in a canary of `percent`: the
/// FNV-1a hash of `namespace/name` (`name` alone for a cluster-scoped
/// object), modulo 100, is below it. Stable across restarts and replicas.
pub fn in_canary(namespace: Option<&str>, name: &str, percent: u8) -> bool {
    let key = crate::shared::namespaced_name(namespace, name);
    let hash = key.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3)
    });
    hash % 100 < u64::from(percent)
}

/// How the versions compared on an object's latest shadowed request.
#[derive(Clone, Debug)]
pub struct Compared {
    /// The request's reason.
    pub reason: String,
    /// The unified diff of the serving version's writes (`-`) and the
    /// shadow's (`+`); empty when they agree.
    pub diff: Vec<String>,
    /// Why the shadow failed (trapped, ran out of time or memory,
    /// returned an error the serving version did not).
    pub error: Option<String>,
}

impl Compared {
    /// Whether the versions did the same.
    pub fn agrees(&self) -> bool {
        self.diff.is_empty() && self.error.is_none()
    }
}

/// One module's rollout: its shadow, if any, and what the shadow did.
pub struct Rollout {
    /// The serving version, as `1.0.0 (digest)`, while one runs.
    serving: Mutex<Option<String>>,
    shadow: Mutex<Option<Shadow>>,
    /// Bumped whenever a shadow arrives (its controller queues every
    /// object once, so each is compared).
    arrivals: tokio::sync::watch::Sender<u64>,
    tally: Mutex<Tally>,
    /// Per object (`namespace/name`): the latest comparison, and whether
    /// the versions ever differed on it (its Event is sent once).
    objects: Mutex<BTreeMap<String, (Compared, bool)>>,
    pending: Mutex<Pending>,
}

impl Default for Rollout {
    fn default() -> Self {
        Rollout {
            serving: Mutex::new(None),
            shadow: Mutex::new(None),
            arrivals: tokio::sync::watch::Sender::new(0),
            tally: Mutex::new(Tally::default()),
            objects: Mutex::new(BTreeMap::new()),
            pending: Mutex::new(Pending::default()),
        }
    }
}

impl std::fmt::Debug for Rollout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rollout").finish_non_exhaustive()
    }
}

impl Rollout {
    /// Says which version serves (`None`: none now).
    pub(crate) fn set_serving(&self, serving: Option<String>) {
        *self.serving.lock().expect("rollout lock") = serving;
    }

    /// The shadow, if one runs.
    pub(crate) fn shadow(&self) -> Option<Shadow> {
        self.shadow.lock().expect("rollout lock").clone()
    }

    /// The shadow, if one runs from `origin`.
    pub(crate) fn shadow_from(&self, origin: &crate::source::Origin) -> Option<Shadow> {
        self.shadow().filter(|s| s.origin == origin.to_string())
    }

    /// Ends the shadow if it runs from `origin`; whether it did.
    pub(crate) fn end_shadow_from(&self, origin: &crate::source::Origin) -> bool {
        let from = self.shadow_from(origin).is_some();
        if from {
            self.set_shadow(None);
        }
        from
    }

    /// Runs `shadow` (replacing the one running: what it compared is
    /// forgotten), or none.
    pub(crate) fn set_shadow(&self, shadow: Option<Shadow>) {
        let arrives = shadow.is_some();
        *self.shadow.lock().expect("rollout lock") = shadow;
        // What waited was for the shadow that was.
        let mut pending = self.pending.lock().expect("rollout lock");
        pending.order.clear();
        pending.jobs.clear();
        drop(pending);
        self.objects.lock().expect("rollout lock").clear();
        *self.tally.lock().expect("rollout lock") = Tally::default();
        if arrives {
            self.arrivals.send_modify(|n| *n += 1);
        }
    }

    /// Changes whenever a shadow arrives.
    pub(crate) fn arrivals(&self) -> tokio::sync::watch::Receiver<u64> {
        self.arrivals.subscribe()
    }

    /// Hands a shadow reconcile of `object` over, `job` building it (only
    /// when it is taken): it runs after the jobs of the objects waiting
    /// before it, on the shadow's task (started here when none runs),
    /// unless a newer job of `object` replaces it first.
    pub(crate) fn enqueue(self: &Arc<Self>, object: String, job: impl FnOnce() -> Job) -> Queued {
        let mut pending = self.pending.lock().expect("rollout lock");
        let queued = if let Some(waiting) = pending.jobs.get_mut(&object) {
            *waiting = job();
            Queued::Superseded
        } else if pending.jobs.len() >= SHADOW_BACKLOG {
            return Queued::Skipped;
        } else {
            pending.order.push_back(object.clone());
            pending.jobs.insert(object, job());
            Queued::Waiting
        };
        if !pending.running {
            pending.running = true;
            let task = Task(self.clone());
            tokio::spawn(async move {
                while let Some(job) = task.0.next_job() {
                    job().await;
                }
            });
        }
        queued
    }

    /// The next job to run; `None` (the task ends) when none waits.
    fn next_job(&self) -> Option<Job> {
        let mut pending = self.pending.lock().expect("rollout lock");
        while let Some(object) = pending.order.pop_front() {
            if let Some(job) = pending.jobs.remove(&object) {
                return Some(job);
            }
        }
        pending.running = false;
        None
    }

    /// Counts one more shadowed reconcile; what `policy` asks for now, if
    /// anything (once).
    pub(crate) fn judge(
        &self,
        compared: &Compared,
        policy: &crate::config::PolicyConfig,
    ) -> Option<Command> {
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
            || policy.abort_error_rate.is_some_and(|rate| {
                tally.shadowed >= crate::config::MIN_JUDGED && error_rate > rate
            });
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

    /// The rollout as `rekon rollout status` prints it.
    pub fn status(&self, module: &str) -> String {
        let mut out = String::new();
        let serving = self
            .serving
            .lock()
            .expect("rollout lock")
            .clone()
            .unwrap_or_else(|| "none".into());
        match self.shadow() {
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

/// What an operator asks of a module's rollout (`rekon rollout`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    /// The shadow becomes the serving version.
    Promote,
    /// The shadow goes; the serving version goes on alone.
    Abort,
}

/// The modules' rollouts, by module name (kept across versions).
#[derive(Default)]
pub(crate) struct Rollouts {
    map: Mutex<BTreeMap<String, Arc<Rollout>>>,
    /// Where commands go (the loader's driver), once the host runs.
    commands: Mutex<Option<tokio::sync::mpsc::UnboundedSender<(String, Command)>>>,
}

impl Rollouts {
    /// The rollout of `module`.
    pub fn of(&self, module: &str) -> Arc<Rollout> {
        self.map
            .lock()
            .expect("rollouts lock")
            .entry(module.to_string())
            .or_default()
            .clone()
    }

    /// The rollout of `module`, if it ever had a shadow.
    pub fn get(&self, module: &str) -> Option<Arc<Rollout>> {
        self.map.lock().expect("rollouts lock").get(module).cloned()
    }

    /// Sends the commands to `sender` from now on.
    pub fn command_to(&self, sender: tokio::sync::mpsc::UnboundedSender<(String, Command)>) {
        *self.commands.lock().expect("rollouts lock") = Some(sender);
    }

    /// Asks `command` of `module`'s rollout; why not, when it cannot be.
    pub fn command(&self, module: &str, command: Command) -> Result<(), String> {
        if self.get(module).and_then(|r| r.shadow()).is_none() {
            return Err(format!("module {module:?} has no shadow"));
        }
        let commands = self.commands.lock().expect("rollouts lock");
        let sent = commands
            .as_ref()
            .is_some_and(|c| c.send((module.to_string(), command)).is_ok());
        if sent {
            Ok(())
        } else {
            Err("the host is not taking commands (starting or stopping)".into())
        }
    }
}

/// The writes among recorded calls, as text to compare: each call, what it
/// is about and the object the server stored (or would store), without
/// what differs between any two writes (resourceVersion, uid, times,
/// managedFields, generation); a refused write with its error.
pub(crate) fn writes_text(calls: &[Value]) -> String {
    let mut out = String::new();
    for call in calls {
        let name = call["call"].as_str().unwrap_or_default();
        if !WRITES.contains(&name) {
            continue;
        }
        let args = &call["args"];
        let what = if name == "record-event" {
            json!({ "regarding": args["regarding"], "type": args["type"],
                "reason": args["reason"], "message": args["message"] })
        } else {
            let mut about = json!({ "apiVersion": args["apiVersion"], "kind": args["kind"],
                "namespace": args["namespace"],
                "name": args.get("name").cloned()
                    .unwrap_or_else(|| args["object"]["metadata"]["name"].clone()) });
            match (call["result"].get("ok"), call["result"].get("error")) {
                (Some(stored), _) if stored.is_object() => {
                    about["stored"] = comparable(stored.clone());
                }
                (_, Some(error)) => about["refused"] = error.clone(),
                _ => {}
            }
            about
        };
        out.push_str(&format!("{name}:\n"));
        out.push_str(&serde_json::to_string_pretty(&what).unwrap_or_default());
        out.push('\n');
    }
    out
}

/// A stored object without the fields that differ between any two writes.
fn comparable(mut object: Value) -> Value {
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        for field in [
            "resourceVersion",
            "uid",
            "creationTimestamp",
            "generation",
            "managedFields",
        ] {
            metadata.remove(field);
        }
    }
    if let Some(conditions) = object
        .pointer_mut("/status/conditions")
        .and_then(Value::as_array_mut)
    {
        for condition in conditions.iter_mut().filter_map(Value::as_object_mut) {
            condition.remove("lastTransitionTime");
        }
    }
    object
}

/// The unified diff of the serving version's writes and the shadow's.
pub(crate) fn diff(serving: &str, shadow: &str, versions: (&str, &str)) -> Vec<String> {
    let lines = rekon_rules::diff_lines(serving, shadow, 3);
    if lines.is_empty() {
        return lines;
    }
    let mut out = vec![
        format!("--- serving {}", versions.0),
        format!("+++ shadow {}", versions.1),
    ];
    out.extend(lines.into_iter().map(|line| {
        if line.len() <= DIFF_LINE {
            return line;
        }
        let mut end = DIFF_LINE;
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}... ({} more bytes)", &line[..end], line.len() - end)
    }));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shadow reconciles wait per object: a newer request of an object
    /// still waiting replaces the older one, objects run in the order they
    /// came, and beyond the backlog requests are skipped.
    #[tokio::test]
    async fn shadow_jobs_wait_per_object_and_the_newest_of_each_runs() {
        let rollout = Arc::new(Rollout::default());
        let ran = Arc::new(Mutex::new(Vec::new()));
        let (release, gate) = tokio::sync::oneshot::channel::<()>();
        let gate = Arc::new(Mutex::new(Some(gate)));
        let job = |name: &'static str| -> Job {
            let (ran, gate) = (ran.clone(), gate.clone());
            Box::new(move || {
                Box::pin(async move {
                    let wait = gate.lock().unwrap().take();
                    if let Some(wait) = wait {
                        let _ = wait.await;
                    }
                    ran.lock().unwrap().push(name);
                })
            })
        };
        // The first job holds the task until released.
        assert_eq!(rollout.enqueue("a".into(), || job("a1")), Queued::Waiting);
        tokio::task::yield_now().await;
        assert_eq!(rollout.enqueue("b".into(), || job("b1")), Queued::Waiting);
        assert_eq!(rollout.enqueue("c".into(), || job("c1")), Queued::Waiting);
        assert_eq!(
            rollout.enqueue("b".into(), || job("b2")),
            Queued::Superseded
        );
        for i in 0..SHADOW_BACKLOG - 2 {
            rollout.enqueue(format!("filler-{i}"), || Box::new(|| Box::pin(async {})));
        }
        assert_eq!(rollout.enqueue("d".into(), || job("d1")), Queued::Skipped);
        release.send(()).unwrap();
        for _ in 0..100 {
            if ran.lock().unwrap().len() == 3 && !rollout.pending.lock().unwrap().running {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert_eq!(*ran.lock().unwrap(), ["a1", "b2", "c1"]);
        // The task ended once nothing waited; the next job starts another.
        assert_eq!(rollout.enqueue("d".into(), || job("d2")), Queued::Waiting);
        for _ in 0..100 {
            if ran.lock().unwrap().len() == 4 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        assert_eq!(ran.lock().unwrap().last(), Some(&"d2"));
    }

    #[test]
    fn writes_compare_on_what_would_be_stored_not_on_bookkeeping() {
        let patch = |rv: &str, replicas: i64| {
            json!({"call": "patch", "args": {"apiVersion": "apps/v1", "kind": "Deployment",
                "namespace": "shop", "name": "web", "patch": {}},
                "result": {"ok": {"metadata": {"name": "web", "resourceVersion": rv,
                    "managedFields": [{"time": rv}]}, "spec": {"replicas": replicas}}}})
        };
        let read = json!({"call": "get", "args": {}, "result": {"ok": {}}});
        let a = writes_text(&[read.clone(), patch("1", 2)]);
        let b = writes_text(&[patch("7", 2)]);
        assert_eq!(a, b, "reads and bookkeeping are left out");
        let c = writes_text(&[patch("7", 3)]);
        let d = diff(&a, &c, ("1.0.0", "1.1.0"));
        assert_eq!(d[0], "--- serving 1.0.0");
        assert!(
            d.iter()
                .any(|l| l.starts_with('-') && l.contains("\"replicas\": 2"))
        );
        assert!(
            d.iter()
                .any(|l| l.starts_with('+') && l.contains("\"replicas\": 3"))
        );
        assert!(diff(&a, &b, ("1", "2")).is_empty());
    }

    /// A comparison that agrees, and one that differs.
    fn agree_and_differ() -> (Compared, Compared) {
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
        use crate::config::PolicyConfig;
        let (agree, differ) = agree_and_differ();
        let failed = Compared {
            error: Some("trapped".into()),
            ..agree.clone()
        };
        let promote = PolicyConfig {
            promote_after: Some(3),
            ..PolicyConfig::default()
        };
        let rollout = Rollout::default();
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
        let rollout = Rollout::default();
        assert_eq!(rollout.judge(&differ, &strict), Some(Command::Abort));

        let rate = PolicyConfig {
            abort_error_rate: Some(0.1),
            ..PolicyConfig::default()
        };
        let rollout = Rollout::default();
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

    #[test]
    fn an_object_is_announced_once_when_the_versions_first_differ() {
        let rollout = Rollout::default();
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
