//! The parent process: runs each measuring process in turn (wasm, native,
//! the kube-rs peer, shadowing, predicates, the priority queue, the cache,
//! then the real-server mode) and prints the figures and their ratios.

use serde_json::Value;

use crate::process::spawn_role;
use crate::{CONCURRENCY, FULL_ENV, PEER_ENV, REAL_ONLY_ENV, emit, peer, real, sizes};

/// Runs one measuring process and returns the JSON object it printed.
pub fn measure(role: &str, full: bool, peer: &str) -> Value {
    let child = spawn_role(
        role,
        &[
            (FULL_ENV, if full { "1" } else { "0" }.to_string()),
            (PEER_ENV, peer.to_string()),
        ],
    );
    let output = child.wait_with_output().expect("a benchmark process");
    assert!(
        output.status.success(),
        "the {role} process failed: {}",
        output.status
    );
    let text = String::from_utf8_lossy(&output.stdout);
    let last = text.lines().last().unwrap_or_default();
    serde_json::from_str(last)
        .unwrap_or_else(|e| panic!("the {role} process printed {text:?}: {e}"))
}

pub fn number(result: &Value, field: &str) -> f64 {
    result[field].as_f64().unwrap_or(f64::NAN)
}

/// Runs every measure (a quick pass without `--bench`) and prints the
/// figures.
pub fn compare() {
    let full = std::env::args().any(|a| a == "--bench");
    let sizes = sizes(full);
    // The real-server mode: 600 Apps as the peers were compared with.
    let real_apps = if full { 600 } else { 5 };
    if std::env::var(REAL_ONLY_ENV).is_ok_and(|v| v == "1") {
        real::run(real_apps, sizes.idle, &peer::build());
        return;
    }
    let rounds = if full { 2 } else { 1 };
    let mut wasm_runs = Vec::new();
    let mut native_runs = Vec::new();
    let mut kubers_runs = Vec::new();
    let peer = peer::build();
    for round in 0..rounds {
        if round % 2 == 0 {
            wasm_runs.push(measure("wasm", full, &peer));
            native_runs.push(measure("native", full, &peer));
            kubers_runs.push(measure("kubers", full, &peer));
        } else {
            kubers_runs.push(measure("kubers", full, &peer));
            native_runs.push(measure("native", full, &peer));
            wasm_runs.push(measure("wasm", full, &peer));
        }
    }
    let fastest = |runs: &[Value]| {
        runs.iter()
            .min_by(|a, b| number(a, "seconds").total_cmp(&number(b, "seconds")))
            .cloned()
            .expect("at least one run")
    };
    let (wasm, native, kubers) = (
        fastest(&wasm_runs),
        fastest(&native_runs),
        fastest(&kubers_runs),
    );
    let per_second = |run: &Value| sizes.apps as f64 / number(run, "seconds");
    emit("apps", sizes.apps as f64, "count");
    emit("concurrency", CONCURRENCY as f64, "count");
    for (i, run) in wasm_runs.iter().enumerate() {
        emit(
            &format!("wasm_seconds_round{i}"),
            number(run, "seconds"),
            "s",
        );
    }
    for (i, run) in native_runs.iter().enumerate() {
        emit(
            &format!("native_seconds_round{i}"),
            number(run, "seconds"),
            "s",
        );
    }
    for (i, run) in kubers_runs.iter().enumerate() {
        emit(
            &format!("kubers_seconds_round{i}"),
            number(run, "seconds"),
            "s",
        );
    }
    emit("wasm_reconciles_per_s", per_second(&wasm), "1/s");
    emit("native_reconciles_per_s", per_second(&native), "1/s");
    emit("kubers_reconciles_per_s", per_second(&kubers), "1/s");
    emit(
        "wasm_over_native",
        per_second(&wasm) / per_second(&native),
        "ratio",
    );
    emit(
        "wasm_reconciles_total",
        number(&wasm, "reconciles"),
        "count",
    );
    emit(
        "native_reconciles_total",
        number(&native, "reconciles"),
        "count",
    );
    emit(
        "kubers_reconciles_total",
        number(&kubers, "reconciles"),
        "count",
    );
    emit("queue_latency_p50_ms", number(&wasm, "p50_ms"), "ms");
    emit("queue_latency_p99_ms", number(&wasm, "p99_ms"), "ms");
    emit(
        "queue_latency_paced_p50_ms",
        number(&wasm, "paced_p50_ms"),
        "ms",
    );
    emit(
        "queue_latency_paced_p99_ms",
        number(&wasm, "paced_p99_ms"),
        "ms",
    );
    emit(
        "native_queue_latency_p50_ms",
        number(&native, "p50_ms"),
        "ms",
    );
    emit(
        "native_queue_latency_p99_ms",
        number(&native, "p99_ms"),
        "ms",
    );
    // CPU per reconcile: the lowest of each contender's rounds. On a
    // shared 2-core machine a round's CPU moves by several percent with
    // what else runs; the lowest is the closest to what the work costs,
    // and each side gets the same estimate.
    let cpu_per_reconcile =
        |run: &Value| number(run, "host_cpu_s") * 1e6 / number(run, "reconciles");
    let lowest_cpu = |runs: &[Value]| {
        runs.iter()
            .map(cpu_per_reconcile)
            .fold(f64::INFINITY, f64::min)
    };
    let (wasm_cpu, kubers_cpu) = (lowest_cpu(&wasm_runs), lowest_cpu(&kubers_runs));
    for (name, run, runs) in [
        ("wasm", &wasm, &wasm_runs),
        ("native", &native, &native_runs),
        ("kubers", &kubers, &kubers_runs),
    ] {
        let reconciles = number(run, "reconciles");
        emit(
            &format!("{name}_host_cpu_us_per_reconcile"),
            lowest_cpu(runs),
            "us",
        );
        emit(
            &format!("{name}_server_cpu_us_per_reconcile"),
            number(run, "server_cpu_s") * 1e6 / reconciles,
            "us",
        );
    }
    emit("host_rss_mb", number(&wasm, "rss_mb"), "MiB");
    emit("native_host_rss_mb", number(&native, "rss_mb"), "MiB");
    emit("idle_cpu_percent", number(&wasm, "idle_cpu_percent"), "%");
    emit("idle_rss_mb", number(&wasm, "idle_rss_mb"), "MiB");
    emit(
        "native_idle_cpu_percent",
        number(&native, "idle_cpu_percent"),
        "%",
    );
    emit("native_idle_rss_mb", number(&native, "idle_rss_mb"), "MiB");
    emit("wasm_cpu_over_kubers", wasm_cpu / kubers_cpu, "ratio");
    emit("kubers_host_rss_mb", number(&kubers, "rss_mb"), "MiB");
    emit(
        "kubers_idle_cpu_percent",
        number(&kubers, "idle_cpu_percent"),
        "%",
    );
    emit("kubers_idle_rss_mb", number(&kubers, "idle_rss_mb"), "MiB");
    emit(
        "idle_rss_over_kubers",
        number(&wasm, "idle_rss_mb") / number(&kubers, "idle_rss_mb"),
        "ratio",
    );

    // Shadowing: the serving version's throughput with a shadow of the
    // same module running (every reconcile run again, its writes dry
    // runs), and the host CPU per serving reconcile then.
    let shadow = measure("wasm-shadow", full, &peer);
    emit(
        "shadow_over_live_throughput",
        per_second(&shadow) / per_second(&wasm),
        "ratio",
    );
    emit(
        "shadow_host_cpu_us_per_reconcile",
        cpu_per_reconcile(&shadow),
        "us",
    );
    emit(
        "shadow_reconciles_per_serving",
        number(&shadow, "shadowed") / number(&shadow, "reconciles"),
        "ratio",
    );
    emit(
        "shadow_skipped_per_serving",
        number(&shadow, "shadow_skipped") / number(&shadow, "reconciles"),
        "ratio",
    );

    // Predicates: reconciles per edited App, its follow-ups included (the
    // Deployment it rewrites queues it once more), with `generation_changed`
    // and with the 0.1.0 build that every change queues.
    let any_change = measure("wasm-any-change", full, &peer);
    let per_edit = |run: &Value| number(run, "paced_reconciles") / sizes.paced_edits as f64;
    emit(
        "reconciles_per_app_generation_predicate",
        per_edit(&wasm),
        "count",
    );
    emit(
        "reconciles_per_app_any_change",
        per_edit(&any_change),
        "count",
    );

    // The priority queue: edits at 100/s while an initial backlog drains.
    let backlog = measure("backlog", full, &peer);
    emit("backlog_objects", sizes.backlog as f64, "count");
    emit("backlog_drain_s", number(&backlog, "drain_s"), "s");
    emit("backlog_edits", number(&backlog, "edits"), "count");
    emit(
        "queue_latency_paced_backlog_p50_ms",
        number(&backlog, "p50_ms"),
        "ms",
    );
    emit(
        "queue_latency_paced_backlog_p99_ms",
        number(&backlog, "p99_ms"),
        "ms",
    );

    let cache = measure("cache", full, &peer);
    emit("config_maps", sizes.config_maps as f64, "count");
    emit("cache_rss_mb", number(&cache, "rss_mb"), "MiB");
    emit("listed_json_mb", number(&cache, "listed_json_mb"), "MiB");
    emit("cached_json_mb", number(&cache, "cached_json_mb"), "MiB");
    emit(
        "cache_rss_over_json",
        number(&cache, "rss_mb") / number(&cache, "listed_json_mb"),
        "ratio",
    );
    let metadata = measure("cache-metadata", full, &peer);
    emit("metadata_cache_rss_mb", number(&metadata, "rss_mb"), "MiB");
    emit(
        "metadata_cache_rss_over_full",
        number(&metadata, "rss_mb") / number(&cache, "rss_mb"),
        "ratio",
    );

    real::run(real_apps, sizes.idle, &peer);
}
