//! Running rekon for real: leader election between replicas, metrics and
//! health endpoints — the real `rekon run` binary against the in-memory API
//! server. The JSON logs and an idle host's CPU are tested here, the rest
//! in `operations/`.

// Tests may unwrap (tokio tests too): a panic is a failed test with its message.
#![allow(clippy::unwrap_used)]

mod support;

#[path = "operations/leader.rs"]
mod leader;

#[path = "operations/telemetry.rs"]
mod telemetry;

#[path = "operations/deploy.rs"]
mod deploy;

#[path = "operations/scale_out.rs"]
mod scale_out;

#[path = "operations/sharding.rs"]
mod sharding;

use std::time::Duration;

use support::{Env, app, path, reconciled};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_logs_carry_the_reconcile_span_without_duplicate_keys() {
    let mut env = Env::new().await;
    env.apply_file(&path("guests/app/manifests/crd.yaml"));
    env.run(&[rekon_test_artifacts::APP], &["--log-format", "json"]);
    env.apply(app("logged", 1));
    reconciled(&env, "logged").await;
    let log = env
        .wait("a reconcile logged", || {
            let log = env.log();
            log.contains("\"reconciled\"").then_some(log)
        })
        .await;
    let mut reconciles = 0;
    for line in log.lines() {
        let record: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        if record["span"]["name"] != "reconcile" {
            continue;
        }
        reconciles += 1;
        assert_eq!(record["span"]["module"], "app", "{line}");
        assert_eq!(record["span"]["object"], "logged", "{line}");
        assert_eq!(record["span"]["namespace"], "default", "{line}");
        // Every span object (the current one and the list) has one `name`.
        for span in line.split("{").skip(1) {
            let span = span.split('}').next().unwrap_or_default();
            assert!(
                span.matches("\"name\":").count() <= 1,
                "a duplicate key in {line}"
            );
        }
    }
    assert!(reconciles > 0, "no reconcile span in the log:\n{log}");
}

/// CPU time (user + system) a process has used so far.
fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("the process runs");
    // Fields after the command name (which is in parentheses).
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    let output = std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .expect("getconf");
    let per_second: u64 = String::from_utf8_lossy(&output.stdout)
        .trim()
        .parse()
        .unwrap_or(100);
    Duration::from_secs_f64(ticks as f64 / per_second as f64)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_host_uses_almost_no_cpu() {
    let mut env = Env::new().await;
    env.apply_file(&path("guests/app/manifests/crd.yaml"));
    let host = env.run(&[rekon_test_artifacts::APP], &[]);
    env.apply(app("idle", 1));
    reconciled(&env, "idle").await;
    // Started on a cold cache, the module served on baseline code; its
    // optimised build compiles behind it. Idle means that is done too.
    env.wait_long("the optimised build", || {
        env.log()
            .contains("module runs optimised code now")
            .then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let pid = env.hosts[host].id();
    let before = cpu_time(pid);
    tokio::time::sleep(Duration::from_secs(2)).await;
    let used = cpu_time(pid) - before;
    // A controller that polls instead of waiting burns a whole core.
    assert!(
        used < Duration::from_millis(400),
        "the idle host used {used:?} of CPU in 2 s"
    );
    // The epoch ticker only ticks while a guest runs: idle, it sleeps.
    let before = epoch_wakeups(pid);
    tokio::time::sleep(Duration::from_secs(1)).await;
    let idle = epoch_wakeups(pid) - before;
    assert!(idle <= 2, "the idle epoch thread woke {idle} times in 1 s");
    // And it ticks again when one does: a guest that loops is stopped.
    env.apply(serde_json::json!({
        "apiVersion": "demo.rekon.dev/v1", "kind": "App",
        "metadata": {"name": "again", "namespace": "default"},
        "spec": {"image": "nginx", "replicas": 1},
    }));
    reconciled(&env, "again").await;
    assert!(
        epoch_wakeups(pid) > before + idle,
        "the ticker ran for the reconcile"
    );
}

/// Context switches of the process's `rekon-epoch` thread so far.
fn epoch_wakeups(pid: u32) -> u64 {
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).expect("the process runs") {
        let dir = task.unwrap().path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if comm.trim() == "rekon-epoch" {
            let status = std::fs::read_to_string(dir.join("status")).unwrap_or_default();
            return status
                .lines()
                .filter(|l| l.contains("ctxt_switches"))
                .filter_map(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
                .sum();
        }
    }
    panic!("no rekon-epoch thread in process {pid}");
}
