//! The real-server mode: the App operator as users run it — `rekon run`
//! with the `app` module, and the kube-rs peer — each a process of its own
//! against a real kube-apiserver + etcd started from `KUBEBUILDER_ASSETS`
//! (skipped, saying why, without them), one after the other on the same
//! cluster, each in a namespace of its own, through the same phases:
//!
//! - **create**: N Apps created at once; done when every App's status
//!   shows its generation and the operator has made no reconcile for 1 s.
//!   The operator's CPU (user + system, `/proc/<pid>/stat`) over its
//!   reconciles, and over the Apps.
//! - **update**: every App's `spec.replicas` changed; the same figures.
//! - **idle**: nothing to do for a while: the operator's CPU share and
//!   resident memory then.
//! - **delete**: every App deleted; done when none is left. The
//!   `CleanedUp` Events the operator recorded for them (one per App is
//!   right), and how long it took.
//!
//! Peak resident memory is the process's high-water mark (`VmHWM`) at the
//! end. The two take turns for `REKON_PIPELINE_BENCH_REAL_ROUNDS` rounds
//! (default 3), each with a fresh process and namespace; each side's figures
//! are its cheapest round's CPU and its lowest memory, as the in-memory mode
//! takes the lowest of each contender's rounds. Figures: `real_<who>_*` for
//! `wasm` (rekon) and `kubers`, and
//! `real_wasm_cpu_over_kubers_per_reconcile`, `..._per_app`,
//! `real_idle_rss_over_kubers`, `real_peak_rss_over_kubers`. Then the
//! sharded figures (`sharded`): three replicas sharing the module's Apps.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use figures::{best_of, per_reconcile, report};
use operator::{Operator, free_port, http_get};
use phases::{install_crd, phases};

/// Reconciles at once, in both operators (as users run them: the `app`
/// module's hint is overridden to match).
const CONCURRENCY: usize = 8;

#[path = "real/figures.rs"]
mod figures;
#[path = "real/operator.rs"]
mod operator;
#[path = "real/phases.rs"]
mod phases;
#[path = "real/sharded.rs"]
mod sharded;

/// Runs the real-server mode with `apps` Apps (the peer's executable at
/// `peer`), printing its figures; says why and returns when there are no
/// real binaries.
pub fn run(apps: usize, idle: Duration, peer: &str) {
    let assets = match rekon_envtest::assets() {
        Ok(assets) => assets,
        Err(why) => {
            eprintln!("the real-server mode is skipped: {why}");
            return;
        }
    };
    let cluster = rekon_envtest::RealCluster::start(
        &assets,
        &rekon_envtest::Options {
            controller_manager: false,
            // Events as a cluster keeps them; a Service per App; lists and
            // watches filtered by shard (the sharded figures).
            apiserver_args: vec![
                "--service-cluster-ip-range=10.96.0.0/16".into(),
                "--feature-gates=ShardedListAndWatch=true".into(),
            ],
            ..rekon_envtest::Options::default()
        },
    )
    .expect("a real kube-apiserver starts");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let kubeconfig = dir.path().join("kubeconfig");
    let kubeconfig_text = cluster.kubeconfig();
    std::fs::write(&kubeconfig, &kubeconfig_text).expect("writing the kubeconfig");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let client = runtime.block_on(crate::run::client_for(&kubeconfig_text));
    runtime.block_on(install_crd(&client));
    // The module compiled once, before: a warm cache, as a restarted host has.
    let cache = dir.path().join("cache");
    let rekon = crate::peer::build_rekon();
    let checked = Command::new(&rekon)
        .args(["check", "--no-baseline", rekon_test_artifacts::APP])
        .env("REKON_CACHE_DIR", &cache)
        .output()
        .expect("running rekon check");
    assert!(checked.status.success(), "rekon check app.wasm failed");
    let config = dir.path().join("rekon.yaml");
    std::fs::write(
        &config,
        format!("modules:\n  app:\n    concurrency: {CONCURRENCY}\n"),
    )
    .expect("writing the configuration");

    let start_rekon = || {
        let metrics_port = free_port();
        let child = Command::new(&rekon)
            .args(["run", rekon_test_artifacts::APP])
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .arg("--config")
            .arg(&config)
            .args(["--metrics-addr", &format!("127.0.0.1:{metrics_port}")])
            .env("REKON_CACHE_DIR", &cache)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("starting rekon run");
        let started = Instant::now();
        while !http_get(metrics_port, "/readyz").is_some_and(|r| r.contains(" 200 ")) {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "rekon run did not get ready"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Operator::Rekon {
            child,
            metrics_port,
        }
    };
    // Rounds in turn (rekon, then the peer, then rekon again...), each with
    // a fresh process and namespace: the machine's speed drifts between
    // runs, and alternating lets each side meet the same drift.
    let mut wasm = Vec::new();
    let mut kubers = Vec::new();
    for round in 0..rounds() {
        let operator = start_rekon();
        let namespace = format!("bench-wasm-{round}");
        wasm.push(runtime.block_on(phases(&client, operator, &namespace, apps, idle)));
        let operator = Operator::KubeRs(crate::peer::Peer::start(peer, &kubeconfig, CONCURRENCY));
        let namespace = format!("bench-kubers-{round}");
        kubers.push(runtime.block_on(phases(&client, operator, &namespace, apps, idle)));
        eprintln!(
            "real-server round {round}: CPU per reconcile {:.0} µs with rekon, {:.0} µs with kube-rs; idle RSS {:.1} and {:.1} MiB",
            per_reconcile(&wasm[round]) * 1e6,
            per_reconcile(&kubers[round]) * 1e6,
            wasm[round].idle_rss_mb,
            kubers[round].idle_rss_mb,
        );
    }
    if !wasm.is_empty() {
        report(apps, &best_of(&wasm, apps), &best_of(&kubers, apps));
    }
    runtime.block_on(sharded::run(&client, &rekon, dir.path(), apps));
    drop(cluster);
}

/// How many rounds each operator runs (`REKON_PIPELINE_BENCH_REAL_ROUNDS`,
/// default 3; 0 for the sharded figures only).
fn rounds() -> usize {
    std::env::var("REKON_PIPELINE_BENCH_REAL_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3)
}
