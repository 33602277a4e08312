//! Runtime: modules compiled, validated, and run one reconcile per fresh instance.
//! May call: bindings (the host imports).
//!
//! The wasmtime engine with its compile cache ([`engine`]), a loaded and
//! validated module version ([`module`]), one reconcile on a fresh
//! instance of it ([`instance`]), the world of each contract version it may
//! be built for ([`world`]), its admission and conversion reviews
//! ([`webhooks`]).

pub(crate) mod engine;
pub(crate) mod instance;
pub(crate) mod module;
pub(crate) mod webhooks;
pub(crate) mod world;

pub use crate::bindings::CallRecord;
pub use engine::{CompileSource, Engine, EngineConfig, EngineError, Tier};
pub use instance::{DispatchOptions, Outcome, ReconcileError};
pub use module::{Module, ModuleError, OPTIMIZE_AFTER, digest, dns_label, manifest_json};
pub use webhooks::{DEFAULT_TIMEOUT_SECONDS, Phase, operations, webhooks_json};
