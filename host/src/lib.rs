//! rekon-host: runs Kubernetes reconcilers compiled to WebAssembly components.
//!
//! The host owns everything a controller needs that is not business logic;
//! a module (a component targeting the `rekon:reconciler` world in `wit/`)
//! holds only the reconcile logic and runs sandboxed, with a fresh instance
//! per reconcile, a CPU deadline and a memory cap.
//!
//! Where to start, as an embedder:
//! - [`Host::builder`]: the whole controller host — informers, queues, one
//!   controller per module, live reload from files and ConfigMaps — with
//!   [`ControllerConfig`], [`EngineConfig`], the operator's [`HostConfig`]
//!   and leader election or scale-out ([`LeaderConfig`]); see
//!   `examples/embed.rs`;
//! - [`Module::load`] and [`Module::reconcile`]: one module version and one
//!   reconcile on a fresh instance, with host calls served by a [`Cluster`]
//!   backend such as [`MemoryCluster`] (a cluster in memory), as below;
//! - [`webhook::admit`] and [`webhook::convert`]: one AdmissionReview or
//!   ConversionReview answered by a module's webhooks;
//! - [`pack`]: shipping a module as ConfigMaps;
//! - [`uninstall`]: taking back what an installation published.
//!
//! Inside, one room per job, data flowing one way:
//! `source` (files, ConfigMaps) -> `loader` (validated versions) ->
//! `host` (the supervisor: one controller per version) -> `controller`
//! (triggers, queue, reconcile) -> `runtime` (engine, module, instance) ->
//! `bindings` (the guest's imports, checked) -> `cluster` (fence, API
//! client, Events, memory) -> `informer` (caches) and `discovery`, with
//! `ha` (leader election, scale-out) and `telemetry` beside them, and
//! `contract` and `shared` (the WIT types, names) at the bottom.
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

// The rooms, in the order data flows: a source's bytes become a validated
// version (loader), which the supervisor (host) runs as a controller,
// which dispatches into the runtime, whose guest calls (bindings) reach
// the cluster. Each room's `mod.rs` says what it may call.
mod bindings;
mod cluster;
mod config;
mod contract;
mod controller;
mod discovery;
mod ha;
mod host;
mod informer;
mod loader;
pub mod replay;
pub mod rollout;
mod runtime;
mod shared;
mod source;
mod telemetry;
pub mod uninstall;
pub mod webhook;

pub use bindings::CallRecord;
pub use cluster::kube::{from_kube, query_value};
pub use cluster::memory::MemoryCluster;
pub use cluster::{Cluster, patch_request};
pub use config::{
    ConfigError, EXCLUDED_NAMESPACES, HostConfig, ModuleConfig, PermissionConfig, WebhookConfig,
};
pub use contract::{
    Action, ApiError, ApplyOptions, CONTRACT_VERSIONS, EventType, GuestError, Gvk, Index, IndexKey,
    Level, Manifest, Mapping, ObjectRef, Owned, PatchType, Permission, Predicate, Propagation,
    Reason, Request, Verbs, Watch, api_error,
};
pub use contract::{
    AdmissionRequest, Conversion, ConversionRequest, FailurePolicy, Mutation, Operation, UserInfo,
    Verdict, Webhook, WebhookManifest, Webhooks,
};
pub use controller::{ControllerConfig, REASONS, reason_name, reason_of};
pub use ha::LeaderConfig;
pub use host::{Host, HostBuilder, HostError, SHUTDOWN_GRACE};
pub use runtime::{
    CompileSource, DispatchOptions, Engine, EngineConfig, EngineError, Module, ModuleError,
    OPTIMIZE_AFTER, Outcome, Phase, ReconcileError, Tier, digest, dns_label, manifest_json,
    on_runtime_thread_park, release_code_after_compile, release_code_pages, set_allocator_trim,
    webhooks_json,
};
pub use shared::{object_ref_of, plural_of};
pub use source::Origin;
pub use source::pack;
pub use telemetry::Metrics;

/// Hooks for the benchmarks (`cargo bench`): a reconciler compiled into
/// the host, dispatch statistics, and an informer outside a host.
#[cfg(feature = "bench")]
pub mod bench {
    pub use crate::informer::SyncedInformer;
    pub use crate::runtime::dispatch::{DispatchStats, NativeFuture, NativeReconciler};
}
