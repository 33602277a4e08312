//! Replicas come and go, the webhooks never do: a rolling restart, a scale
//! from 2 to 1 and back, a graceful leader kill and a crash, while a write
//! the validating webhook must refuse is sent every 100 ms and Apps are
//! edited.

use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::cluster::{NETNS, Node, all_reconciled, app, apply_text, text, wait};

/// One write the validating webhook must refuse, and its answer.
#[derive(Debug, Clone)]
pub struct Probe {
    phase: String,
    code: u16,
    message: String,
}

/// Sends a write the webhook must refuse every 100 ms, from inside the
/// node, and records each answer under the phase it was sent in.
pub struct Prober {
    phase: Arc<Mutex<String>>,
    probes: Arc<Mutex<Vec<Probe>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Prober {
    pub fn start(node: &Node) -> Prober {
        let phase = Arc::new(Mutex::new("idle".to_string()));
        let probes = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let token = std::fs::read_to_string(node.dir.join("admin.token")).expect("the admin token");
        let ca = node.dir.join("pki/ca.crt");
        let thread = {
            let (phase, probes, stop) = (phase.clone(), probes.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let started = Instant::now();
                    let now = phase.lock().expect("phase").clone();
                    let output = Command::new("nsenter")
                        .arg(format!("--net=/run/netns/{NETNS}"))
                        .args(["curl", "-s", "-m", "12", "--cacert"])
                        .arg(&ca)
                        .args(["-H", &format!("Authorization: Bearer {}", token.trim())])
                        .args(["-H", "Content-Type: application/merge-patch+json", "-X", "PATCH"])
                        .arg("https://127.0.0.1:6443/apis/demo.rekon.dev/v1/namespaces/probe/apps/probe")
                        .args(["-d", r#"{"spec":{"replicas":500}}"#, "-w", "\n%{http_code}"])
                        .stderr(Stdio::null())
                        .output();
                    let out = output.map(|o| text(&o.stdout)).unwrap_or_default();
                    let (body, code) = out.rsplit_once('\n').unwrap_or(("", &out));
                    let message = serde_json::from_str::<Value>(body)
                        .ok()
                        .and_then(|v| v["message"].as_str().map(str::to_string))
                        .unwrap_or_else(|| body.chars().take(200).collect());
                    probes.lock().expect("probes").push(Probe {
                        phase: now,
                        code: code.trim().parse().unwrap_or(0),
                        message,
                    });
                    std::thread::sleep(
                        Duration::from_millis(100).saturating_sub(started.elapsed()),
                    );
                }
            })
        };
        Prober {
            phase,
            probes,
            stop,
            thread: Some(thread),
        }
    }

    pub fn phase(&self, name: &str) {
        // Let the probe in flight finish under the previous phase's name.
        *self.phase.lock().expect("phase") = name.to_string();
    }

    pub fn finish(mut self) -> Vec<Probe> {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            thread.join().expect("the prober");
        }
        self.probes.lock().expect("probes").clone()
    }
}

/// Churns the replicas of `node` while probing and editing.
pub fn replicas_come_and_go(node: &Node, step: &dyn Fn(&str)) {
    // ---- replicas come and go; the webhooks never do.
    step("churn, rolling restart, scale, leader kill, crash");
    node.k(&["create", "namespace", "team-b"]);
    for i in 0..4 {
        apply_text(node, &app(&format!("churn-{i}"), "team-b", 1));
    }
    let prober = Prober::start(node);
    let churning = Arc::new(AtomicBool::new(true));
    let churn = {
        let (dir, churning) = (node.dir.clone(), churning.clone());
        std::thread::spawn(move || {
            let mut edits = 0u32;
            while churning.load(Ordering::Relaxed) {
                let replicas = edits / 4 % 3 + 1;
                let _ = Command::new(dir.join("kubectl"))
                    .args([
                        "-n",
                        "team-b",
                        "patch",
                        "app.v1.demo.rekon.dev",
                        &format!("churn-{}", edits % 4),
                    ])
                    .args([
                        "--type",
                        "merge",
                        "-p",
                        &format!("{{\"spec\":{{\"replicas\":{replicas}}}}}"),
                    ])
                    .args(["--request-timeout=5s"])
                    .output();
                edits += 1;
                std::thread::sleep(Duration::from_millis(300));
            }
            edits
        })
    };
    std::thread::sleep(Duration::from_secs(2));
    prober.phase("rolling restart");
    node.in_rekon(&["rollout", "restart", "deploy/rekon"]);
    node.rolled_out();
    std::thread::sleep(Duration::from_secs(6));
    prober.phase("scale to 1");
    node.in_rekon(&["scale", "deploy/rekon", "--replicas=1"]);
    wait("one rekon pod", Duration::from_secs(90), || {
        (node.rekon_pods().len() == 1).then_some(())
    });
    std::thread::sleep(Duration::from_secs(3));
    prober.phase("scale to 2");
    node.in_rekon(&["scale", "deploy/rekon", "--replicas=2"]);
    node.rolled_out();
    std::thread::sleep(Duration::from_secs(3));
    prober.phase("leader deleted");
    let leader = node.leader();
    node.in_rekon(&["delete", "pod", &leader, "--wait=false"]);
    wait("another leader", Duration::from_secs(60), || {
        let now = node.leader();
        (!now.is_empty() && now != leader).then_some(())
    });
    node.rolled_out();
    std::thread::sleep(Duration::from_secs(3));
    prober.phase("leader crashed");
    let leader = node.leader();
    let pod = node.json(&["-n", "rekon-system", "get", "pod", &leader]);
    let container = pod["status"]["containerStatuses"][0]["containerID"]
        .as_str()
        .unwrap_or_default()
        .trim_start_matches("containerd://")
        .to_string();
    let killed = Command::new(node.dir.join("ctr"))
        .args(["tasks", "kill", "-s", "SIGKILL", &container])
        .output()
        .expect("running ctr");
    assert!(
        killed.status.success(),
        "ctr tasks kill: {}",
        text(&killed.stderr)
    );
    wait(
        "the crashed replica back and Ready",
        Duration::from_secs(120),
        || (node.ready() == 2).then_some(()),
    );
    std::thread::sleep(Duration::from_secs(3));
    churning.store(false, Ordering::Relaxed);
    let edits = churn.join().expect("the churn");
    let probes = prober.finish();

    let accepted: Vec<&Probe> = probes
        .iter()
        .filter(|p| (200..300).contains(&p.code))
        .collect();
    assert!(
        accepted.is_empty(),
        "writes the webhook must refuse were accepted: {accepted:?}"
    );
    let strict: Vec<&Probe> = probes
        .iter()
        .filter(|p| p.phase != "leader crashed")
        .filter(|p| {
            !(p.code == 422
                && p.message
                    .contains("validate-apps.app.rekon.dev\" denied the request"))
        })
        .collect();
    assert!(
        strict.is_empty(),
        "refused other than by the webhook itself: {strict:?}"
    );
    for phase in [
        "rolling restart",
        "scale to 1",
        "scale to 2",
        "leader deleted",
        "leader crashed",
    ] {
        let count = probes.iter().filter(|p| p.phase == phase).count();
        assert!(count >= 10, "only {count} probes during {phase}");
    }
    step(&format!(
        "{} probes refused, {edits} edits made",
        probes.len()
    ));
    wait(
        "every App edit reconciled",
        Duration::from_secs(180),
        || all_reconciled(node, "team-b"),
    );
}
