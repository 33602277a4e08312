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
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use wasmtime::component::{Component, Linker};
use wasmtime::{Enabled, InstanceAllocationStrategy, OptLevel, PoolingAllocationConfig};

use super::cache::write_cache;
use super::config::EngineConfig;
use super::ticker::{Ticker, spawn_ticker};
use crate::bindings::{self, HostState};

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
pub(super) struct BaselineTier {
    engine: wasmtime::Engine,
    linker: Linker<HostState>,
}

pub(super) struct Shared {
    pub(super) engine: wasmtime::Engine,
    pub(super) linker: Linker<HostState>,
    pub(super) baseline: Option<BaselineTier>,
    /// Loads waiting for their turn or compiling ([`Engine::load_turn`]):
    /// background optimisation waits for none to be left.
    pub(super) loading: AtomicUsize,
    /// One background optimisation at a time (Cranelift already compiles a
    /// module's functions in parallel).
    pub(super) optimizing: tokio::sync::Semaphore,
    /// Loads compiling (or mapping from the cache) at once: one per core.
    /// Each compile spreads its functions over the cores already; a
    /// hundred at once (a cold start) only thrash.
    pub(super) loads: tokio::sync::Semaphore,
    pub(super) config: EngineConfig,
    /// sha256 of the engine's precompile compatibility hash, hex: part of
    /// every cache key so a changed engine never loads stale code.
    pub(super) compat: String,
    pub(super) ticker: Arc<Ticker>,
}

impl Drop for Shared {
    fn drop(&mut self) {
        self.ticker.stop.store(true, Ordering::Relaxed);
        self.ticker.wake();
    }
}

/// The process-wide WebAssembly engine. Cheap to clone.
#[derive(Clone)]
pub struct Engine {
    pub(super) shared: Arc<Shared>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("config", &self.shared.config)
            .finish_non_exhaustive()
    }
}

impl Engine {
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
