//! rekon-host: runs Kubernetes reconcilers compiled to WebAssembly components.
//!
//! The host owns everything a controller needs that is not business logic;
//! a module (a component targeting the `rekon:reconciler` world in `wit/`)
//! holds only the reconcile logic and runs sandboxed, with a fresh instance
//! per reconcile, a CPU deadline and a memory cap. This crate is the
//! embeddable library: it knows nothing of a command line or of rekon's
//! embedded Kubernetes (the `rekon` command and `rekon-offline` bring those).
//!
//! Where to start, as an embedder:
//! - [`Host::builder`]: the whole controller host — informers, queues, one
//!   controller per module, live reload from files and ConfigMaps — with
//!   [`ControllerConfig`], [`EngineConfig`], the operator's [`HostConfig`]
//!   and leader election or scale-out ([`LeaderConfig`]); see
//!   `examples/embed.rs`;
//! - [`Module::load`] and [`Module::reconcile`]: one module version and one
//!   reconcile on a fresh instance, with host calls served by a [`Cluster`]
//!   backend ([`cluster::KubeCluster::direct`] talks to an API server;
//!   `rekon_offline::MemoryCluster` keeps a cluster in memory), as below;
//! - [`webhook::admit`] and [`webhook::convert`]: one AdmissionReview or
//!   ConversionReview answered by a module's webhooks;
//! - [`pack`]: shipping a module as ConfigMaps; [`rollout`]: shadow versions
//!   and canaries; [`replay`]: recorded reconciles run again;
//!   [`webhook::uninstall`]: taking back what an installation published.
//!
//! The rooms, in the order data flows (ARCHITECTURE.md draws them): `host`
//! (the supervisor: one controller per version) over `source` (files,
//! ConfigMaps) and `loader` (validated versions); `controller` (triggers,
//! queue, worker) -> `runtime` (engine, module, instance) -> `bindings`
//! (the guest's imports, checked) -> `cluster` (the fence, the API client)
//! -> `informer` (caches) and `discovery`; `ha` (leader election,
//! scale-out); `events` and `telemetry` are leaves that record; `contract`
//! and `names` (the WIT types, names) are the ground.
//!
//! ```no_run
//! # async fn run() -> anyhow::Result<()> {
//! use std::sync::Arc;
//! use rekon_host::contract::{Reason, Request};
//! use rekon_host::names::object_ref_of;
//! use rekon_host::runtime::DispatchOptions;
//! use rekon_host::cluster::KubeCluster;
//! use rekon_host::{Engine, EngineConfig, Module};
//!
//! let engine = Engine::new(EngineConfig::default())?;
//! let module = Module::load(&engine, &std::fs::read("app.wasm")?).await?;
//! let cluster = KubeCluster::direct(kube::Client::try_default().await?);
//! let object: serde_json::Value = serde_json::from_str(r#"{"apiVersion": "demo.rekon.dev/v1",
//!     "kind": "App", "metadata": {"name": "web", "namespace": "default"},
//!     "spec": {"image": "nginx", "replicas": 2, "port": 80}}"#)?;
//! let request = Request {
//!     target: object_ref_of(&object).expect("the object has a kind and name"),
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
pub mod cluster;
pub mod config;
pub mod contract;
pub mod controller;
mod discovery;
pub mod dispatch;
pub mod events;
pub mod ha;
mod host;
mod informer;
mod loader;
pub mod migrate;
pub mod names;
pub mod replay;
pub mod rollout;
pub mod runtime;
mod source;
pub mod telemetry;
pub mod webhook;

pub use cluster::Cluster;
pub use config::HostConfig;
pub use controller::ControllerConfig;
pub use ha::LeaderConfig;
pub use host::{Host, HostBuilder, HostError};
pub use runtime::{Engine, EngineConfig, Module};
pub use source::pack;
pub use telemetry::Metrics;

/// Hooks for the benchmarks (`cargo bench`): a reconciler compiled into
/// the host, dispatch statistics, and an informer outside a host.
#[cfg(feature = "bench")]
pub mod bench {
    pub use crate::dispatch::{DispatchStats, NativeFuture, NativeReconciler};
    pub use crate::informer::SyncedInformer;
}
