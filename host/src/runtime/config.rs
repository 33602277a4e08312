//! The engine's limits and tuning: `Default` gives a production host's.

use std::path::PathBuf;
use std::time::Duration;

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
pub(super) fn default_cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("REKON_CACHE_DIR") {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
        return Some(PathBuf::from(dir).join("rekon"));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache").join("rekon"))
}
