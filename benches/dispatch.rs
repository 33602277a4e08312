//! `cargo bench --bench dispatch`: what one reconcile costs in rekon, next
//! to the same reconciler compiled natively. Prints one JSON object per line:
//! `{"bench":"dispatch","metric":...,"value":...,"unit":...}`.
//!
//! `fresh_us_2k` is a reconcile of a 2 KB App on a fresh instance of
//! optimised code; `fresh_us_2k_baseline` the same on baseline code (what
//! a module not yet in the compile cache runs while its optimised build
//! compiles). `rss_per_module_kb`: resident memory per loaded module
//! (100 loads of the `app` guest from the cache).
//!
//! Run without `--bench` (as `cargo test --all-targets` does) it makes one
//! quick pass, to check it still works.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use rekon_host::contract::Request;
use rekon_host::runtime::{DispatchOptions, Tier};
use rekon_host::{Cluster, Engine, EngineConfig, Module};
use rekon_offline::MemoryCluster;
use serde_json::{Value, json};

fn emit(metric: &str, value: f64, unit: &str) {
    common::emit("dispatch", metric, value, unit);
}

/// An App of about `size` bytes of JSON (the bulk in an annotation, as
/// real objects carry last-applied configurations and the like).
fn app_object(size: usize) -> Value {
    let mut app = json!({
        "apiVersion": "demo.rekon.dev/v1",
        "kind": "App",
        "metadata": {
            "name": "web", "namespace": "default", "generation": 3,
            "labels": { "app.kubernetes.io/name": "web", "app.kubernetes.io/part-of": "shop",
                "team": "payments", "tier": "frontend" },
            "annotations": {},
        },
        "spec": { "image": "registry.example/shop/web:1.27.3", "replicas": 3, "port": 8080 },
    });
    let base = app.to_string().len();
    let padding = size.saturating_sub(base + 40);
    app["metadata"]["annotations"]["demo.rekon.dev/notes"] = json!("n".repeat(padding));
    app
}

/// A cluster holding the App, and the request of a steady-state reconcile:
/// the App was reconciled once (finalizer added, children applied, status
/// written), as it is on every later event or resync in production.
async fn steady(module: &Module, size: usize) -> (Arc<dyn Cluster>, Request) {
    let cluster = MemoryCluster::default();
    let stored = cluster.seed(app_object(size)).expect("seeding the App");
    let mut request = common::updated(&stored);
    let cluster: Arc<dyn Cluster> = Arc::new(cluster);
    module
        .reconcile(cluster.clone(), &request, DispatchOptions::default())
        .await
        .result
        .expect("the first reconcile of the App");
    let current = cluster.get(&request.target).await.expect("the App");
    request.object = Some(current);
    (cluster, request)
}

/// Mean microseconds per reconcile with a fresh instance.
async fn fresh_us(module: &Module, size: usize, iterations: usize) -> f64 {
    let (cluster, request) = steady(module, size).await;
    common::fresh_reconcile_us(module, &cluster, &request, iterations).await
}

/// Mean microseconds per reconcile on one reused instance.
async fn reused_us(module: &Module, size: usize, iterations: usize) -> f64 {
    let (cluster, request) = steady(module, size).await;
    module
        .reconcile_reusing_instance(cluster.clone(), &request, iterations / 10 + 1)
        .await
        .expect("the app guest reconciles");
    let elapsed = module
        .reconcile_reusing_instance(cluster, &request, iterations)
        .await
        .expect("the app guest reconciles");
    elapsed.as_secs_f64() * 1e6 / iterations as f64
}

/// Mean microseconds per reconcile of the same reconciler compiled natively,
/// through the SDK's test harness over the same in-memory store.
fn native_us(size: usize, iterations: usize) -> f64 {
    use rekon_sdk::{Gvk, ObjectRef};
    let cluster = rekon_sdk::testing::FakeCluster::new();
    cluster.set_recording(false);
    cluster
        .seed(app_object(size))
        .expect("seeding the App natively");
    cluster
        .reconcile::<app::AppReconciler>(Some("default"), "web")
        .expect("the app reconciler runs natively");
    // The same steady-state request as the wasm runs get.
    let kind = Gvk::new("demo.rekon.dev", "v1", "App");
    let object = cluster
        .object(&kind, Some("default"), "web")
        .expect("the App")
        .to_string();
    let request = || rekon_sdk::Request {
        target: ObjectRef::new(kind.clone(), Some("default"), "web"),
        object: Some(object.clone()),
        reason: rekon_sdk::Reason::Updated,
        attempt: 0,
    };
    for _ in 0..iterations / 10 + 1 {
        cluster
            .reconcile_request::<app::AppReconciler>(request())
            .expect("the app reconciler runs natively");
    }
    let started = Instant::now();
    for _ in 0..iterations {
        let _ = cluster.reconcile_request::<app::AppReconciler>(request());
    }
    started.elapsed().as_secs_f64() * 1e6 / iterations as f64
}

/// Fresh-instance reconciles per second on `threads` threads, each with its
/// own cluster (the store is not what is measured here).
fn throughput(module: &Module, threads: usize, duration: Duration) -> f64 {
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let module = module.clone();
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("a tokio runtime");
                runtime.block_on(async {
                    let (cluster, request) = steady(&module, 2 << 10).await;
                    let started = Instant::now();
                    let mut count = 0u64;
                    while started.elapsed() < duration {
                        let outcome = module
                            .reconcile(cluster.clone(), &request, DispatchOptions::default())
                            .await;
                        outcome.result.expect("the app guest reconciles");
                        count += 1;
                    }
                    count as f64 / started.elapsed().as_secs_f64()
                })
            })
        })
        .collect();
    handles
        .into_iter()
        .map(|h| h.join().expect("a benchmark thread"))
        .sum()
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (iterations, duration, copies) = if full {
        (20_000, Duration::from_secs(3), 100)
    } else {
        (20, Duration::from_millis(100), 3)
    };
    let bytes = std::fs::read(rekon_test_artifacts::APP).expect("the app guest is built");
    let cache = tempfile::tempdir().expect("a cache directory");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");

    runtime.block_on(async {
        let uncached = Engine::new(EngineConfig::default().cache_dir(None)).expect("an engine");
        let digest = rekon_host::runtime::digest(&bytes);
        let started = Instant::now();
        uncached
            .compile(&bytes, &digest)
            .expect("the app guest compiles");
        emit("compile_ms", started.elapsed().as_secs_f64() * 1e3, "ms");

        let config = EngineConfig::default().cache_dir(Some(cache.path().to_path_buf()));
        let engine = Engine::new(config).expect("an engine");
        Module::load_on(&engine, &bytes, Tier::Optimized)
            .await
            .expect("warming the cache");
        let started = Instant::now();
        let module = Module::load(&engine, &bytes)
            .await
            .expect("loading from the cache");
        emit(
            "cached_load_ms",
            started.elapsed().as_secs_f64() * 1e3,
            "ms",
        );

        assert_eq!(module.tier(), Tier::Optimized);
        let fresh_2k = fresh_us(&module, 2 << 10, iterations).await;
        // The same on baseline code (Winch), what a module runs while its
        // optimised build compiles (tiered loading).
        let baseline = Module::load_on(&engine, &bytes, Tier::Baseline)
            .await
            .expect("compiling with the baseline compiler");
        let fresh_2k_baseline = fresh_us(&baseline, 2 << 10, iterations).await;
        emit("fresh_us_2k_baseline", fresh_2k_baseline, "us");
        let reused_2k = reused_us(&module, 2 << 10, iterations).await;
        let native_2k = native_us(2 << 10, iterations);
        let fresh_20k = fresh_us(&module, 20 << 10, iterations / 4).await;
        let native_20k = native_us(20 << 10, iterations / 4);
        emit("fresh_us_2k", fresh_2k, "us");
        emit("reused_us_2k", reused_2k, "us");
        emit("native_us_2k", native_2k, "us");
        emit("fresh_us_20k", fresh_20k, "us");
        emit("native_us_20k", native_20k, "us");
        emit("fresh_over_native_2k", fresh_2k / native_2k, "ratio");
        emit("fresh_over_reused_2k", fresh_2k / reused_2k, "ratio");

        let one = throughput(&module, 1, duration);
        let two = throughput(&module, 2, duration);
        emit("throughput_1t_per_s", one, "1/s");
        emit("throughput_2t_per_s", two, "1/s");
        emit("throughput_2t_over_1t", two / one, "ratio");

        let before = common::rss_mb() * 1024.0;
        let mut loaded = Vec::with_capacity(copies);
        for _ in 0..copies {
            loaded.push(Module::load(&engine, &bytes).await.expect("loading a copy"));
        }
        let after = common::rss_mb() * 1024.0;
        emit("rss_per_module_kb", (after - before) / copies as f64, "KiB");
        drop(loaded);
    });
}
