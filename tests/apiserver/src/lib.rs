//! An in-memory Kubernetes API server and object store.
//!
//! Start with [`Store`] (module [`store`]): the objects with Kubernetes
//! semantics, usable without HTTP by offline tools and test harnesses. With
//! the `server` feature (on by default), [`ApiServer`] serves a store over
//! HTTP so that kube-rs and kubectl talk to it as to a real cluster;
//! [`RunningServer`] is the handle to a started server, with its request log
//! and fault injection.
#![deny(missing_docs)]
// `Status` is a plain mirror of metav1.Status that other crates build
// against; it is the error of every store call and is not boxed on purpose.
#![allow(clippy::result_large_err)]

pub mod store;

pub use store::{
    DeleteOutcome, EventType, FieldSelector, LabelSelector, ListOptions, ObjectList, PatchType,
    Propagation, ResourceInfo, Status, Store, StoreConfig, WatchEvent, WatchId, WatchSink,
    WriteOptions,
};

#[cfg(feature = "server")]
pub mod server;

#[cfg(feature = "server")]
pub use server::{
    ApiServer, ApiServerBuilder, FailRule, Faults, RequestRecord, RunningServer, ServerError,
};
