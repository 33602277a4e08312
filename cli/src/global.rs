//! The flags every subcommand takes (the compile cache, a guest's limits,
//! the log format), and the engine they configure.

use std::path::PathBuf;
use std::time::Duration;

use rekon_host::{Engine, EngineConfig};

/// The global flags.
#[derive(Debug, clap::Args)]
pub struct Global {
    /// Directory of the compile cache (default: $REKON_CACHE_DIR, else ~/.cache/rekon).
    #[arg(long, global = true, env = "REKON_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Do not use the compile cache.
    #[arg(long, global = true)]
    pub no_cache: bool,
    /// Memory cap of one guest instance, in MiB.
    #[arg(long, global = true, default_value_t = 64)]
    pub max_memory_mib: usize,
    /// CPU deadline of one reconcile, in milliseconds.
    #[arg(long, global = true, default_value_t = 2000)]
    pub timeout_ms: u64,
    /// Compile modules without optimisation (faster start, slower reconciles).
    #[arg(long, global = true)]
    pub fast_compile: bool,
    /// No tiered loading: a module missing from the compile cache is
    /// compiled optimised before it serves, instead of serving at once on
    /// baseline code (Winch) while its optimised build compiles.
    #[arg(long, global = true)]
    pub no_baseline: bool,
    /// Log format on stderr: `text` (human-readable) or `json` (one object per line).
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

/// How logs are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines (colours on a terminal).
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

/// The engine settings the global flags ask for.
pub fn engine_config(global: &Global) -> EngineConfig {
    let default = EngineConfig::default();
    crate::process::engine_hooks(EngineConfig::default())
        .max_memory_bytes(global.max_memory_mib << 20)
        .max_reconcile_time(Duration::from_millis(global.timeout_ms))
        .fast_compile(global.fast_compile)
        .baseline(!global.no_baseline)
        .cache_dir(if global.no_cache {
            None
        } else {
            global.cache_dir.clone().or(default.cache_dir)
        })
}

/// The engine the global flags ask for.
pub fn engine(global: &Global) -> anyhow::Result<Engine> {
    Ok(Engine::new(engine_config(global))?)
}
