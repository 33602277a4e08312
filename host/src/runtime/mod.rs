//! Runtime: modules compiled, validated, and run one reconcile per fresh instance.
//! May call: bindings (the host imports).
//!
//! The wasmtime engine with its compile cache (`engine`), a loaded and
//! validated module version (`module`), one reconcile on a fresh
//! instance of it (`instance`), the world of each contract version it may
//! be built for (`world`), its admission and conversion reviews
//! (`webhooks`).

mod cache;
mod config;
mod describe;
pub(crate) mod engine;
pub(crate) mod instance;
pub(crate) mod module;
pub(crate) mod ticker;
mod validate;
pub(crate) mod webhooks;
pub(crate) mod world;

pub use crate::bindings::CallRecord;
pub use config::EngineConfig;
pub use describe::manifest_json;
pub use engine::{CompileSource, Engine, EngineError, Tier};
pub use instance::{DispatchOptions, Outcome, ReconcileError};
pub use module::{Module, ModuleError, OPTIMIZE_AFTER, digest};
pub use ticker::EPOCH_TICK;
pub use validate::dns_label;
pub use webhooks::{DEFAULT_TIMEOUT_SECONDS, Phase, operations, webhooks_json};
