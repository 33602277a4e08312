//! Runtime: modules compiled, validated, and run one reconcile per fresh instance.
//! May call: bindings (the host imports).
//!
//! The wasmtime engine with its compile cache ([`engine`]), a loaded and
//! validated module version ([`module`]), one reconcile on a fresh
//! instance of it ([`instance`]), the world of each contract version it may
//! be built for ([`world`]), its admission and conversion reviews
//! ([`webhooks`]), what a controller dispatches into ([`dispatch`]), and
//! giving back the code pages only start-up and compiles ran
//! ([`resident`]) and the allocator's free memory when the host goes quiet
//! ([`quiet`]).

pub(crate) mod dispatch;
pub(crate) mod engine;
pub(crate) mod instance;
pub(crate) mod module;
pub(crate) mod quiet;
pub(crate) mod resident;
pub(crate) mod webhooks;
pub(crate) mod world;

pub(crate) use dispatch::{DispatchStats, Dispatcher, NativeReconciler};
pub use engine::{CompileSource, Engine, EngineConfig, EngineError, Tier, set_allocator_trim};
pub use instance::{DispatchOptions, Outcome, ReconcileError};
pub use module::{Module, ModuleError, OPTIMIZE_AFTER, digest, dns_label, manifest_json};
pub use quiet::on_runtime_thread_park;
pub use resident::{release_code_after_compile, release_code_pages};
pub use webhooks::{DEFAULT_TIMEOUT_SECONDS, Phase, operations, webhooks_json};
