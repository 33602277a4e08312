//! rekon-store: Kubernetes objects in memory, with the semantics of a real
//! API server and no HTTP.
//!
//! [`Store`] keeps objects with one resourceVersion counter for the whole
//! store, uid and creationTimestamp, generation (bumped by spec changes
//! only), the status subresource, finalizers and deletionTimestamp,
//! ownerReference garbage collection, namespace deletion, label and field
//! selectors, paginated lists, server-side apply with managedFields, and a
//! history of watch events so watches resume from a resourceVersion (or get
//! a 410 Gone when it is too old).
//!
//! It is the single implementation behind the HTTP API server
//! (`rekon-apiserver`), the offline `rekon reconcile` command and the SDK's
//! native test harness. Where to start: [`Store::new`], then
//! [`Store::apply_object`], [`Store::get`], [`Store::list`] and the writes.
//!
//! Inside, one file per concern, the way kube-apiserver keeps a strategy
//! per resource: [`resource`] (what is served), `store` (the API), `objects`
//! (commit, resourceVersions, validation), `write` and `apply` (the writes),
//! `delete` and `gc` (deletion, garbage collection), `watch` (history and
//! watches), `managed` (managedFields), and `kinds/` for the kinds with
//! rules of their own (Namespace, CustomResourceDefinition, Event,
//! the reviews that are answered, not stored).
#![deny(missing_docs)]
// `Status` is a plain mirror of metav1.Status that other crates build
// against; it is the error of every store call and is not boxed on purpose.
#![allow(clippy::result_large_err)]

mod api;
mod apis;
pub mod calls;
mod fieldmanager;
mod go;
mod machinery;
mod registry;
pub mod resource;
pub mod schema;
mod store;

#[cfg(test)]
mod tests;

pub use crate::store::handle::Store;
/// Field selectors (the old path of `api::selector`).
pub use api::selector;
pub use api::selector::{FieldLabels, FieldSelector, LabelSelector};
pub use api::status::Status;
pub use api::types::{
    DeleteOutcome, EventType, FieldValidation, ListOptions, ObjectList, PatchType, Propagation,
    StoreConfig, Warnings, WatchEvent, WatchId, WatchSink, WriteOptions,
};
pub use apis::reviews::answer as answer_review;
/// Go's `encoding/json` syntax errors and kind names (the old path of [`go::json`]).
pub use go::json as gojson;
/// Duplicate fields in a JSON body (the old path of `go::json::duplicates`).
pub use go::json::duplicates;
/// Field errors (the old path of `machinery::field`).
pub use machinery::field;
/// The checks of an object's metadata (the old path of `machinery::objectmeta`).
pub use machinery::objectmeta as metadata;
pub use resource::{
    Conversion, Converter, CustomSchemas, ResourceInfo, Subresource, builtin_resources, is_builtin,
};
