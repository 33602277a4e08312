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
//! `real_idle_rss_over_kubers`, `real_peak_rss_over_kubers`.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use super::{cpu_seconds, emit, observed};

/// Reconciles at once, in both operators (as users run them: the `app`
/// module's hint is overridden to match).
const CONCURRENCY: usize = 8;

/// What one operator did in each phase.
#[derive(Default)]
struct Figures {
    create_cpu_s: f64,
    create_reconciles: f64,
    update_cpu_s: f64,
    update_reconciles: f64,
    idle_cpu_percent: f64,
    idle_rss_mb: f64,
    peak_rss_mb: f64,
    delete_s: f64,
    cleaned_up_events: f64,
}

/// A running operator: its process and how to read its reconciles.
enum Operator {
    Rekon { child: Child, metrics_port: u16 },
    KubeRs(super::peer::Peer),
}

impl Operator {
    fn pid(&self) -> String {
        match self {
            Operator::Rekon { child, .. } => child.id().to_string(),
            Operator::KubeRs(peer) => peer.pid(),
        }
    }

    fn reconciles(&mut self) -> f64 {
        match self {
            Operator::Rekon { metrics_port, .. } => {
                let text = http_get(*metrics_port, "/metrics").unwrap_or_default();
                super::counter(&text, "rekon_reconciles_total{")
            }
            Operator::KubeRs(peer) => peer.reconciles() as f64,
        }
    }

    fn stop(self) {
        match self {
            Operator::Rekon { mut child, .. } => {
                let _ = Command::new("kill")
                    .args(["-TERM", &child.id().to_string()])
                    .status();
                let _ = child.wait();
            }
            Operator::KubeRs(peer) => peer.stop(),
        }
    }
}

fn http_get(port: u16, path: &str) -> Option<String> {
    use std::io::{Read as _, Write as _};
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n").ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    Some(text)
}

/// A free port on 127.0.0.1.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// `1`: print where each operator's resident memory is when idle.
const SMAPS_ENV: &str = "REKON_PIPELINE_BENCH_SMAPS";

/// The mappings of process `pid` holding the most resident memory, one
/// per line: KiB, and what is mapped (anonymous memory grouped).
fn smaps(pid: &str) -> String {
    let text = std::fs::read_to_string(format!("/proc/{pid}/smaps")).unwrap_or_default();
    let mut by: std::collections::BTreeMap<String, u64> = Default::default();
    let mut current = String::new();
    for line in text.lines() {
        let mut fields = line.split_whitespace();
        let first = fields.next().unwrap_or_default();
        if first.contains('-') && !first.ends_with(':') {
            let rest: Vec<&str> = line.split_whitespace().collect();
            let what = rest.get(5).map_or("[anonymous]", |p| *p);
            current = format!("{what} ({})", rest.get(1).unwrap_or(&""));
        } else if first == "Rss:" {
            let kb: u64 = fields.next().and_then(|k| k.parse().ok()).unwrap_or(0);
            *by.entry(current.clone()).or_default() += kb;
        }
    }
    let mut rows: Vec<(String, u64)> = by.into_iter().collect();
    rows.sort_by_key(|row| std::cmp::Reverse(row.1));
    rows.iter()
        .take(12)
        .map(|(what, kb)| format!("{kb:8} KiB  {what}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Peak resident memory of process `pid`, MiB (`VmHWM`).
fn peak_rss_mb(pid: &str) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

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
            // Events as a cluster keeps them; a Service per App.
            apiserver_args: vec!["--service-cluster-ip-range=10.96.0.0/16".into()],
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
    let client = runtime.block_on(super::client_for(&kubeconfig_text));
    runtime.block_on(install_crd(&client));
    // The module compiled once, before: a warm cache, as a restarted host has.
    let cache = dir.path().join("cache");
    let rekon = super::peer::build_rekon();
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
        let operator = Operator::KubeRs(super::peer::Peer::start(peer, &kubeconfig, CONCURRENCY));
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
    report(apps, &best_of(&wasm, apps), &best_of(&kubers, apps));
    drop(cluster);
}

/// How many rounds each operator runs (`REKON_PIPELINE_BENCH_REAL_ROUNDS`,
/// default 3).
fn rounds() -> usize {
    std::env::var("REKON_PIPELINE_BENCH_REAL_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .filter(|r| *r > 0)
        .unwrap_or(3)
}

/// An operator's CPU seconds per reconcile over the create and update
/// phases.
fn per_reconcile(f: &Figures) -> f64 {
    (f.create_cpu_s + f.update_cpu_s) / (f.create_reconciles + f.update_reconciles)
}

/// One operator's figures over its rounds, as the in-memory mode takes
/// them: its cheapest round's CPU figures and its lowest memory (what the
/// operator costs when the machine does not slow it down), its highest idle
/// CPU and slowest deletion, and the Event count furthest from one per App.
fn best_of(rounds: &[Figures], apps: usize) -> Figures {
    let cheapest = rounds
        .iter()
        .min_by(|a, b| per_reconcile(a).total_cmp(&per_reconcile(b)))
        .expect("at least one round");
    let lowest = |f: fn(&Figures) -> f64| rounds.iter().map(f).fold(f64::INFINITY, f64::min);
    let highest = |f: fn(&Figures) -> f64| rounds.iter().map(f).fold(0.0, f64::max);
    Figures {
        create_cpu_s: cheapest.create_cpu_s,
        create_reconciles: cheapest.create_reconciles,
        update_cpu_s: cheapest.update_cpu_s,
        update_reconciles: cheapest.update_reconciles,
        idle_cpu_percent: highest(|f| f.idle_cpu_percent),
        idle_rss_mb: lowest(|f| f.idle_rss_mb),
        peak_rss_mb: lowest(|f| f.peak_rss_mb),
        delete_s: highest(|f| f.delete_s),
        cleaned_up_events: rounds
            .iter()
            .map(|f| f.cleaned_up_events)
            .max_by(|a, b| (a - apps as f64).abs().total_cmp(&(b - apps as f64).abs()))
            .unwrap_or(f64::NAN),
    }
}

/// Prints the figures of both operators and their ratios.
fn report(apps: usize, wasm: &Figures, kubers: &Figures) {
    let n = apps as f64;
    emit("real_apps", n, "count");
    emit("real_concurrency", CONCURRENCY as f64, "count");
    for (who, f) in [("wasm", wasm), ("kubers", kubers)] {
        let us = |cpu: f64, count: f64| cpu * 1e6 / count;
        emit(
            &format!("real_{who}_create_cpu_us_per_reconcile"),
            us(f.create_cpu_s, f.create_reconciles),
            "us",
        );
        emit(
            &format!("real_{who}_update_cpu_us_per_reconcile"),
            us(f.update_cpu_s, f.update_reconciles),
            "us",
        );
        emit(
            &format!("real_{who}_create_reconciles_per_app"),
            f.create_reconciles / n,
            "count",
        );
        emit(
            &format!("real_{who}_update_reconciles_per_app"),
            f.update_reconciles / n,
            "count",
        );
        emit(
            &format!("real_{who}_cpu_us_per_app"),
            us(f.create_cpu_s + f.update_cpu_s, n),
            "us",
        );
        emit(
            &format!("real_{who}_idle_cpu_percent"),
            f.idle_cpu_percent,
            "%",
        );
        emit(&format!("real_{who}_idle_rss_mb"), f.idle_rss_mb, "MiB");
        emit(&format!("real_{who}_peak_rss_mb"), f.peak_rss_mb, "MiB");
        emit(&format!("real_{who}_delete_seconds"), f.delete_s, "s");
        emit(
            &format!("real_{who}_cleaned_up_events"),
            f.cleaned_up_events,
            "count",
        );
    }
    let per_app = |f: &Figures| f.create_cpu_s + f.update_cpu_s;
    emit(
        "real_wasm_cpu_over_kubers_per_reconcile",
        per_reconcile(wasm) / per_reconcile(kubers),
        "ratio",
    );
    emit(
        "real_wasm_cpu_over_kubers_per_app",
        per_app(wasm) / per_app(kubers),
        "ratio",
    );
    emit(
        "real_idle_rss_over_kubers",
        wasm.idle_rss_mb / kubers.idle_rss_mb,
        "ratio",
    );
    emit(
        "real_peak_rss_over_kubers",
        wasm.peak_rss_mb / kubers.peak_rss_mb,
        "ratio",
    );
}

async fn install_crd(client: &kube::Client) {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../guests/app/manifests/crd.yaml"
    ))
    .expect("the App CRD");
    let crd: Value = serde_yaml::from_str(&text).expect("the App CRD is YAML");
    let crds: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &kube::api::ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
        )),
    );
    let object: DynamicObject = serde_json::from_value(crd).expect("a CRD object");
    crds.create(&PostParams::default(), &object)
        .await
        .expect("creating the App CRD");
    // Until the server serves Apps.
    let apps = apps_api(client, "default");
    let started = Instant::now();
    while apps.list(&ListParams::default()).await.is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "Apps are not served"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn apps_api(client: &kube::Client, namespace: &str) -> Api<DynamicObject> {
    Api::namespaced_with(
        client.clone(),
        namespace,
        &kube::api::ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk(
            "demo.rekon.dev",
            "v1",
            "App",
        )),
    )
}

/// Waits until `done` holds for the Apps of `namespace` and `operator` has
/// made no reconcile for a second; returns when `done` first held.
async fn settle(
    apps: &Api<DynamicObject>,
    operator: &mut Operator,
    what: &str,
    done: impl Fn(&[Value]) -> bool,
) -> Instant {
    let started = Instant::now();
    loop {
        let listed = apps.list(&ListParams::default()).await.map(|l| {
            l.items
                .into_iter()
                .map(|o| serde_json::to_value(o).unwrap_or_default())
                .collect::<Vec<_>>()
        });
        if listed.is_ok_and(|items| done(&items)) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "the operator did not finish {what}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let done_at = Instant::now();
    let mut seen = operator.reconciles();
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let now = operator.reconciles();
        if now == seen {
            return done_at;
        }
        seen = now;
    }
}

/// The phases with one operator, in `namespace`; stops it.
async fn phases(
    client: &kube::Client,
    mut operator: Operator,
    namespace: &str,
    count: usize,
    idle: Duration,
) -> Figures {
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    let ns: k8s_openapi::api::core::v1::Namespace =
        serde_json::from_value(json!({"metadata": {"name": namespace}})).expect("a Namespace");
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .expect("creating the namespace");
    let apps = apps_api(client, namespace);
    let pid = operator.pid();
    let mut figures = Figures::default();
    let name = |i: usize| format!("app-{i:05}");

    // Create.
    let (cpu, reconciles) = (cpu_seconds(&pid), operator.reconciles());
    let created = futures::stream::iter(0..count).for_each_concurrent(16, |i| {
        let apps = apps.clone();
        async move {
            let app: DynamicObject = serde_json::from_value(json!({
                "apiVersion": "demo.rekon.dev/v1", "kind": "App",
                "metadata": {"name": name(i)},
                "spec": {"image": "registry.example/shop/web:1.27.3", "replicas": 2, "port": 8080},
            }))
            .expect("an App");
            apps.create(&PostParams::default(), &app)
                .await
                .expect("creating an App");
        }
    });
    created.await;
    settle(&apps, &mut operator, "creating", |items| {
        items.len() == count && items.iter().all(observed)
    })
    .await;
    figures.create_cpu_s = cpu_seconds(&pid) - cpu;
    figures.create_reconciles = operator.reconciles() - reconciles;

    // Update.
    let (cpu, reconciles) = (cpu_seconds(&pid), operator.reconciles());
    futures::stream::iter(0..count)
        .for_each_concurrent(16, |i| {
            let apps = apps.clone();
            async move {
                apps.patch(
                    &name(i),
                    &PatchParams::default(),
                    &Patch::Merge(json!({"spec": {"replicas": 3}})),
                )
                .await
                .expect("editing an App");
            }
        })
        .await;
    settle(&apps, &mut operator, "updating", |items| {
        items
            .iter()
            .all(|a| a["metadata"]["generation"] == 2 && observed(a))
    })
    .await;
    figures.update_cpu_s = cpu_seconds(&pid) - cpu;
    figures.update_reconciles = operator.reconciles() - reconciles;

    // Idle.
    let cpu = cpu_seconds(&pid);
    tokio::time::sleep(idle).await;
    figures.idle_cpu_percent = (cpu_seconds(&pid) - cpu) / idle.as_secs_f64() * 100.0;
    figures.idle_rss_mb = super::common::rss_mb_of(&pid);
    if std::env::var(SMAPS_ENV).is_ok_and(|v| v == "1") {
        eprintln!(
            "{namespace}: resident memory when idle, by mapping\n{}",
            smaps(&pid)
        );
    }

    // Delete.
    let started = Instant::now();
    apps.delete_collection(&DeleteParams::default(), &ListParams::default())
        .await
        .expect("deleting the Apps");
    let gone = settle(&apps, &mut operator, "deleting", <[Value]>::is_empty).await;
    figures.delete_s = gone.duration_since(started).as_secs_f64();
    let events: Api<k8s_openapi::api::events::v1::Event> =
        Api::namespaced(client.clone(), namespace);
    figures.cleaned_up_events = events
        .list(&ListParams::default())
        .await
        .expect("listing Events")
        .items
        .iter()
        .filter(|e| e.reason.as_deref() == Some("CleanedUp"))
        .count() as f64;
    figures.peak_rss_mb = peak_rss_mb(&pid);
    operator.stop();
    figures
}
