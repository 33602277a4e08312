//! Rollouts kept in a real cluster, two replicas with leader election: a
//! promotion, an abort and an automatic rollback are each followed by the
//! standby when the leader is killed, and by two replicas started again —
//! the same version serves before and after, and the audit log of the real
//! kube-apiserver shows no live write by a version that must not serve.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};

use super::rollout::replaced;
use super::{ONE_AT_A_TIME, kubectl, kubectl_out, real_binaries, shown};

/// What the audit log keeps: every write to a ConfigMap in `shop`, with
/// its body.
const AUDIT_POLICY: &str = "apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Request
  namespaces: [shop]
  verbs: [create, update, patch, delete]
  resources:
  - group: \"\"
    resources: [configmaps]
- level: None
";

/// A real cluster, the files the replicas run, and the replicas.
struct Cluster {
    _cluster: rekon_envtest::RealCluster,
    dir: PathBuf,
    kubeconfig: PathBuf,
    audit: PathBuf,
    replicas: Vec<(String, Child)>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for (_, child) in &mut self.replicas {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// How long a state may take: a real cluster on two cores, a lease to expire.
const DEADLINE: std::time::Duration = std::time::Duration::from_secs(90);

impl Cluster {
    fn start(dir: &Path) -> Cluster {
        let (cluster, audit) = super::audit::audited_cluster(dir, AUDIT_POLICY, &[]);
        let kubeconfig = dir.join("kubeconfig");
        std::fs::write(&kubeconfig, cluster.kubeconfig()).unwrap();
        let cluster = Cluster {
            _cluster: cluster,
            dir: dir.to_path_buf(),
            kubeconfig,
            audit,
            replicas: Vec::new(),
        };
        // Installed as deploy/ installs it.
        cluster.kubectl(&[
            "apply",
            "-f",
            &crate::support::path("deploy/crds/rollouts.yaml"),
        ]);
        cluster.kubectl(&["create", "namespace", "shop"]);
        cluster
    }

    fn kubectl(&self, args: &[&str]) -> String {
        let output = kubectl(&self.kubeconfig, args);
        assert!(
            output.status.success(),
            "kubectl {args:?}: {}",
            shown(&output)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// Starts replica `identity`: `serving` on the command line, `shadow`
    /// named in the configuration with `settings`.
    fn replica(&mut self, identity: &str, serving: &[u8], shadow: &[u8], settings: &str) {
        let serving_path = self.dir.join("misbehave.wasm");
        let shadow_path = self.dir.join("misbehave-next.wasm");
        // The replicas share their files, as a Deployment's pods share
        // their ConfigMaps: written when they change only, and whole (a
        // running replica watches them, and must never read one half
        // written).
        put(&serving_path, serving);
        put(&shadow_path, shadow);
        let config = self.dir.join("rekon.yaml");
        let settings = format!(
            "modules:\n  misbehave:\n    shadow: {}\n{settings}",
            shadow_path.display()
        );
        put(&config, settings.as_bytes());
        let log = self.dir.join(format!("{identity}.log"));
        let child = Command::new(env!("CARGO_BIN_EXE_rekon"))
            .arg("run")
            .args([&serving_path, &shadow_path])
            .arg("--config")
            .arg(&config)
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(crate::support::LEASE)
            .args(["--identity", identity])
            .env("REKON_CACHE_DIR", self.dir.join("cache"))
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(log).unwrap())
            .spawn()
            .unwrap();
        self.replicas.push((identity.to_string(), child));
    }

    /// Every replica's log, each under its name.
    fn logs(&self) -> String {
        self.replicas
            .iter()
            .map(|(identity, _)| {
                let log = std::fs::read_to_string(self.dir.join(format!("{identity}.log")));
                format!("--- {identity}\n{}", log.unwrap_or_default())
            })
            .collect()
    }

    /// Every replica's log without its reconciles' lines (what a failure
    /// shows).
    fn brief_logs(&self) -> String {
        self.logs()
            .lines()
            .filter(|l| !l.contains("reconcile{"))
            .map(|l| format!("{l}\n"))
            .collect()
    }

    /// Waits until `done` gives something, or fails saying `what`.
    fn wait<T>(&self, what: &str, mut done: impl FnMut() -> Option<T>) -> T {
        let deadline = std::time::Instant::now() + DEADLINE;
        loop {
            if let Some(found) = done() {
                return found;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "timed out waiting for {what}\n{}\n--- the Rollout\n{}",
                self.brief_logs(),
                self.rollout()
                    .map(|r| r["status"].to_string())
                    .unwrap_or_default()
            );
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
    }

    /// The leader Lease's holder.
    fn holder(&self) -> Option<String> {
        let holder = kubectl_out(
            &self.kubeconfig,
            &[
                "get",
                "lease",
                "rekon-leader",
                "-n",
                "default",
                "-o",
                "jsonpath={.spec.holderIdentity}",
            ],
        );
        (!holder.is_empty()).then_some(holder)
    }

    /// Kills the leader (SIGKILL: no release) and waits for another.
    fn kill_leader(&mut self) {
        let leader = self.wait("a leader", || self.holder());
        let (_, child) = self
            .replicas
            .iter_mut()
            .find(|(identity, _)| *identity == leader)
            .unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        self.wait("a new leader", || self.holder().filter(|h| *h != leader));
    }

    /// Stops every replica still running (SIGTERM) and waits for them.
    fn stop_all(&mut self) {
        for (_, child) in &mut self.replicas {
            if child.try_wait().unwrap().is_none() {
                Command::new("kill")
                    .args(["-TERM", &child.id().to_string()])
                    .status()
                    .unwrap();
                child.wait().unwrap();
            }
        }
    }

    /// The module's `Rollout`, once it has one.
    fn rollout(&self) -> Option<Value> {
        let output = kubectl(
            &self.kubeconfig,
            &[
                "get",
                "rollouts.rekon.dev",
                "misbehave",
                "-n",
                "default",
                "-o",
                "json",
            ],
        );
        serde_json::from_slice(&output.stdout).ok()
    }

    /// `rekon rollout COMMAND misbehave` against the cluster.
    fn rollout_command(&self, command: &str) -> String {
        let output = Command::new(env!("CARGO_BIN_EXE_rekon"))
            .args(["rollout", command, "misbehave", "-n", "default"])
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{}", shown(&output));
        String::from_utf8_lossy(&output.stdout).into_owned()
    }

    /// ConfigMaps `c{i}` in `shop` for each `i` of `numbers`, annotated.
    fn objects(&self, numbers: std::ops::Range<usize>, annotations: Value) {
        let items: Vec<Value> = numbers
            .map(|i| {
                json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": format!("c{i}"), "namespace": "shop",
                        "annotations": annotations}})
            })
            .collect();
        let file = self.dir.join("objects.json");
        let list = json!({"apiVersion": "v1", "kind": "List", "items": items});
        std::fs::write(&file, list.to_string()).unwrap();
        self.kubectl(&["apply", "-f", file.to_str().unwrap()]);
    }

    /// Waits until every object `c{i}` of `numbers` was last written by
    /// `mark`.
    fn all_behaved(&self, numbers: std::ops::Range<usize>, mark: &str) {
        let what = format!("objects {numbers:?} reconciled by {mark}");
        self.wait(&what, || {
            let marks = self.kubectl(&[
                "get",
                "configmaps",
                "-n",
                "shop",
                "-o",
                "jsonpath={range .items[*]}{.metadata.name}={.data.behaved-by}{\"\\n\"}{end}",
            ]);
            numbers
                .clone()
                .all(|i| marks.lines().any(|l| l == format!("c{i}={mark}")))
                .then_some(())
        });
    }

    /// The leader killed, then both replicas stopped and two started again
    /// (`names`, with `serving`, `shadow` and `settings`), objects created
    /// after each: every object, `0..done` and the six new ones, ends up
    /// written by build B. The audit log's length before, to look at what
    /// was written since.
    fn fail_over_and_restart(
        &mut self,
        names: [&str; 2],
        serving: &[u8],
        shadow: &[u8],
        settings: &str,
        done: usize,
        annotations: &Value,
    ) -> usize {
        let mark = self.audited();
        self.kill_leader();
        self.objects(done..done + 3, annotations.clone());
        self.all_behaved(0..done + 3, "misbehave-build-B");
        self.stop_all();
        for name in names {
            self.replica(name, serving, shadow, settings);
        }
        self.objects(done + 3..done + 6, annotations.clone());
        self.all_behaved(0..done + 6, "misbehave-build-B");
        mark
    }

    /// Where the audit log ends so far: a mark to look at what comes
    /// after.
    fn audited(&self) -> usize {
        super::audit::events(&self.audit, usize::MAX).0
    }

    /// Live writes (dry runs aside) by a replica since the mark `from`
    /// ([`Cluster::audited`]) whose body holds `text`.
    fn writes_with(&self, from: usize, text: &str) -> Vec<String> {
        super::audit::events(&self.audit, from)
            .1
            .iter()
            .filter(|e| !e["requestURI"].as_str().unwrap_or("").contains("dryRun"))
            .filter(|e| e["userAgent"].as_str().unwrap_or("").starts_with("rekon/"))
            .filter(|e| e["requestObject"].to_string().contains(text))
            .map(|e| format!("{} {} by {}", e["verb"], e["requestURI"], e["userAgent"]))
            .collect()
    }
}

/// Two replicas, leader election on, on a real kube-apiserver: a promotion,
/// an abort and an automatic rollback each survive the leader's death and a
/// restart of both replicas — the same version serves before and after,
/// and no version that must not serve writes after the decision.
#[test]
fn promote_abort_and_rollback_survive_failover_and_restart_on_a_real_api_server() {
    let name = "promote_abort_and_rollback_survive_failover_and_restart_on_a_real_api_server";
    if !real_binaries(name) {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let mut cluster = Cluster::start(dir.path());
    let a = std::fs::read(rekon_test_artifacts::MISBEHAVE).unwrap();
    let version = |mark: &str| replaced(a.clone(), misbehave::BUILD_MARK, mark);
    let (b, c) = (version("misbehave-build-B"), version("misbehave-build-C"));
    // D reads its mode from another annotation: only it loops writes.
    let churn_key = misbehave::MODE_KEY.replace("/mode", "/modx");
    let d = replaced(
        version("misbehave-build-D"),
        misbehave::MODE_KEY,
        &churn_key,
    );
    let annotations = json!({ churn_key.as_str(): "churn" });

    // 1. B promoted over A.
    cluster.objects(0..3, annotations.clone());
    cluster.replica("replica-a", &a, &b, "");
    cluster.replica("replica-b", &a, &b, "");
    cluster.all_behaved(0..3, misbehave::BUILD_MARK);
    cluster.wait("B as the candidate", || {
        cluster
            .rollout()
            .filter(|r| r["status"]["candidate"]["digest"].is_string())
    });
    let out = cluster.rollout_command("promote");
    assert!(out.contains("module misbehave: Serving"), "{out}");
    cluster.all_behaved(0..3, "misbehave-build-B");
    let promoted = cluster.rollout().unwrap()["status"]["serving"]["digest"].clone();
    let mark =
        cluster.fail_over_and_restart(["replica-c", "replica-d"], &a, &b, "", 3, &annotations);
    // The audit log sees the replicas' writes: A's before its retirement.
    assert!(!cluster.writes_with(0, misbehave::BUILD_MARK).is_empty());
    let late = cluster.writes_with(mark, misbehave::BUILD_MARK);
    assert!(late.is_empty(), "A wrote after its retirement: {late:?}");
    let status = cluster.rollout().unwrap()["status"].clone();
    assert_eq!(status["serving"]["digest"], promoted, "{status}");
    assert_eq!(status["lastDecision"]["action"], "Promote", "{status}");

    // 2. C tried as a 50% canary on B (now on the command line), aborted.
    cluster.stop_all();
    let canary = "    canary: 50\n";
    cluster.replica("replica-e", &b, &c, canary);
    cluster.replica("replica-f", &b, &c, canary);
    cluster.wait("C serving part of the objects live", || {
        let marks = cluster.kubectl(&["get", "configmaps", "-n", "shop", "-o", "json"]);
        marks.contains("misbehave-build-C").then_some(())
    });
    cluster.wait("C as the candidate", || {
        cluster
            .rollout()
            .filter(|r| r["status"]["candidate"]["canary"] == 50)
    });
    cluster.rollout_command("abort");
    cluster.all_behaved(0..9, "misbehave-build-B");
    let mark =
        cluster.fail_over_and_restart(["replica-g", "replica-h"], &b, &c, canary, 9, &annotations);
    cluster.wait("C refused as aborted", || {
        cluster.logs().contains("was aborted").then_some(())
    });
    assert!(!cluster.writes_with(0, "misbehave-build-C").is_empty());
    let late = cluster.writes_with(mark, "misbehave-build-C");
    assert!(late.is_empty(), "C wrote after its abort: {late:?}");
    let status = cluster.rollout().unwrap()["status"].clone();
    assert_eq!(status["serving"]["digest"], promoted, "{status}");
    assert_eq!(status["lastDecision"]["action"], "Abort", "{status}");

    // 3. D as a canary that loops writes: rolled back by its policy.
    cluster.stop_all();
    let policy = "    canary: 50\n    policy:\n      maxWritesPerObjectPerMinute: 20\n";
    cluster.replica("replica-i", &b, &d, policy);
    cluster.replica("replica-j", &b, &d, policy);
    let rolled_back = cluster.wait("D rolled back by its policy", || {
        cluster.rollout().filter(|r| {
            r["status"]["lastDecision"]["action"] == "Abort"
                && r["status"]["lastDecision"]["by"] == "policy"
        })
    });
    let reason = rolled_back["status"]["lastDecision"]["reason"].to_string();
    assert!(reason.contains("maxWritesPerObjectPerMinute"), "{reason}");
    cluster.all_behaved(0..15, "misbehave-build-B");
    let mark =
        cluster.fail_over_and_restart(["replica-k", "replica-l"], &b, &d, policy, 15, &annotations);
    assert!(!cluster.writes_with(0, "\"churn\"").is_empty());
    let late = cluster.writes_with(mark, "churn");
    assert!(late.is_empty(), "D wrote after its rollback: {late:?}");
    let late = cluster.writes_with(mark, "misbehave-build-D");
    assert!(late.is_empty(), "D wrote after its rollback: {late:?}");
    let status = cluster.rollout().unwrap()["status"].clone();
    assert_eq!(status["serving"]["digest"], promoted, "{status}");
    let out = cluster.rollout_command("status");
    assert!(out.contains("last decision: Abort"), "{out}");
    assert!(out.contains("canaryMaxWritesPerObjectPerMinute"), "{out}");
}

/// Writes `bytes` to `path` unless it holds them already, by a rename (a
/// reader sees the old file or the new one, never a part).
fn put(path: &std::path::Path, bytes: &[u8]) {
    if std::fs::read(path).is_ok_and(|held| held == bytes) {
        return;
    }
    let staged = path.with_extension("staged");
    std::fs::write(&staged, bytes).unwrap();
    std::fs::rename(&staged, path).unwrap();
}
