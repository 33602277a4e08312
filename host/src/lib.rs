//! rekon-host: runs Kubernetes reconcilers compiled to WebAssembly components.
//!
//! The host owns everything a controller needs that is not business logic;
//! a module (a component targeting the `rekon:reconciler` world in `wit/`)
//! holds only the reconcile logic and runs sandboxed, with a fresh instance
//! per reconcile, a CPU deadline and a memory cap.
//!
//! Where to start:
//! - [`Engine`] (configured by [`EngineConfig`]): the process-wide wasmtime
//!   engine with its epoch ticker and on-disk compile cache;
//! - [`Module::load`]: validates and compiles a component into a [`Module`]
//!   whose [`Manifest`] says what it reconciles and may do;
//! - [`Module::reconcile`]: one reconcile on a fresh instance, with host calls
//!   served by a [`Cluster`] backend — [`MemoryCluster`] holds a cluster in
//!   memory (the store of the in-memory API server).
//! - [`Host::builder`]: the whole controller host (informers, queues, one
//!   controller per module, live reload), with leader election
//!   ([`leader`]) or modules spread across replicas ([`scaleout`]).
//!
//! ```no_run
//! # async fn run() -> anyhow::Result<()> {
//! use std::sync::Arc;
//! use rekon_host::{DispatchOptions, Engine, EngineConfig, MemoryCluster, Module, Reason, Request};
//!
//! let engine = Engine::new(EngineConfig::default())?;
//! let module = Module::load(&engine, &std::fs::read("app.wasm")?).await?;
//! let cluster = MemoryCluster::default();
//! let object = cluster.seed(serde_json::from_str(r#"{"apiVersion": "demo.rekon.dev/v1",
//!     "kind": "App", "metadata": {"name": "web", "namespace": "default"},
//!     "spec": {"image": "nginx", "replicas": 2, "port": 80}}"#)?)?;
//! let request = Request {
//!     target: rekon_host::object_ref_of(&object).expect("the object has a kind and name"),
//!     object: Some(object.to_string()),
//!     reason: Reason::Manual,
//!     attempt: 0,
//! };
//! let outcome = module.reconcile(Arc::new(cluster), &request, DispatchOptions::default()).await;
//! println!("{:?}", outcome.result);
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod bindings;
mod cached;
pub mod cli;
pub mod config;
mod controller;
mod dispatch;
pub mod engine;
mod events;
mod host;
mod informer;
mod json;
mod kube_cluster;
pub mod leader;
mod memory;
pub mod module;
pub mod pack;
pub mod queue;
pub mod scaleout;
pub mod source;
pub mod telemetry;

pub use bindings::{
    Action, ApiError, ApplyOptions, CallRecord, Cluster, EventType, Gvk, Level, Manifest, Mapping,
    ObjectRef, PatchType, Permission, Propagation, Reason, ReconcileError as GuestError, Request,
    Verbs, Watch, api_error, is_allowed,
};
pub use config::{ConfigError, HostConfig};
#[doc(hidden)]
pub use dispatch::{DispatchStats, NativeFuture, NativeReconciler};
pub use engine::{CompileSource, Engine, EngineConfig, EngineError};
pub use host::{Host, HostBuilder, HostError};
pub use informer::ResolveError;
#[doc(hidden)]
pub use informer::SyncedInformer;
pub use json::{manifest_json, object_ref_of};
pub use leader::{LeaderConfig, Leadership};
pub use memory::MemoryCluster;
pub use module::{DispatchOptions, Module, ModuleError, Outcome, ReconcileError};
pub use source::{SourceError, SourceEvent};
pub use telemetry::Metrics;
