//! The runtime: the wasmtime engine with its compile cache ([`engine`]), a
//! loaded and validated module version ([`module`]), one reconcile on a
//! fresh instance of it ([`instance`]), and what a controller dispatches
//! into ([`dispatch`]). It calls the bindings (host imports) only.

pub(crate) mod dispatch;
pub(crate) mod engine;
pub(crate) mod instance;
pub(crate) mod module;

pub(crate) use dispatch::{DispatchStats, Dispatcher, NativeReconciler};
pub use engine::{CompileSource, Engine, EngineConfig, EngineError};
pub use instance::{DispatchOptions, Outcome, ReconcileError};
pub use module::{Module, ModuleError, digest, manifest_json};
