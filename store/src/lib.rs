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
//! [`Store::apply_object`], [`Store::get`], [`Store::list`] and the writes;
//! a write goes from the handle (`store/`) to the generic registry
//! (`registry/create.rs`, `update.rs`, `patch.rs`, `delete.rs`), which
//! asks the kind's strategy (`apis/`) for its defaults and validation.
//!
//! The rooms, laid out as Kubernetes lays out its own, in data-path order
//! (each imports only the ones after it; ARCHITECTURE.md has the plan):
//! - [`calls`]: the host's calls, as the host's modules make them;
//! - `store`: the [`Store`] handle: reads, writes, lists, watches,
//!   snapshots;
//! - `registry`: the generic registry (apiserver's `registry/generic`):
//!   the objects, the write path, apply and patches, delete and garbage
//!   collection, watch history;
//! - `apis`: one folder per API group, each kind's defaults, validation
//!   and strategy (`pkg/apis/<group>`, `pkg/registry/<group>/<kind>`);
//!   `apis/apiextensions` holds the CRD's own validation;
//! - `fieldmanager`: managedFields and server-side apply's field sets;
//! - `meta`: metav1's vocabulary: the options and results of the calls,
//!   [`Status`], selectors;
//! - [`resource`]: what is served: built-in resources, custom resources
//!   from CRDs, conversion;
//! - [`schema`]: the structural schema of custom resources (validation,
//!   defaulting, pruning, list types, embedded object meta, CEL with one
//!   file per library, and the decoding of a custom resource);
//! - `machinery`: apimachinery: field errors, name and label checks,
//!   object meta checks, quantities, conditions, version priority;
//! - `go`: one home per Go behaviour re-made (JSON errors, regexp, time,
//!   net and CIDR, url, mail, strconv, cron, `%v`).
#![deny(missing_docs)]
// `Status` is a plain mirror of metav1.Status that other crates build
// against; it is the error of every store call and is not boxed on purpose.
#![allow(clippy::result_large_err)]

mod apis;
pub mod calls;
mod fieldmanager;
mod go;
mod machinery;
mod meta;
mod registry;
pub mod resource;
pub mod schema;
mod store;

#[cfg(test)]
mod tests;

pub use crate::store::handle::Store;
pub use apis::reviews::answer as answer_review;
/// Go's `encoding/json` syntax errors and kind names (the old path of [`go::json`]).
pub use go::json as gojson;
/// Duplicate fields in a JSON body (the old path of `go::json::duplicates`).
pub use go::json::duplicates;
/// Field errors (the old path of `machinery::field`).
pub use machinery::field;
/// The checks of an object's metadata (the old path of `machinery::objectmeta`).
pub use machinery::objectmeta as metadata;
/// Field selectors (the old path of `meta::selector`).
pub use meta::selector;
pub use meta::selector::{FieldLabels, FieldSelector, LabelSelector};
/// Shard selectors (`shardSelector`, KEP-5866) and their hash.
pub use meta::shard;
pub use meta::status::Status;
pub use meta::types::{
    DeleteOutcome, Deletion, EventType, FieldValidation, ListOptions, ObjectList, PatchType,
    Preconditions, Propagation, StoreConfig, Warnings, WatchEvent, WatchId, WatchSink,
    WriteOptions,
};
pub use registry::scale::ScaleWrite;
pub use resource::{
    Conversion, Converter, CustomSchemas, ResourceInfo, Subresource, builtin_resources, is_builtin,
};
