//! What the benchmarks share: the allocator of the `rekon` binary, the
//! JSON line each figure is printed as, the process's resident memory, the
//! engine settings of a steady-state measure, and the timing loop of
//! reconciles on fresh instances.

#![allow(dead_code)]

use std::sync::Arc;
use std::time::Instant;

use rekon_host::contract::Request;
use rekon_host::runtime::DispatchOptions;
use rekon_host::{Cluster, EngineConfig, Module};

/// The benchmarks measure what the `rekon` binary does: with its allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The engine settings of a steady-state measure: optimised code from the
/// first load (no tiers), compiled into `cache`.
pub fn steady_state(cache: impl Into<std::path::PathBuf>) -> EngineConfig {
    EngineConfig::default()
        .baseline(false)
        .cache_dir(Some(cache.into()))
}

/// Prints one figure as a JSON line: `{"bench", "metric", "value", "unit"}`.
pub fn emit(bench: &str, metric: &str, value: f64, unit: &str) {
    println!(
        "{}",
        serde_json::json!({ "bench": bench, "metric": metric,
            "value": (value * 1000.0).round() / 1000.0, "unit": unit })
    );
}

/// Resident memory of this process, MiB (`/proc/self/statm`).
pub fn rss_mb() -> f64 {
    rss_mb_of("self")
}

/// Resident memory of process `pid` (or `self`), MiB (`/proc/<pid>/statm`).
pub fn rss_mb_of(pid: &str) -> f64 {
    let statm = std::fs::read_to_string(format!("/proc/{pid}/statm")).unwrap_or_default();
    let pages: f64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0.0);
    pages * 4096.0 / (1024.0 * 1024.0)
}

/// Mean microseconds per reconcile of `request`, a fresh instance each
/// time, after a tenth as many warm-up runs (which must succeed).
pub async fn fresh_reconcile_us(
    module: &Module,
    cluster: &Arc<dyn Cluster>,
    request: &Request,
    iterations: usize,
) -> f64 {
    for _ in 0..iterations / 10 + 1 {
        let outcome = module
            .reconcile(cluster.clone(), request, DispatchOptions::default())
            .await;
        outcome.result.expect("the guest reconciles");
    }
    let started = Instant::now();
    for _ in 0..iterations {
        let _ = module
            .reconcile(cluster.clone(), request, DispatchOptions::default())
            .await;
    }
    started.elapsed().as_secs_f64() * 1e6 / iterations as f64
}

/// The request of an update of `stored` (an object as a cluster holds it).
pub fn updated(stored: &serde_json::Value) -> Request {
    Request {
        target: rekon_host::names::object_ref_of(stored).expect("the object has a kind and name"),
        object: Some(stored.to_string()),
        reason: rekon_host::contract::Reason::Updated,
        attempt: 0,
    }
}
