//! One pipeline run, measured: a host (the `app` module, the same
//! reconciler compiled natively, or the kube-rs peer) against a fresh
//! server process, until every App is reconciled, then through paced edits
//! and an idle phase.

use std::time::{Duration, Instant};

use rekon_host::{ControllerConfig, Host};
use serde_json::json;

use crate::process::{ServerProcess, cpu_seconds};
use crate::server::app_name;
use crate::{CONCURRENCY, PEER_ENV, Sizes, common, native, peer};

/// A kube client for the cluster of `kubeconfig` (its text).
pub async fn client_for(kubeconfig: &str) -> kube::Client {
    let kubeconfig = kube::config::Kubeconfig::from_yaml(kubeconfig).expect("a valid kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(
        kubeconfig,
        &kube::config::KubeConfigOptions::default(),
    )
    .await
    .expect("a client configuration");
    kube::Client::try_from(config).expect("a kube client")
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Logic {
    Wasm,
    /// The same `app` built for contract 0.1.0: no predicates, every
    /// change of an App queues it.
    WasmAnyChange,
    /// `app` serving, with a second copy of it as its shadow (every
    /// reconcile run again, its writes dry runs, compared).
    WasmShadow,
    Native,
    /// The peer: a kube-rs `Controller`, in a process of its own ([`peer`]).
    KubeRs,
}

/// What runs the reconciles of a pipeline run: rekon's host, or the peer.
pub enum Running {
    Host(Box<Host>),
    KubeRs(std::cell::RefCell<peer::Peer>),
}

impl Running {
    /// Reconciles started so far (since the last reset, for the host).
    fn reconciles(&self) -> u64 {
        match self {
            Running::Host(host) => host.stats().queue_latency_count(),
            Running::KubeRs(peer) => peer.borrow_mut().reconciles(),
        }
    }

    /// A queue latency quantile in ms (the host's; NaN for the peer).
    fn latency_ms(&self, q: f64) -> f64 {
        match self {
            Running::Host(host) => host
                .stats()
                .queue_latency_quantile(q)
                .map_or(f64::NAN, |d| d.as_secs_f64() * 1e3),
            Running::KubeRs(..) => f64::NAN,
        }
    }

    /// The process that runs the reconciles: this one, or the peer's.
    fn pid(&self) -> String {
        match self {
            Running::Host(_) => "self".to_string(),
            Running::KubeRs(peer) => peer.borrow().pid(),
        }
    }
}

/// One pipeline run, in this process, against a fresh server process;
/// prints its result as one JSON object.
pub fn pipeline(logic: Logic, sizes: &Sizes) {
    let server = ServerProcess::start("serve-apps", sizes.apps);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let cache = tempfile::tempdir().expect("a cache directory");
    let client = runtime.block_on(client_for(&server.kubeconfig));
    let server_pid = server.child.id().to_string();
    if logic == Logic::KubeRs {
        // The peer's process is measured whole, from its start.
        let server_cpu = cpu_seconds(&server_pid);
        let path = std::env::var(PEER_ENV).expect("the peer's path");
        let peer = peer::Peer::start(&path, &server.kubeconfig_path, CONCURRENCY);
        let running = Running::KubeRs(std::cell::RefCell::new(peer));
        finish_run(
            &runtime, server, running, client, sizes, 0.0, 0.0, server_cpu,
        );
        return;
    }
    let builder = Host::builder()
        .client(client.clone())
        .controller_config(ControllerConfig::default().concurrency(CONCURRENCY))
        .engine_config(common::steady_state(cache.path()));
    let builder = match logic {
        Logic::Wasm => builder.module(
            "app.wasm",
            std::fs::read(rekon_test_artifacts::APP).expect("the app guest is built"),
        ),
        Logic::WasmAnyChange => builder.module(
            "app.wasm",
            std::fs::read(rekon_test_artifacts::APP_V0_1).expect("the 0.1.0 app is kept"),
        ),
        Logic::WasmShadow => {
            let app = std::fs::read(rekon_test_artifacts::APP).expect("the app guest is built");
            let config: rekon_host::HostConfig =
                serde_yaml_ng::from_str("modules:\n  app:\n    shadow: app-shadow.wasm\n")
                    .expect("a configuration");
            builder
                .config(config)
                .module("app.wasm", app.clone())
                .module("app-shadow.wasm", app)
        }
        Logic::Native => builder.native(native::app()),
        Logic::KubeRs => unreachable!("the peer runs without a host"),
    };
    let baseline = common::rss_mb();
    let host = runtime.block_on(builder.start()).expect("the host starts");
    assert!(host.failures().is_empty(), "{:?}", host.failures());
    let (host_cpu, server_cpu) = (cpu_seconds("self"), cpu_seconds(&server_pid));
    finish_run(
        &runtime,
        server,
        Running::Host(Box::new(host)),
        client,
        sizes,
        baseline,
        host_cpu,
        server_cpu,
    );
}

/// Measures a started pipeline run until every App is reconciled, then
/// through paced edits and an idle phase; prints the result.
#[allow(clippy::too_many_arguments)]
pub fn finish_run(
    runtime: &tokio::runtime::Runtime,
    mut server: ServerProcess,
    running: Running,
    client: kube::Client,
    sizes: &Sizes,
    baseline: f64,
    host_cpu: f64,
    server_cpu: f64,
) {
    let server_pid = server.child.id().to_string();
    let started = Instant::now();
    server.wait_observed(sizes.apps);
    let seconds = started.elapsed().as_secs_f64();
    let pid = running.pid();
    let rss = common::rss_mb_of(&pid) - baseline;
    let host_cpu = cpu_seconds(&pid) - host_cpu;
    let server_cpu = cpu_seconds(&server_pid) - server_cpu;
    assert!(
        started.elapsed() < sizes.deadline,
        "the pipeline took longer than {:?}",
        sizes.deadline
    );
    let ms = |q| running.latency_ms(q);
    let (p50, p99) = (ms(0.5), ms(0.99));
    let reconciles = running.reconciles();
    // A shadow's reconciles done by then, and the requests it skipped.
    let (shadowed, shadow_skipped) = match &running {
        Running::Host(host) => {
            let text = host.metrics().encode();
            (
                counter(&text, "rekon_shadow_reconciles_total"),
                counter(&text, "rekon_shadow_skipped_total"),
            )
        }
        Running::KubeRs(..) => (0.0, 0.0),
    };

    // Paced: edits at 100 per second once the backlog has drained (the
    // follow-up reconciles of every App included: no reconcile for 1 s).
    let before_edits = runtime.block_on(async {
        let mut seen = running.reconciles();
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let now = running.reconciles();
            if now == seen {
                break;
            }
            seen = now;
        }
        let before_edits = running.reconciles();
        if let Running::Host(host) = &running {
            host.stats().reset();
        }
        let apps: kube::Api<kube::api::DynamicObject> = kube::Api::namespaced_with(
            client,
            "default",
            &kube::api::ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk(
                "demo.rekon.dev",
                "v1",
                "App",
            )),
        );
        let mut tick = tokio::time::interval(Duration::from_millis(10));
        for index in 0..sizes.paced_edits {
            tick.tick().await;
            let patch = json!({ "spec": { "replicas": 3 } });
            apps.patch(
                &app_name(index),
                &kube::api::PatchParams::default(),
                &kube::api::Patch::Merge(&patch),
            )
            .await
            .expect("editing an App");
        }
        // Until the edits' follow-ups are done too.
        let mut seen = running.reconciles();
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let now = running.reconciles();
            if now == seen {
                break;
            }
            seen = now;
        }
        before_edits
    });
    let (paced_p50, paced_p99) = (ms(0.5), ms(0.99));
    let paced_reconciles = match &running {
        Running::Host(_) => running.reconciles(),
        Running::KubeRs(..) => running.reconciles() - before_edits,
    };
    // Idle: every App reconciled, nothing to do. What the host process
    // spends (CPU, resident memory) waiting.
    let idle_cpu = cpu_seconds(&pid);
    std::thread::sleep(sizes.idle);
    let idle_cpu_percent = (cpu_seconds(&pid) - idle_cpu) / sizes.idle.as_secs_f64() * 100.0;
    let idle_rss = common::rss_mb_of(&pid);
    println!(
        "{}",
        json!({ "seconds": seconds, "rss_mb": rss, "p50_ms": p50, "p99_ms": p99,
            "reconciles": reconciles, "paced_p50_ms": paced_p50, "paced_p99_ms": paced_p99,
            "paced_reconciles": paced_reconciles,
            "host_cpu_s": host_cpu, "server_cpu_s": server_cpu,
            "shadowed": shadowed, "shadow_skipped": shadow_skipped,
            "idle_cpu_percent": idle_cpu_percent, "idle_rss_mb": idle_rss })
    );
    match running {
        Running::Host(host) => runtime.block_on(host.shutdown()),
        Running::KubeRs(peer) => peer.into_inner().stop(),
    }
    server.stop();
}

/// The sum of a counter's series in the metrics text.
pub fn counter(text: &str, name: &str) -> f64 {
    text.lines()
        .filter(|line| line.starts_with(name))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}
