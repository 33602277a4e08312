//! rekon-apiserver: an in-memory Kubernetes API server that kube-rs and
//! kubectl talk to as to a real cluster, over the objects of
//! [`rekon_store`].
//!
//! Where to start: [`ApiServer::builder`], then [`RunningServer`], the
//! handle to a started server (its store, its kubeconfig, its request
//! log). With the `faults` feature, [`Faults`] injects failures, delays,
//! dropped watches and restarts, for tests.
//!
//! The rooms, in the order a request goes through them (each imports
//! only the ones after it; ARCHITECTURE.md has the plan):
//! - [`server`]: starting, running and stopping a server, the accept loop;
//! - `endpoints`: one request: the request log and injected faults, the
//!   `/_rekon/` control endpoints, routing a path, dispatching a route
//!   (Kubernetes' `apiserver/pkg/endpoints`);
//! - `admission`: the admission chain of writes (webhooks);
//! - `handlers`: the REST verbs of a resource, one file per verb
//!   (`endpoints/handlers`), over the store;
//! - `discovery`: the discovery and OpenAPI documents;
//! - `printers`: the Tables `kubectl get` prints;
//! - `protobuf`: the protobuf bodies kubectl sends, read as JSON;
//! - `faults`: fault injection and the request log;
//! - `respond`: queries, headers, and the responses every room writes.
#![deny(missing_docs)]
// `Status` is a plain mirror of metav1.Status that other crates build
// against; it is the error of every store call and is not boxed on purpose.
#![allow(clippy::result_large_err)]

mod admission;
mod discovery;
mod endpoints;
mod faults;
mod handlers;
mod printers;
mod protobuf;
mod respond;
pub mod server;

pub use rekon_store::{
    Conversion, Converter, DeleteOutcome, EventType, FieldSelector, LabelSelector, ListOptions,
    ObjectList, PatchType, Propagation, ResourceInfo, Status, Store, StoreConfig, WatchEvent,
    WatchId, WatchSink, WriteOptions,
};
pub use server::{
    Admission, AdmissionAttributes, AdmitFuture, Admitted, ApiServer, ApiServerBuilder, FailRule,
    Faults, RequestRecord, RunningServer, ServerError,
};
