//! `cargo bench --bench languages`: the same reconciler (ConfigMap sync)
//! written in Rust, JavaScript (componentize-js) and Python
//! (componentize-py), side by side. Prints one JSON object per line:
//! `{"bench":"languages","metric":...,"value":...,"unit":...}`, with the
//! metrics `compile_ms_<lang>` (compiling the component, no cache),
//! `cached_load_ms_<lang>` (loading it from the compile cache) and
//! `reconcile_us_<lang>` (one steady-state reconcile of a source ConfigMap
//! with two target namespaces, fresh instance, through
//! `Module::reconcile` against a `MemoryCluster`: four cached reads, two
//! server-side applies, one list), plus `noop_us_<lang>` (a ConfigMap that
//! is not a source: a fresh instance, the JSON parsed, no host call — what
//! the language's runtime costs on its own) and `size_kb_<lang>`.
//!
//! The JavaScript and Python guests are built by `make guests-other`.
//! Run without `--bench` (as `cargo test --all-targets` does) it makes one
//! quick pass without the uncached compiles, to check it still works.

mod common;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use rekon_host::contract::{Action, Request};
use rekon_host::runtime::DispatchOptions;
use rekon_host::{Cluster, Engine, EngineConfig, Module};
use rekon_offline::MemoryCluster;
use serde_json::{Value, json};

fn emit(metric: &str, value: f64, unit: &str) {
    common::emit("languages", metric, value, unit);
}

/// A cluster with two target namespaces and a source ConfigMap (about
/// 1 KB of data) synced once, and the request of a steady-state reconcile
/// of the source: finalizer present, copies up to date, as on every later
/// event or resync in production.
async fn steady(module: &Module) -> (Arc<dyn Cluster>, Request) {
    let cluster = MemoryCluster::default();
    for ns in ["team-a", "team-b"] {
        cluster
            .seed(json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": ns } }))
            .expect("seeding a Namespace");
    }
    let data: serde_json::Map<String, Value> = (0..16)
        .map(|i| (format!("key-{i:02}"), json!("v".repeat(48))))
        .collect();
    let stored = cluster
        .seed(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {
                "name": "shared", "namespace": "default",
                "labels": { "rekon.dev/sync": "true" },
                "annotations": { "rekon.dev/sync-to": "team-a,team-b" },
            },
            "data": data,
        }))
        .expect("seeding the source");
    let mut request = common::updated(&stored);
    let cluster: Arc<dyn Cluster> = Arc::new(cluster);
    let first = module
        .reconcile(cluster.clone(), &request, DispatchOptions::default())
        .await;
    let action = first.result.expect("the first reconcile of the source");
    assert!(matches!(action, Action::Done), "{action:?}");
    request.object = Some(cluster.get(&request.target).await.expect("the source"));
    (cluster, request)
}

/// Mean microseconds per steady-state reconcile, fresh instance each time.
async fn reconcile_us(module: &Module, iterations: usize) -> f64 {
    let (cluster, request) = steady(module).await;
    common::fresh_reconcile_us(module, &cluster, &request, iterations).await
}

/// Mean microseconds per reconcile of a ConfigMap that is not a source
/// (no host call), fresh instance each time.
async fn noop_us(module: &Module, iterations: usize) -> f64 {
    let cluster = MemoryCluster::default();
    let stored = cluster
        .seed(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": { "name": "plain", "namespace": "default" },
            "data": { "region": "eu-west-1" },
        }))
        .expect("seeding a ConfigMap");
    let request = common::updated(&stored);
    let cluster: Arc<dyn Cluster> = Arc::new(cluster);
    let outcome = module
        .reconcile(cluster.clone(), &request, DispatchOptions::default())
        .await;
    assert!(outcome.host_calls.is_empty(), "{:?}", outcome.host_calls);
    common::fresh_reconcile_us(module, &cluster, &request, iterations).await
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let iterations = if full { 2_000 } else { 3 };
    let guests = [
        ("rust", rekon_test_artifacts::CONFIGMAP_SYNC),
        (
            "js",
            rekon_test_artifacts::built(rekon_test_artifacts::CONFIGMAP_SYNC_JS),
        ),
        (
            "python",
            rekon_test_artifacts::built(rekon_test_artifacts::CONFIGMAP_SYNC_PY),
        ),
    ];
    // The compile cache the tests share: a component compiled by a test
    // run is not compiled again here.
    let cache = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../target/rekon-test-cache"
    ));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");

    runtime.block_on(async {
        let uncached = Engine::new(EngineConfig::default().cache_dir(None)).expect("an engine");
        let engine = Engine::new(common::steady_state(cache)).expect("an engine");
        for (lang, path) in guests {
            let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
            emit(
                &format!("size_kb_{lang}"),
                bytes.len() as f64 / 1024.0,
                "KiB",
            );
            if full {
                let digest = rekon_host::runtime::digest(&bytes);
                let started = Instant::now();
                uncached
                    .compile(&bytes, &digest)
                    .unwrap_or_else(|e| panic!("{lang}: compiling: {e:#}"));
                emit(
                    &format!("compile_ms_{lang}"),
                    started.elapsed().as_secs_f64() * 1e3,
                    "ms",
                );
            }
            Module::load(&engine, &bytes)
                .await
                .unwrap_or_else(|e| panic!("{lang}: warming the cache: {e}"));
            let started = Instant::now();
            let module = Module::load(&engine, &bytes)
                .await
                .unwrap_or_else(|e| panic!("{lang}: loading from the cache: {e}"));
            emit(
                &format!("cached_load_ms_{lang}"),
                started.elapsed().as_secs_f64() * 1e3,
                "ms",
            );
            emit(
                &format!("reconcile_us_{lang}"),
                reconcile_us(&module, iterations).await,
                "us",
            );
            emit(
                &format!("noop_us_{lang}"),
                noop_us(&module, iterations).await,
                "us",
            );
        }
    });
}
