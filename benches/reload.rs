//! `cargo bench --bench reload`: how fast a new module version takes over,
//! and how fast a host restarts with many modules. Prints one JSON object
//! per line: `{"bench":"reload","metric":...,"value":...,"unit":...}`.
//!
//! Every module version is the `misbehave` guest with its build mark
//! replaced (same length, so the component stays valid): a new digest each
//! time, so every version is compiled for real, and the guest's `ok` mode
//! writes the mark to `data.behaved-by` of the ConfigMaps it reconciles,
//! which tells which version ran.
//!
//! - `disk_reload_p50_ms`, `disk_reload_p99_ms`: an embedded [`Host`]
//!   watching a directory, against the in-memory API server (in this
//!   process, over HTTP), with one ConfigMap `canary` (not `probe`: that name picks misbehave's probe mode). A new version is
//!   written to a temporary file and renamed over the module (as editors
//!   and `cp` do); the time runs until the store shows `canary` reconciled
//!   by it (polled every millisecond): debounce, compile (the compile cache
//!   is on, and misses), swap, the first reconcile and its write.
//! - `configmap_reload_p50_ms`, `configmap_reload_p99_ms`: the same with
//!   the module shipped as ConfigMaps (`rekon pack`, zstd) and the host
//!   watching them; the time runs from the update of the module's ConfigMap.
//! - `cold_start_100_ms`, `warm_start_100_ms`: 100 distinct versions loaded
//!   in parallel with [`Module::load`] on a multi-thread runtime, first by
//!   an engine with an empty cache directory (every version compiled), then
//!   by a second engine on the same directory, as after a restart (every
//!   version from the cache). `engine_start_ms` is the second engine's
//!   creation, not counted in the warm figure.
//! - `compile_ms`: compiling one version without a cache (optimised, with
//!   Cranelift), for scale; `baseline_compile_ms`: the same with the
//!   baseline compiler (Winch), what a cold load waits for under tiered
//!   loading.
//!
//! Tiered loading is on by default: a version missing from the cache
//! serves on baseline code while its optimised build compiles behind it.
//! The reload and start figures are measured both ways:
//! `disk_reload_baseline_p50_ms` / `_p99_ms`,
//! `configmap_reload_baseline_p50_ms` / `_p99_ms` and `cold_start_100_ms`
//! with tiers (what a host does), `disk_reload_p50_ms`,
//! `configmap_reload_p50_ms` and `cold_start_100_optimized_ms` with
//! optimised code only (`EngineConfig::baseline(false)`).
//! - `js_reload_p50_ms`, `js_reload_p99_ms`: the JavaScript configmap-sync
//!   guest (12 MB) written over the module file, a new digest each time (a
//!   custom section numbers it); the time runs until the host runs the new
//!   version (tiered).
//!
//! Run without `--bench` (as `cargo test --all-targets` does) it makes one
//! quick pass with tiny counts, to check it still works.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use rekon_apiserver::{ApiServer, ResourceInfo, RunningServer, Store};
use rekon_host::runtime::CompileSource;
use rekon_host::{Engine, EngineConfig, Host, Module};
use serde_json::{Value, json};

/// How long one reload may take before the run is declared broken.
const DEADLINE: Duration = Duration::from_secs(60);

fn emit(metric: &str, value: f64, unit: &str) {
    common::emit("reload", metric, value, unit);
}

/// The build mark of version `n` of a series (`d`isk, `c`onfigmap,
/// `s`tart): distinct across series, so no version is ever found in the
/// compile cache of another.
fn mark(series: char, n: usize) -> String {
    let mark = format!("misbehave-{series}-{n:05}");
    assert_eq!(
        mark.len(),
        misbehave::BUILD_MARK.len(),
        "a mark must have the length of the one it replaces"
    );
    mark
}

/// The `misbehave` component, and where its build mark sits in it.
struct Misbehave {
    bytes: Vec<u8>,
    at: usize,
}

impl Misbehave {
    fn read() -> Misbehave {
        let bytes =
            std::fs::read(rekon_test_artifacts::MISBEHAVE).expect("the misbehave guest is built");
        let at = bytes
            .windows(misbehave::BUILD_MARK.len())
            .position(|w| w == misbehave::BUILD_MARK.as_bytes())
            .expect("the build mark is in the component");
        Misbehave { bytes, at }
    }

    /// The component writing `mark` instead of its build mark.
    fn version(&self, mark: &str) -> Vec<u8> {
        let mut bytes = self.bytes.clone();
        bytes[self.at..self.at + mark.len()].copy_from_slice(mark.as_bytes());
        bytes
    }
}

/// Writes a module the way editors and `cp --remove-destination` do: to a
/// temporary file, then renamed over the old one.
fn install(dir: &Path, name: &str, bytes: &[u8]) {
    let tmp = dir.join(format!(".{name}.tmp"));
    std::fs::write(&tmp, bytes).expect("writing the new version");
    std::fs::rename(&tmp, dir.join(name)).expect("renaming it over the module");
}

/// The value at quantile `q` of sorted samples (nearest rank).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// Prints `<name>_p50_ms` and `<name>_p99_ms` of sorted durations.
fn emit_quantiles(name: &str, sorted: &[f64]) {
    emit(&format!("{name}_p50_ms"), quantile(sorted, 0.5), "ms");
    emit(&format!("{name}_p99_ms"), quantile(sorted, 0.99), "ms");
}

fn millis(elapsed: Duration) -> f64 {
    elapsed.as_secs_f64() * 1e3
}

/// The in-memory API server and a client of it.
struct Cluster {
    server: RunningServer,
    configmaps: ResourceInfo,
}

impl Cluster {
    async fn start() -> Cluster {
        let server = ApiServer::builder()
            .start()
            .await
            .expect("the API server starts");
        let configmaps = server
            .store()
            .resource_for_kind("", "v1", "ConfigMap")
            .expect("ConfigMaps are served");
        Cluster { server, configmaps }
    }

    fn store(&self) -> Store {
        self.server.store()
    }

    async fn client(&self) -> kube::Client {
        let kubeconfig = kube::config::Kubeconfig::from_yaml(&self.server.kubeconfig())
            .expect("the server's kubeconfig parses");
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
            .await
            .expect("the server's kubeconfig is usable");
        kube::Client::try_from(config).expect("a client for the server")
    }

    /// Creates the ConfigMap the module reconciles.
    fn probe(&self) {
        self.store()
            .apply_object(json!({ "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": { "name": "canary", "namespace": "default" }, "data": {} }))
            .expect("creating the probe ConfigMap");
    }

    /// Waits until `probe` is reconciled by the version with `mark`,
    /// polling the store every millisecond; returns when it saw it.
    async fn reconciled_by(&self, mark: &str) -> Instant {
        let store = self.store();
        let started = Instant::now();
        loop {
            let probe = store
                .get(&self.configmaps, Some("default"), "canary")
                .expect("the probe ConfigMap exists");
            if probe["data"]["behaved-by"] == mark {
                return Instant::now();
            }
            assert!(
                started.elapsed() < DEADLINE,
                "probe not reconciled by {mark} within {DEADLINE:?}: {probe}"
            );
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
}

fn engine_config(cache: &Path, baseline: bool) -> EngineConfig {
    EngineConfig::default()
        .baseline(baseline)
        .cache_dir(Some(cache.to_path_buf()))
}

/// `bytes` with a custom section numbering it: the same component, a new
/// digest.
fn numbered(bytes: &[u8], n: usize) -> Vec<u8> {
    let name = b"rekon-bench";
    let data = n.to_le_bytes();
    let size = 1 + name.len() + data.len();
    let mut out = bytes.to_vec();
    out.push(0); // a custom section
    out.push(u8::try_from(size).expect("a one-byte LEB128 size"));
    out.push(u8::try_from(name.len()).expect("a short name"));
    out.extend_from_slice(name);
    out.extend_from_slice(&data);
    out
}

/// Milliseconds from each new version of the JavaScript guest written over
/// the module file until the host runs it, sorted.
async fn js_reloads(count: usize) -> Vec<f64> {
    let bytes = std::fs::read(rekon_test_artifacts::built(
        rekon_test_artifacts::CONFIGMAP_SYNC_JS,
    ))
    .expect("the JavaScript guest is built");
    let cluster = Cluster::start().await;
    let dir = tempfile::tempdir().expect("a module directory");
    let cache = tempfile::tempdir().expect("a cache directory");
    install(dir.path(), "sync.wasm", &numbered(&bytes, 0));
    let host = Host::builder()
        .client(cluster.client().await)
        .engine_config(engine_config(cache.path(), true))
        .watch_dir(dir.path())
        .start()
        .await
        .expect("the host starts");
    let mut samples = Vec::with_capacity(count);
    for n in 1..=count {
        let version = numbered(&bytes, n);
        let digest = rekon_host::runtime::digest(&version);
        let started = Instant::now();
        install(dir.path(), "sync.wasm", &version);
        loop {
            if host.modules().await.iter().any(|m| m.digest() == digest) {
                break;
            }
            assert!(started.elapsed() < DEADLINE, "version {n} never ran");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        samples.push(millis(started.elapsed()));
    }
    host.shutdown().await;
    samples.sort_by(f64::total_cmp);
    samples
}

/// Milliseconds from each new file to its first reconcile, sorted.
async fn disk_reloads(misbehave: &Misbehave, count: usize, baseline: bool) -> Vec<f64> {
    let series = if baseline { 'b' } else { 'd' };
    let cluster = Cluster::start().await;
    let dir = tempfile::tempdir().expect("a module directory");
    let cache = tempfile::tempdir().expect("a cache directory");
    install(
        dir.path(),
        "misbehave.wasm",
        &misbehave.version(&mark(series, 0)),
    );
    let host = Host::builder()
        .client(cluster.client().await)
        .engine_config(engine_config(cache.path(), baseline))
        .watch_dir(dir.path())
        .start()
        .await
        .expect("the host starts");
    cluster.probe();
    cluster.reconciled_by(&mark(series, 0)).await;

    let mut samples = Vec::with_capacity(count);
    for n in 1..=count {
        let mark = mark(series, n);
        let bytes = misbehave.version(&mark);
        let started = Instant::now();
        install(dir.path(), "misbehave.wasm", &bytes);
        let seen = cluster.reconciled_by(&mark).await;
        samples.push(millis(seen - started));
    }
    host.shutdown().await;
    samples.sort_by(f64::total_cmp);
    samples
}

/// The ConfigMaps of one version, as `rekon pack` writes them. They ask
/// `misbehave` (which reconciles every ConfigMap) to leave them alone: a
/// module does not write to its own ConfigMaps in real use, and such a
/// write would count as another change for the source's debounce.
fn packed(misbehave: &Misbehave, mark: &str) -> Vec<Value> {
    let mut documents = rekon_host::pack::pack(
        &misbehave.version(mark),
        "misbehave",
        "default",
        rekon_host::pack::Encoding::Zstd,
        rekon_host::pack::DEFAULT_PART_SIZE,
    )
    .expect("packing the module");
    for document in &mut documents {
        document["metadata"]["annotations"][misbehave::MODE_KEY] = json!("huge-log");
        document["metadata"]["annotations"][misbehave::SIZE_KEY] = json!("0");
    }
    documents
}

/// Milliseconds from each ConfigMap update to its first reconcile, sorted.
async fn configmap_reloads(misbehave: &Misbehave, count: usize, baseline: bool) -> Vec<f64> {
    let series = if baseline { 'k' } else { 'c' };
    let cluster = Cluster::start().await;
    let cache = tempfile::tempdir().expect("a cache directory");
    let store = cluster.store();
    for document in packed(misbehave, &mark(series, 0)) {
        store
            .apply_object(document)
            .expect("applying the module ConfigMaps");
    }
    let host = Host::builder()
        .client(cluster.client().await)
        .engine_config(engine_config(cache.path(), baseline))
        .watch_configmaps(vec![])
        .start()
        .await
        .expect("the host starts");
    cluster.probe();
    cluster.reconciled_by(&mark(series, 0)).await;

    let mut samples = Vec::with_capacity(count);
    for n in 1..=count {
        let mark = mark(series, n);
        let documents = packed(misbehave, &mark);
        let started = Instant::now();
        for document in documents {
            store
                .apply_object(document)
                .expect("updating the module ConfigMaps");
        }
        let seen = cluster.reconciled_by(&mark).await;
        samples.push(millis(seen - started));
    }
    host.shutdown().await;
    samples.sort_by(f64::total_cmp);
    samples
}

/// Loads every version at once; returns the milliseconds until all are
/// ready, checking they came from where expected.
async fn load_all(
    engine: &Engine,
    versions: &[Vec<u8>],
    expected: CompileSource,
) -> (f64, Vec<Module>) {
    let started = Instant::now();
    let loads = versions.iter().map(|bytes| Module::load(engine, bytes));
    let modules = futures::future::join_all(loads).await;
    let elapsed = millis(started.elapsed());
    let modules: Vec<Module> = modules
        .into_iter()
        .map(|m| m.expect("every version loads"))
        .collect();
    for module in &modules {
        assert_eq!(
            module.compile_source(),
            expected,
            "a version loaded from an unexpected place"
        );
    }
    (elapsed, modules)
}

/// Waits until every module runs its optimised build (then cached).
async fn optimised(modules: &[Module]) {
    let started = Instant::now();
    while modules
        .iter()
        .any(|m| m.tier() == rekon_host::runtime::Tier::Baseline)
    {
        assert!(
            started.elapsed() < DEADLINE * 5,
            "optimised builds never came"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (disk_count, configmap_count, start_count, js_count) = if full {
        (50, 20, 100, 10)
    } else {
        (3, 2, 3, 1)
    };
    let misbehave = Misbehave::read();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");

    runtime.block_on(async {
        let uncached = Engine::new(EngineConfig::default().cache_dir(None)).expect("an engine");
        let bytes = misbehave.version(&mark('u', 0));
        let digest = rekon_host::runtime::digest(&bytes);
        let started = Instant::now();
        uncached
            .compile(&bytes, &digest)
            .expect("the misbehave guest compiles");
        emit("compile_ms", millis(started.elapsed()), "ms");
        let tiered = Engine::new(EngineConfig::default().cache_dir(None)).expect("an engine");
        let bytes = misbehave.version(&mark('u', 1));
        let started = Instant::now();
        let (_, source) = tiered
            .compile_tiered(&bytes, &rekon_host::runtime::digest(&bytes))
            .expect("the misbehave guest compiles");
        emit("baseline_compile_ms", millis(started.elapsed()), "ms");
        assert_eq!(source, CompileSource::Baseline);
        drop((uncached, tiered));

        for baseline in [false, true] {
            let tier = if baseline { "_baseline" } else { "" };
            let disk = disk_reloads(&misbehave, disk_count, baseline).await;
            emit_quantiles(&format!("disk_reload{tier}"), &disk);
            let configmap = configmap_reloads(&misbehave, configmap_count, baseline).await;
            emit_quantiles(&format!("configmap_reload{tier}"), &configmap);
        }

        let js = js_reloads(js_count).await;
        emit_quantiles("js_reload", &js);

        let versions: Vec<Vec<u8>> = (0..start_count)
            .map(|n| misbehave.version(&mark('s', n)))
            .collect();
        let optimized_cache = tempfile::tempdir().expect("a cache directory");
        let optimized_engine =
            Engine::new(engine_config(optimized_cache.path(), false)).expect("an engine");
        let (optimized, _) = load_all(&optimized_engine, &versions, CompileSource::Compiled).await;
        drop(optimized_engine);
        let cache = tempfile::tempdir().expect("a cache directory");
        let cold_engine = Engine::new(engine_config(cache.path(), true)).expect("an engine");
        let (cold, modules) = load_all(&cold_engine, &versions, CompileSource::Baseline).await;
        // The optimised builds, compiled behind, fill the cache.
        optimised(&modules).await;
        drop((modules, cold_engine));
        let started = Instant::now();
        let warm_engine = Engine::new(engine_config(cache.path(), true)).expect("an engine");
        let engine_start = millis(started.elapsed());
        let (warm, _) = load_all(&warm_engine, &versions, CompileSource::Cache).await;
        emit("cold_start_100_ms", cold, "ms");
        emit("cold_start_100_optimized_ms", optimized, "ms");
        emit("warm_start_100_ms", warm, "ms");
        emit("engine_start_ms", engine_start, "ms");
    });
}
