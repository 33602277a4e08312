//! `cargo bench --bench pipeline`: the whole controller pipeline — shared
//! informers, the work queue, dispatch, host calls over HTTP — against the
//! in-memory API server, with the `app` module, next to the same pipeline
//! running the same reconciler compiled natively; then what the informer
//! cache costs in memory. Prints one JSON object per line:
//! `{"bench":"pipeline","metric":...,"value":...,"unit":...}`.
//!
//! Run without `--bench` (as `cargo test --all-targets` does) it makes one
//! quick pass with small numbers, to check it still works.
//!
//! Every measure runs in a fresh process (this executable again, its role
//! in `REKON_PIPELINE_BENCH_ROLE`), so that memory freed by one does not
//! hide the growth of the next, and the API server runs in a process of its
//! own, so that the host's memory is the host's alone:
//!
//! - `wasm_reconciles_per_s`, `native_reconciles_per_s`: the server process
//!   creates N Apps (and the App CRD); then a `Host` starts in the measuring
//!   process (a kube client from the server's kubeconfig), with the `app`
//!   module or with `app::AppReconciler` compiled natively behind the same
//!   informers, queue and `Cluster` backend. The figure is N divided by the
//!   time from the host's start to the moment every App's status shows its
//!   generation as `observedGeneration` (counted by the server from a store
//!   watch, reported every 50 ms). Each App takes several reconciles (its
//!   own events and those of the Deployment and Service it owns):
//!   `*_reconciles_total` says how many. Two rounds (wasm then native,
//!   native then wasm); the faster run of each counts.
//! - The peer, in the same run: `kubers_*` — the same App operator as a
//!   kube-rs `Controller` (`peers/kubers`: the same calls, built by the
//!   `app` crate's functions), concurrency 16, against a server process of
//!   its own. It is a program of its own (`rekon-peer-kubers`), built by
//!   the bench with a cargo of its own so that its dependencies have the
//!   features a kube-rs operator's have (no serde_json `preserve_order`),
//!   and measured as a whole process: `kubers_reconciles_per_s`,
//!   `kubers_reconciles_total`,
//!   `kubers_host_cpu_us_per_reconcile` (beside `wasm_` and `native_`),
//!   and `wasm_cpu_over_kubers`, the ratio of rekon's host CPU per
//!   reconcile with the `app` module to kube-rs's (target: at most 1.0).
//!   The peer filters its Apps by generation, as the `app` module's
//!   manifest does, so both run the same reconciles. CPU per reconcile is
//!   the lowest of each contender's rounds (the same estimate for each:
//!   a round's CPU moves by several percent with what else the machine
//!   runs).
//! - `idle_cpu_percent`, `idle_rss_mb` (and `native_`, `kubers_`): once
//!   every App is reconciled and the paced edits are done, the CPU the
//!   process spends over 20 s with nothing to do (target: at most 0.1%),
//!   and its resident memory then; `idle_rss_over_kubers` (target: at
//!   most 1.5).
//! - `queue_latency_p50_ms`, `queue_latency_p99_ms` (wasm): from a key
//!   becoming due to its reconcile starting, over every reconcile of the
//!   run. The N Apps arrive at once, so this is time spent behind the
//!   backlog. `queue_latency_paced_p50_ms` and `_p99_ms`: the same once the
//!   backlog has drained, while Apps are edited at 100 per second.
//! - `host_rss_mb` (wasm): resident memory of the host's process once every
//!   App is reconciled, minus before the host started (engine, module,
//!   instance pool, the caches of Apps, Deployments and Services, queue).
//!   `kubers_host_rss_mb`: the peer's whole process then.
//! - `cache_rss_over_json`: the server process holds M ConfigMaps of about
//!   1 KB; the measuring process syncs one informer on them; its growth in
//!   resident memory during the sync, divided by the size of the
//!   ConfigMaps' JSON as the server lists them. `metadata_cache_rss_over_full`:
//!   the same growth for an informer of their metadata only (as a watched
//!   kind is cached), over the full one.
//! - `reconciles_per_app_generation_predicate`, `reconciles_per_app_any_change`:
//!   reconciles per App edited in the paced phase, follow-ups included, for
//!   `app` (its primary filtered by `generation_changed`) and for the same
//!   App operator built for contract 0.1.0 (every change queues it).
//! - `queue_latency_paced_backlog_p50_ms`, `_p99_ms`: the `misbehave`
//!   module starts on a backlog of ConfigMaps (its initial list, low
//!   priority; already reconciled, so each run writes nothing) while new
//!   ConfigMaps are created at 100 per second: the queue latency of those
//!   changes (high priority) while the backlog drains (`backlog_drain_s`).
//! - `real_*`: the App operator as users run it, against a real
//!   kube-apiserver + etcd from `KUBEBUILDER_ASSETS` ([`real`]): `rekon run`
//!   with the `app` module beside the kube-rs peer, each a whole process,
//!   through create, update, idle and delete phases. Skipped, saying why,
//!   without the binaries; `REKON_PIPELINE_BENCH_REAL_ONLY=1` runs it
//!   alone.

#[path = "pipeline/cache.rs"]
mod cache;
mod common;
#[path = "pipeline/native.rs"]
mod native;
#[path = "pipeline/options.rs"]
mod options;
#[path = "pipeline/peer.rs"]
mod peer;
#[path = "pipeline/process.rs"]
mod process;
#[path = "pipeline/real.rs"]
mod real;
#[path = "pipeline/report.rs"]
mod report;
#[path = "pipeline/run.rs"]
mod run;
#[path = "pipeline/server.rs"]
mod server;

use std::time::Duration;

use cache::cache_cost;
use run::{Logic, pipeline};
use server::{serve_apps, serve_config_maps};

/// The role of a process of this benchmark: `wasm`, `native`, `cache`,
/// `serve-apps` or `serve-config-maps`; absent in the process cargo starts.
const ROLE_ENV: &str = "REKON_PIPELINE_BENCH_ROLE";
/// `1` for a full run (`--bench`).
const FULL_ENV: &str = "REKON_PIPELINE_BENCH_FULL";
/// For a server process: `<count>:<kubeconfig path>`.
const SERVE_ENV: &str = "REKON_PIPELINE_BENCH_SERVE";
/// For the `kubers` role: the path of the peer's executable.
const PEER_ENV: &str = "REKON_PIPELINE_BENCH_PEER";
/// `1`: only the real-server mode ([`real`]).
const REAL_ONLY_ENV: &str = "REKON_PIPELINE_BENCH_REAL_ONLY";

/// Reconciles at once, in both pipelines.
const CONCURRENCY: usize = 16;

struct Sizes {
    apps: usize,
    config_maps: usize,
    paced_edits: usize,
    /// Objects of the initial backlog the paced edits run against.
    backlog: usize,
    deadline: Duration,
    /// How long the idle host is watched once every App is reconciled.
    idle: Duration,
}

fn sizes(full: bool) -> Sizes {
    if full {
        Sizes {
            apps: 10_000,
            config_maps: 10_000,
            paced_edits: 300,
            backlog: 10_000,
            deadline: Duration::from_secs(600),
            idle: Duration::from_secs(20),
        }
    } else {
        Sizes {
            apps: 20,
            config_maps: 50,
            paced_edits: 5,
            backlog: 200,
            deadline: Duration::from_secs(60),
            idle: Duration::from_secs(1),
        }
    }
}

fn emit(metric: &str, value: f64, unit: &str) {
    common::emit("pipeline", metric, value, unit);
}

fn main() {
    if let Ok(role) = std::env::var(ROLE_ENV) {
        let sizes = sizes(std::env::var(FULL_ENV).is_ok_and(|f| f == "1"));
        match role.as_str() {
            "wasm" => pipeline(Logic::Wasm, &sizes),
            "wasm-any-change" => pipeline(Logic::WasmAnyChange, &sizes),
            "wasm-shadow" => pipeline(Logic::WasmShadow, &sizes),
            "backlog" => options::backlog(&sizes),
            "cache-metadata" => options::metadata_cache(&sizes),
            "serve-marked-config-maps" => options::serve_marked_config_maps(),
            "native" => pipeline(Logic::Native, &sizes),
            "kubers" => pipeline(Logic::KubeRs, &sizes),
            "cache" => cache_cost(&sizes),
            "serve-apps" => serve_apps(),
            "serve-config-maps" => serve_config_maps(),
            other => panic!("unknown role {other}"),
        }
        return;
    }
    report::compare();
}
