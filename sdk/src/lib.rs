//! Write Kubernetes reconcilers as WebAssembly components for the rekon host.
//!
//! # Where to start
//!
//! A reconciler is a type implementing [`Reconciler`]: a [`Manifest`] saying
//! what it reconciles and may do, and a `reconcile` function called with a
//! fresh instance for every object that needs attention. Put
//! `#[rekon_sdk::reconciler]` on the impl: on `wasm32` it exports the
//! component's `manifest` and `reconcile`; elsewhere it does nothing, so the
//! same code runs in native tests through [`testing::FakeCluster`].
//!
//! ```
//! use rekon_sdk::prelude::*;
//! use rekon_sdk::k8s_openapi::api::core::v1::ConfigMap;
//!
//! struct Hello;
//!
//! #[rekon_sdk::reconciler]
//! impl Reconciler for Hello {
//!     fn manifest() -> Manifest {
//!         Manifest::new("hello", Gvk::of::<ConfigMap>())
//!     }
//!
//!     fn reconcile(req: Request) -> Result<Action, Error> {
//!         let Some(cm) = req.object_as::<ConfigMap>()? else {
//!             return Ok(Action::Done); // gone
//!         };
//!         if cm.data.unwrap_or_default().get("greeting").is_none() {
//!             let patch = json!({"data": {"greeting": "hello"}});
//!             api::patch::<ConfigMap>(Some(req.namespace()), req.name(), &PatchType::Merge, &patch)?;
//!         }
//!         Ok(Action::Done)
//!     }
//! }
//! # #[cfg(not(target_arch = "wasm32"))]
//! # {
//! let cluster = rekon_sdk::testing::FakeCluster::from_yaml(
//!     "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c, namespace: default}\n",
//! ).expect("valid fixtures");
//! cluster.reconcile::<Hello>(Some("default"), "c").expect("reconciles");
//! assert_eq!(cluster.writes().len(), 1);
//! # }
//! ```
//!
//! Then the pieces, from high to low level:
//! - [`api`]: typed helpers (get, list, apply, patch_status, delete,
//!   finalizers, owner references, events, logs);
//! - [`webhook`]: admission (validating, defaulting) and conversion
//!   webhooks, exported with `#[reconciler(webhook)]` or `#[webhook]`;
//! - [`crd`]: CustomResourceDefinitions from your types
//!   (`#[derive(CustomResource)]`), shipped in the module through
//!   [`Reconciler::crds`];
//! - [`conditions`]: status conditions with correct `lastTransitionTime`;
//! - [`arena`]: a bump allocator for a guest's `#[global_allocator]`
//!   (every reconcile runs on a fresh instance);
//! - [`raw`]: one function per host import, JSON strings in and out;
//! - [`testing`] (not on `wasm32`): the native test harness.
//!
//! A plain function works too; the macro names a unit struct after it
//! (`sync_things` -> `SyncThings`) for tests:
//!
//! ```
//! use rekon_sdk::prelude::*;
//!
//! fn manifest() -> Manifest {
//!     Manifest::new("things", Gvk::new("demo.rekon.dev", "v1", "Thing"))
//! }
//!
//! #[rekon_sdk::reconciler(manifest = manifest)]
//! pub fn sync_things(req: Request) -> Result<Action, Error> {
//!     Ok(Action::Done)
//! }
//!
//! assert_eq!(<SyncThings as Reconciler>::manifest().name, "things");
//! ```
//!
//! `#[reconciler]` refuses what it cannot export, with an error pointing
//! at the culprit: an item that is neither an impl nor a function, an impl
//! of another trait or an inherent impl, a generic impl or function, a
//! function without `manifest = ...` or with the wrong arguments.
//!
//! ```compile_fail
//! #[rekon_sdk::reconciler]
//! fn reconcile(req: rekon_sdk::Request) -> Result<rekon_sdk::Action, rekon_sdk::Error> {
//!     Ok(rekon_sdk::Action::Done)
//! } // error: #[reconciler] on a function needs its manifest
//! ```
//!
//! ```compile_fail
//! #[rekon_sdk::reconciler]
//! struct NotAnImpl; // error: #[reconciler] goes on `impl Reconciler for YourType { ... }` ...
//! ```
//!
//! ```compile_fail
//! struct NotAReconciler;
//! #[rekon_sdk::reconciler]
//! impl NotAReconciler {} // error: #[reconciler] needs a trait impl
//! ```
//!
//! ```compile_fail
//! # use rekon_sdk::prelude::*;
//! struct Generic<T>(T);
//! #[rekon_sdk::reconciler]
//! impl<T> Reconciler for Generic<T> { // error: an exported reconciler cannot be generic
//!     fn manifest() -> Manifest { unimplemented!() }
//!     fn reconcile(_: Request) -> Result<Action, Error> { unimplemented!() }
//! }
//! ```
//!
//! Build the component with `cargo build --target wasm32-wasip2 --release`
//! (the crate must be a `cdylib`).
#![deny(missing_docs)]
// The harness (and the links to it) exists only on native targets.
#![cfg_attr(target_arch = "wasm32", allow(rustdoc::broken_intra_doc_links))]

extern crate self as rekon_sdk;

pub mod api;
// An allocator is unsafe code by nature; it is kept to this module.
#[allow(unsafe_code)]
pub mod arena;
pub mod conditions;
#[cfg(target_arch = "wasm32")]
mod convert;
pub mod crd;
mod manifest;
pub mod raw;
mod types;
pub mod webhook;

#[doc(hidden)]
pub mod export;

#[cfg(not(target_arch = "wasm32"))]
mod backend;
#[cfg(not(target_arch = "wasm32"))]
pub mod testing;

pub use manifest::{
    Index, IndexKey, Manifest, Mapping, Owned, Permission, Predicate, Verbs, Watch,
};
pub use rekon_sdk_macros::{reconciler, webhook};
pub use types::{
    Action, ApiError, Error, EventType, Gvk, Level, ObjectRef, PatchType, Propagation, Reason,
    Request,
};

pub use k8s_openapi;
pub use schemars;
pub use serde;
pub use serde_json;

/// The generated bindings of the `reconciler` world (only on `wasm32`).
#[cfg(target_arch = "wasm32")]
#[allow(missing_docs, unsafe_code, clippy::all)]
pub mod bindings {
    wit_bindgen::generate!({
        path: "../wit",
        world: "reconciler",
        pub_export_macro: true,
        default_bindings_module: "::rekon_sdk::bindings",
        runtime_path: "::rekon_sdk::__private::wit_bindgen::rt",
        bitflags_path: "::rekon_sdk::__private::wit_bindgen::rt::bitflags",
    });
}

/// The generated bindings of the `webhook` world (only on `wasm32`), on
/// the types of [`bindings`].
#[cfg(target_arch = "wasm32")]
#[allow(missing_docs, unsafe_code, clippy::all)]
pub mod bindings_webhook {
    wit_bindgen::generate!({
        path: "../wit",
        world: "webhook",
        pub_export_macro: true,
        default_bindings_module: "::rekon_sdk::bindings_webhook",
        runtime_path: "::rekon_sdk::__private::wit_bindgen::rt",
        bitflags_path: "::rekon_sdk::__private::wit_bindgen::rt::bitflags",
        with: {
            "rekon:reconciler/types@0.4.0": crate::bindings::rekon::reconciler::types,
            "rekon:reconciler/cluster@0.4.0": crate::bindings::rekon::reconciler::cluster,
            "rekon:reconciler/log@0.4.0": crate::bindings::rekon::reconciler::log,
        },
    });
}

/// The generated bindings of the `operator` world (only on `wasm32`), on
/// the types of [`bindings`] and [`bindings_webhook`].
#[cfg(target_arch = "wasm32")]
#[allow(missing_docs, unsafe_code, clippy::all)]
pub mod bindings_operator {
    wit_bindgen::generate!({
        path: "../wit",
        world: "operator",
        pub_export_macro: true,
        default_bindings_module: "::rekon_sdk::bindings_operator",
        runtime_path: "::rekon_sdk::__private::wit_bindgen::rt",
        bitflags_path: "::rekon_sdk::__private::wit_bindgen::rt::bitflags",
        with: {
            "rekon:reconciler/types@0.4.0": crate::bindings::rekon::reconciler::types,
            "rekon:reconciler/webhook-types@0.4.0": crate::bindings_webhook::rekon::reconciler::webhook_types,
            "rekon:reconciler/cluster@0.4.0": crate::bindings::rekon::reconciler::cluster,
            "rekon:reconciler/log@0.4.0": crate::bindings::rekon::reconciler::log,
        },
    });
}

/// What the code `#[reconciler]` emits refers to. Not a public API.
#[doc(hidden)]
pub mod __private {
    pub use crate::export::{Export, ExportOperator, ExportWebhook};
    #[cfg(target_arch = "wasm32")]
    pub use wit_bindgen;
}

/// A reconciler: what it is, and how it makes the cluster match an object.
///
/// Put `#[rekon_sdk::reconciler]` on the impl to export it as a component.
pub trait Reconciler {
    /// Describes the reconciler: called once when the module is loaded.
    fn manifest() -> Manifest;

    /// Reconciles one object. Keep no state between calls: every call runs
    /// in a fresh instance.
    fn reconcile(request: Request) -> Result<Action, Error>;

    /// The CustomResourceDefinitions the module defines (usually the
    /// primary kind's), shipped inside the component: `rekon crd` prints
    /// them, `rekon dev` installs them, `rekon run --install-crds` applies
    /// them. Build them from your types with
    /// [`#[derive(CustomResource)]`](crate::crd). None by default.
    fn crds() -> Vec<serde_json::Value> {
        Vec::new()
    }
}

/// The common imports of a reconciler: `use rekon_sdk::prelude::*;`.
pub mod prelude {
    pub use crate::conditions::{Condition, set_condition};
    pub use crate::{
        Action, ApiError, Error, EventType, Gvk, IndexKey, Level, Manifest, Mapping, ObjectRef,
        PatchType, Predicate, Reason, Reconciler, Request, Verbs, Watch, api,
    };
    pub use serde_json::{Value, json};
}
