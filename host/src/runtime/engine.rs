//! The WebAssembly engine: one wasmtime [`wasmtime::Engine`] per process,
//! tuned for a fresh instance per reconcile, its epoch ticker, and the
//! on-disk compile cache.
//!
//! Tiered loading: a component that is not in the compile cache is first
//! compiled by a second engine with wasmtime's baseline compiler (Winch),
//! in a fraction of the time, and serves at once; the optimised build
//! (Cranelift) is compiled in the background, written to the cache, and
//! takes over (see [`crate::Module`]). A component the baseline compiler
//! cannot take is compiled optimised at once, as without tiers.
//!
//! Start with [`EngineConfig`] (limits and pool sizes, with sane defaults) and
//! [`Engine::new`]; then load modules with [`crate::Module::load`].

use std::hash::Hasher;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use wasmtime::component::{Component, Linker};
use wasmtime::{Enabled, InstanceAllocationStrategy, OptLevel, PoolingAllocationConfig};

use super::world::Described;
use crate::bindings::{self, HostState};

/// How often the epoch ticker advances the engine's epoch: the granularity
/// of reconcile deadlines (a guest over its budget is stopped within one
/// tick). Every tick wakes a thread while guests run; at 1 ms the ticker
/// was a seventh of a busy host's CPU against a real API server, where
/// reconciles wait on the network and a guest is alive most of the time.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Limits and tuning of the engine. `Default` gives the values a production
/// host uses; every setter is chainable.
#[derive(Clone, Debug)]
pub struct EngineConfig {
    /// Maximum linear memory of one guest instance, in bytes (default 64 MiB).
    pub max_memory_bytes: usize,
    /// Maximum CPU time of one reconcile (default 2 s); a module's own
    /// `timeout-ms` hint may lower it, never raise it.
    pub max_reconcile_time: Duration,
    /// Maximum wasm stack of one instance, in bytes (default 512 KiB).
    pub max_wasm_stack: usize,
    /// How many guest instances may be alive at once (pool size, default 1000).
    pub max_instances: u32,
    /// Where compiled modules are cached; `None` disables the cache.
    pub cache_dir: Option<PathBuf>,
    /// Compile without optimisation: modules load faster, reconcile slower.
    /// For an author's inner loop; part of the compile cache key.
    pub fast_compile: bool,
    /// Tiered loading (default on): a module missing from the compile
    /// cache serves first on baseline code (Winch) while its optimised
    /// build compiles in the background.
    pub baseline: bool,
    /// Gives the process allocator's freed memory back to the system (for
    /// mimalloc, `mi_collect(true)`): run after each compile on every
    /// thread that compiled (wasmtime compiles on rayon's pool). A compile
    /// allocates tens of MiB on threads that then sit idle, and an
    /// allocator that keeps freed memory per thread (mimalloc does) held it
    /// for the life of the process. The `rekon` binary sets it; an
    /// embedding program with another allocator may set its own.
    pub allocator_trim: Option<fn()>,
    /// Runs once after each compile, on the compiling thread (the `rekon`
    /// binary gives back the pages of its code only compiles ran).
    pub after_compile: Option<fn()>,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            max_memory_bytes: 64 << 20,
            max_reconcile_time: Duration::from_secs(2),
            max_wasm_stack: 512 << 10,
            max_instances: 1000,
            cache_dir: default_cache_dir(),
            fast_compile: false,
            baseline: true,
            allocator_trim: None,
            after_compile: None,
        }
    }
}

impl EngineConfig {
    /// Sets the memory cap of one guest instance.
    #[must_use]
    pub fn max_memory_bytes(mut self, bytes: usize) -> Self {
        self.max_memory_bytes = bytes;
        self
    }

    /// Sets the CPU deadline of one reconcile.
    #[must_use]
    pub fn max_reconcile_time(mut self, time: Duration) -> Self {
        self.max_reconcile_time = time;
        self
    }

    /// Sets the maximum wasm stack size of one instance.
    #[must_use]
    pub fn max_wasm_stack(mut self, bytes: usize) -> Self {
        self.max_wasm_stack = bytes;
        self
    }

    /// Sets how many instances may be alive at once.
    #[must_use]
    pub fn max_instances(mut self, count: u32) -> Self {
        self.max_instances = count;
        self
    }

    /// Sets what gives the allocator's freed memory back after each compile
    /// (see [`EngineConfig::allocator_trim`]).
    #[must_use]
    pub fn allocator_trim(mut self, trim: fn()) -> Self {
        self.allocator_trim = Some(trim);
        self
    }

    /// Sets what runs once after each compile (see
    /// [`EngineConfig::after_compile`]).
    #[must_use]
    pub fn after_compile(mut self, hook: fn()) -> Self {
        self.after_compile = Some(hook);
        self
    }

    /// Compiles without optimisation (faster loads, slower reconciles).
    #[must_use]
    pub fn fast_compile(mut self, enable: bool) -> Self {
        self.fast_compile = enable;
        self
    }

    /// Turns tiered loading on or off (see [`EngineConfig::baseline`]).
    #[must_use]
    pub fn baseline(mut self, enable: bool) -> Self {
        self.baseline = enable;
        self
    }

    /// Sets (or, with `None`, disables) the compile cache directory.
    #[must_use]
    pub fn cache_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.cache_dir = dir;
        self
    }
}

/// `$REKON_CACHE_DIR`, else `$XDG_CACHE_HOME/rekon`, else `~/.cache/rekon`.
fn default_cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("REKON_CACHE_DIR") {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
        return Some(PathBuf::from(dir).join("rekon"));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache").join("rekon"))
}

/// Errors of the engine and its compile cache.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// wasmtime refused the configuration.
    #[error("cannot configure the WebAssembly engine")]
    Config(#[source] wasmtime::Error),
    /// The host functions could not be added to the linker.
    #[error("cannot link the host functions")]
    Linker(#[source] wasmtime::Error),
}

/// Where a compiled component came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompileSource {
    /// Compiled now (no cache, or a cache miss); written to the cache if enabled.
    Compiled,
    /// Loaded (memory-mapped) from the on-disk cache.
    Cache,
    /// Compiled now by the baseline compiler (a cache miss, tiered
    /// loading); the optimised build follows in the background.
    Baseline,
}

/// Which compiler's code a module version runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    /// Cranelift's optimised code: what the compile cache keeps.
    Optimized,
    /// Winch's baseline code: quick to compile, slower to run.
    Baseline,
}

/// The baseline tier: an engine with the baseline compiler and its linker.
struct BaselineTier {
    engine: wasmtime::Engine,
    linker: Linker<HostState>,
}

struct Shared {
    engine: wasmtime::Engine,
    linker: Linker<HostState>,
    baseline: Option<BaselineTier>,
    /// Loads waiting for their turn or compiling ([`Engine::load_turn`]):
    /// background optimisation waits for none to be left.
    loading: AtomicUsize,
    /// One background optimisation at a time (Cranelift already compiles a
    /// module's functions in parallel).
    optimizing: tokio::sync::Semaphore,
    /// Loads compiling (or mapping from the cache) at once: one per core.
    /// Each compile spreads its functions over the cores already; a
    /// hundred at once (a cold start) only thrash.
    loads: tokio::sync::Semaphore,
    config: EngineConfig,
    /// sha256 of the engine's precompile compatibility hash, hex: part of
    /// every cache key so a changed engine never loads stale code.
    compat: String,
    ticker: Arc<Ticker>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.ticker.stop.store(true, Ordering::Relaxed);
        self.ticker.wake();
    }
}

/// The epoch ticker's state: how many guests run (it ticks only while
/// some do, and sleeps otherwise: an idle host has no thread waking up),
/// and whether to stop.
pub(crate) struct Ticker {
    running: AtomicUsize,
    stop: AtomicBool,
    thread: std::sync::OnceLock<std::thread::Thread>,
}

impl Ticker {
    fn wake(&self) {
        if let Some(thread) = self.thread.get() {
            thread.unpark();
        }
    }
}

/// Held while a guest may run (a store exists): the epoch ticker ticks.
pub(crate) struct Ticking(Arc<Ticker>);

impl Drop for Ticking {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The process-wide WebAssembly engine. Cheap to clone.
#[derive(Clone)]
pub struct Engine {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("config", &self.shared.config)
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// Keeps the epoch ticker ticking until the guard is dropped: taken
    /// for every store a guest runs in.
    pub(crate) fn ticking(&self) -> Ticking {
        let ticker = &self.shared.ticker;
        if ticker.running.fetch_add(1, Ordering::AcqRel) == 0 {
            ticker.wake();
        }
        Ticking(ticker.clone())
    }

    /// Builds the engine: component model, async, epoch interruption, the
    /// pooling allocator tuned for short-lived instances, and the linker with
    /// the host functions (WASI without filesystem, network or environment,
    /// plus the `rekon:reconciler` imports). Starts the epoch ticker.
    pub fn new(config: EngineConfig) -> Result<Engine, EngineError> {
        let mut pool = PoolingAllocationConfig::new();
        pool.total_component_instances(config.max_instances)
            .total_memories(config.max_instances)
            .total_tables(config.max_instances)
            .total_stacks(config.max_instances)
            .total_core_instances(config.max_instances.saturating_mul(8))
            .max_memory_size(config.max_memory_bytes)
            // A slot keeps none of its linear memory resident once its
            // instance is gone: what a guest dirtied is given back at once
            // (one madvise), and the next instance faults in what it touches.
            // Keeping the first 4 MiB resident (reset with memset) made a
            // fresh instance no faster with wasmtime 50, which resets every
            // dirty page within that budget, and every slot a burst of
            // reconciles had used held its 4 MiB: 101 MiB at peak against a
            // real API server instead of 38.
            .linear_memory_keep_resident(0)
            .table_keep_resident(1 << 20)
            .async_stack_keep_resident(128 << 10)
            .pagemap_scan(Enabled::Auto);
        let mut wasm = wasmtime::Config::new();
        wasm.wasm_component_model(true)
            .epoch_interruption(true)
            // No `.eh_frame` for guest code: wasmtime unwinds guest frames
            // without it (traps, backtraces), and registering it costs
            // every load time and keeps a section of each module resident.
            .native_unwind_info(false)
            .max_wasm_stack(config.max_wasm_stack)
            .async_stack_size(config.max_wasm_stack + (1 << 20));
        // The baseline engine: the same settings, Winch, and instances
        // allocated on demand (its code serves only until the optimised
        // build takes over).
        let baseline = if config.baseline {
            let mut winch = wasm.clone();
            // Winch compiles the guest's functions; Cranelift still builds
            // the component's trampolines, and unoptimised is enough for
            // code that serves only until the optimised build takes over.
            winch
                .strategy(wasmtime::Strategy::Winch)
                .cranelift_opt_level(OptLevel::None);
            match wasmtime::Engine::new(&winch) {
                Ok(engine) => {
                    let mut linker = Linker::new(&engine);
                    bindings::add_to_linker(&mut linker).map_err(EngineError::Linker)?;
                    Some(BaselineTier { engine, linker })
                }
                Err(error) => {
                    tracing::info!(
                        error = %format!("{error:#}"),
                        "no baseline compiler on this machine: modules load optimised"
                    );
                    None
                }
            }
        } else {
            None
        };
        wasm.cranelift_opt_level(if config.fast_compile {
            OptLevel::None
        } else {
            OptLevel::Speed
        })
        // With a baseline serving, the optimised build compiles in the
        // background: one function at a time, on one thread, so it takes
        // one core from the reconciles, not all, and holds one function's
        // compile state rather than one per core.
        .parallel_compilation(baseline.is_none())
        .allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        let engine = wasmtime::Engine::new(&wasm).map_err(EngineError::Config)?;

        let mut linker = Linker::new(&engine);
        bindings::add_to_linker(&mut linker).map_err(EngineError::Linker)?;

        let mut hasher = ShaHasher(Sha256::new());
        std::hash::Hash::hash(&engine.precompile_compatibility_hash(), &mut hasher);
        let compat = hex::encode(hasher.0.finalize());

        let ticker = Arc::new(Ticker {
            running: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            thread: std::sync::OnceLock::new(),
        });
        let mut weak = vec![engine.weak()];
        weak.extend(baseline.as_ref().map(|b| b.engine.weak()));
        spawn_ticker(weak, ticker.clone());

        Ok(Engine {
            shared: Arc::new(Shared {
                engine,
                linker,
                baseline,
                loading: AtomicUsize::new(0),
                optimizing: tokio::sync::Semaphore::new(1),
                loads: tokio::sync::Semaphore::new(
                    std::thread::available_parallelism().map_or(2, |n| n.get()),
                ),
                config,
                compat,
                ticker,
            }),
        })
    }

    /// The wasmtime engine.
    pub fn wasmtime(&self) -> &wasmtime::Engine {
        &self.shared.engine
    }

    /// The engine's configuration.
    pub fn config(&self) -> &EngineConfig {
        &self.shared.config
    }

    /// Runs the program's hooks after a compile: the allocator trim on the
    /// compile threads and this one, then the after-compile hook.
    fn after_compile(&self) {
        if let Some(trim) = self.shared.config.allocator_trim {
            rayon::broadcast(move |_| trim());
            trim();
        }
        if let Some(hook) = self.shared.config.after_compile {
            hook();
        }
    }

    /// The wasmtime engine of a tier's code (stores must be of it).
    pub(crate) fn wasmtime_for(&self, tier: Tier) -> &wasmtime::Engine {
        match (tier, &self.shared.baseline) {
            (Tier::Baseline, Some(baseline)) => &baseline.engine,
            _ => &self.shared.engine,
        }
    }

    /// The linker of a tier's engine.
    pub(crate) fn linker_for(&self, tier: Tier) -> &Linker<HostState> {
        match (tier, &self.shared.baseline) {
            (Tier::Baseline, Some(baseline)) => &baseline.linker,
            _ => &self.shared.linker,
        }
    }

    /// Whether tiered loading is on (and the baseline compiler available).
    pub fn has_baseline(&self) -> bool {
        self.shared.baseline.is_some()
    }

    /// Loads a component from the compile cache, or, when it is not there
    /// and tiered loading is on, compiles it with the baseline compiler
    /// (the caller then builds the optimised code with
    /// [`compile`](Self::compile) in the background). Without a baseline
    /// tier, or for a component the baseline compiler refuses (said in the
    /// log), this is [`compile`](Self::compile).
    pub fn compile_tiered(
        &self,
        bytes: &[u8],
        digest: &str,
    ) -> Result<(Component, CompileSource), wasmtime::Error> {
        if self.shared.baseline.is_none() {
            return self.compile(bytes, digest);
        }
        if let Some(component) = self.cached(digest) {
            return Ok((component, CompileSource::Cache));
        }
        let started = Instant::now();
        let compiled = self.compile_baseline(bytes);
        self.after_compile();
        match compiled {
            Ok(component) => {
                tracing::debug!(
                    digest,
                    elapsed_ms = started.elapsed().as_millis() as u64,
                    "compiled component (baseline)"
                );
                Ok((component, CompileSource::Baseline))
            }
            Err(error) => {
                tracing::info!(
                    digest,
                    error = %format!("{error:#}"),
                    "the baseline compiler cannot take this module: compiling it optimised now"
                );
                self.compile_optimized(bytes, digest)
            }
        }
    }

    /// Waits for a load's turn to compile (or map from the cache): as many
    /// at once as there are cores. Hold the turn while compiling; a load
    /// waiting for its turn already holds back background optimisation.
    pub(crate) async fn load_turn(&self) -> LoadTurn<'_> {
        self.shared.loading.fetch_add(1, Ordering::AcqRel);
        let loading = Loading(&self.shared.loading);
        let permit = self
            .shared
            .loads
            .acquire()
            .await
            .expect("the semaphore is never closed");
        LoadTurn {
            _permit: permit,
            _loading: loading,
        }
    }

    /// Waits for the turn of a background optimisation: one at a time, and
    /// only while no load is compiling (a cold start of many modules, or a
    /// new version, goes first). Hold the permit while compiling.
    pub(crate) async fn optimizing_turn(&self) -> tokio::sync::SemaphorePermit<'_> {
        let permit = self
            .shared
            .optimizing
            .acquire()
            .await
            .expect("the semaphore is never closed");
        while self.shared.loading.load(Ordering::Acquire) > 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        permit
    }

    /// Compiles a component with the baseline compiler only (nothing is
    /// cached); an error when tiered loading is off.
    pub(crate) fn compile_baseline(&self, bytes: &[u8]) -> Result<Component, wasmtime::Error> {
        let baseline =
            self.shared.baseline.as_ref().ok_or_else(|| {
                wasmtime::Error::msg("tiered loading is off: no baseline compiler")
            })?;
        Component::new(&baseline.engine, bytes)
    }

    /// The component of `digest` from the compile cache, if it is there
    /// and usable.
    fn cached(&self, digest: &str) -> Option<Component> {
        let path = self.cache_path(digest)?;
        if !path.exists() {
            return None;
        }
        // SAFETY: the file was written by `Component::serialize` of an
        // engine with the same compatibility hash (it is in the file
        // name), into a directory owned by this host, and is only ever
        // replaced by an atomic rename, never modified in place, so the
        // mapping stays valid. wasmtime re-checks the header and refuses
        // files from other engine configurations.
        #[allow(unsafe_code)]
        let loaded = unsafe { Component::deserialize_file(&self.shared.engine, &path) };
        match loaded {
            Ok(component) => Some(component),
            Err(error) => {
                tracing::warn!(
                    path = %path.display(),
                    error = %format!("{error:#}"),
                    "compile cache entry unusable, recompiling"
                );
                None
            }
        }
    }

    /// Where the description (manifest and webhooks) of a module version
    /// is kept: beside its code, keyed also by what decides whether it
    /// describes at all (the instance limits and the deadline) and by the
    /// host's version (which reads older contracts' manifests).
    fn description_path(&self, digest: &str) -> Option<PathBuf> {
        let dir = self.shared.config.cache_dir.as_ref()?;
        let config = &self.shared.config;
        let mut key = Sha256::new();
        key.update(digest.as_bytes());
        key.update(self.shared.compat.as_bytes());
        key.update(env!("CARGO_PKG_VERSION").as_bytes());
        key.update(config.max_memory_bytes.to_le_bytes());
        key.update(config.max_wasm_stack.to_le_bytes());
        key.update(config.max_reconcile_time.as_nanos().to_le_bytes());
        Some(dir.join(format!("{}.described.json", hex::encode(key.finalize()))))
    }

    /// The description of a module version this engine described before
    /// (its manifest and webhooks are a function of its bytes), if kept.
    pub(crate) fn cached_description(&self, digest: &str) -> Option<Described> {
        let path = self.description_path(digest)?;
        let text = std::fs::read(&path).ok()?;
        match serde_json::from_slice(&text) {
            Ok(described) => Some(described),
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "cached description unusable, asking the module");
                None
            }
        }
    }

    /// Keeps a module version's description for its next load; a failed
    /// write is logged, never fatal.
    pub(crate) fn keep_description(&self, digest: &str, described: &Described) {
        let Some(path) = self.description_path(digest) else {
            return;
        };
        let bytes = serde_json::to_vec(described).expect("a description serialises");
        if let Err(error) = write_atomically(&path, &bytes) {
            tracing::warn!(path = %path.display(), %error, "cannot keep the module's description");
        }
    }

    /// The hex digest identifying this engine's compiled-code compatibility
    /// (wasmtime version and every setting that changes generated code).
    pub fn compatibility_digest(&self) -> &str {
        &self.shared.compat
    }

    /// The cache file for a component with the given sha256 digest (hex).
    pub fn cache_path(&self, digest: &str) -> Option<PathBuf> {
        let dir = self.shared.config.cache_dir.as_ref()?;
        let mut key = Sha256::new();
        key.update(digest.as_bytes());
        key.update(self.shared.compat.as_bytes());
        Some(dir.join(format!("{}.cwasm", hex::encode(key.finalize()))))
    }

    /// Compiles a component, or loads it from the cache (memory-mapped) when
    /// this engine compiled the same bytes before. A cache entry that cannot
    /// be loaded is recompiled and replaced. Cache write failures are logged,
    /// never fatal.
    pub fn compile(
        &self,
        bytes: &[u8],
        digest: &str,
    ) -> Result<(Component, CompileSource), wasmtime::Error> {
        match self.cached(digest) {
            Some(component) => Ok((component, CompileSource::Cache)),
            None => self.compile_optimized(bytes, digest),
        }
    }

    /// Compiles optimised code (the cache missed) and writes it to the
    /// cache; a failed write is logged, never fatal.
    fn compile_optimized(
        &self,
        bytes: &[u8],
        digest: &str,
    ) -> Result<(Component, CompileSource), wasmtime::Error> {
        let started = Instant::now();
        let compiled = Component::new(&self.shared.engine, bytes);
        self.after_compile();
        let component = compiled?;
        tracing::debug!(
            digest,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "compiled component"
        );
        if let Some(path) = self.cache_path(digest) {
            match write_cache(&path, &component) {
                // Served from the file written, as after a restart: its
                // pages are resident only as the module touches them,
                // where the compiled copy holds all of its code in memory.
                Ok(()) => {
                    if let Some(mapped) = self.cached(digest) {
                        return Ok((mapped, CompileSource::Compiled));
                    }
                }
                Err(error) => {
                    tracing::warn!(path = %path.display(), error = %error, "cannot write compile cache");
                }
            }
        }
        Ok((component, CompileSource::Compiled))
    }
}

fn write_cache(path: &Path, component: &Component) -> std::io::Result<()> {
    let bytes = component
        .serialize()
        .map_err(|e| std::io::Error::other(format!("{e:#}")))?;
    write_atomically(path, &bytes)
}

/// Writes a cache file under a temporary name and renames it into place,
/// so a reader sees the whole file or none.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .expect("cache paths are inside the cache directory");
    std::fs::create_dir_all(dir)?;
    // Unique per writer: two loads of one version may write at once.
    static WRITES: AtomicUsize = AtomicUsize::new(0);
    let tmp = dir.join(format!(
        ".{}.{}.{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("entry"),
        std::process::id(),
        WRITES.fetch_add(1, Ordering::Relaxed)
    ));
    // Written a page at a time: the page cache then holds the file in
    // single pages, and a module mapped from it (`deserialize_file`) has
    // only the pages it touches resident, with the kernel's fault-around
    // (64 KiB) at most. Written in one call, the file lands in large
    // folios, and the first touch of a mapping maps a whole folio: every
    // loaded module then had nearly all of its code resident.
    let mut file = std::fs::File::create(&tmp)?;
    for page in bytes.chunks(4096) {
        std::io::Write::write_all(&mut file, page)?;
    }
    drop(file);
    std::fs::rename(&tmp, path)
}

/// A load's turn to compile ([`Engine::load_turn`]).
pub(crate) struct LoadTurn<'a> {
    _permit: tokio::sync::SemaphorePermit<'a>,
    _loading: Loading<'a>,
}

/// Counts a load compiling until dropped.
struct Loading<'a>(&'a AtomicUsize);

impl Drop for Loading<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Advances the epoch every [`EPOCH_TICK`] while a guest may run, and
/// sleeps (parked, no wake-ups) while none does. When the thread falls
/// behind (a stalled machine), missed ticks are skipped rather than
/// replayed in a burst, so a stall never times out every running reconcile
/// at once.
fn spawn_ticker(engines: Vec<wasmtime::EngineWeak>, ticker: Arc<Ticker>) {
    let state = ticker.clone();
    let thread = std::thread::Builder::new()
        .name("rekon-epoch".into())
        .spawn(move || {
            let ticker = state;
            let mut next = Instant::now() + EPOCH_TICK;
            while !ticker.stop.load(Ordering::Relaxed) {
                if ticker.running.load(Ordering::Acquire) == 0 {
                    // A spurious wake-up only goes round the loop again.
                    std::thread::park();
                    next = Instant::now() + EPOCH_TICK;
                    continue;
                }
                let now = Instant::now();
                if next > now {
                    std::thread::sleep(next - now);
                }
                let mut alive = false;
                for engine in engines.iter().filter_map(wasmtime::EngineWeak::upgrade) {
                    engine.increment_epoch();
                    alive = true;
                }
                if !alive {
                    return;
                }
                next += EPOCH_TICK;
                let now = Instant::now();
                if now > next + EPOCH_TICK {
                    next = now + EPOCH_TICK;
                }
            }
        })
        .expect("spawning the epoch ticker thread");
    let _ = ticker.thread.set(thread.thread().clone());
}

/// Feeds `Hash` input into sha256, so the engine's compatibility hash
/// becomes a digest that is stable across processes (unlike `DefaultHasher`).
struct ShaHasher(Sha256);

impl Hasher for ShaHasher {
    fn finish(&self) -> u64 {
        let digest = self.0.clone().finalize();
        u64::from_le_bytes(digest[..8].try_into().expect("sha256 has 32 bytes"))
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}
