//! rekon-apiserver: an in-memory Kubernetes API server that kube-rs and
//! kubectl talk to as to a real cluster, over the objects of
//! [`rekon_store`].
//!
//! Where to start: [`ApiServer::builder`], then [`RunningServer`], the
//! handle to a started server (its store, its kubeconfig, its request
//! log). With the `faults` feature, [`Faults`] injects failures, delays,
//! dropped watches and restarts, for tests.
#![deny(missing_docs)]
// `Status` is a plain mirror of metav1.Status that other crates build
// against; it is the error of every store call and is not boxed on purpose.
#![allow(clippy::result_large_err)]

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
