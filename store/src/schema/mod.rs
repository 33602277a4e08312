//! The structural schema of custom resources, as apiextensions-apiserver
//! applies it: each concern in a module of its own, as
//! `pkg/apiserver/schema` keeps them apart.
//!
//! - [`props`]: the `openAPIV3Schema` read into [`Schema`];
//! - [`validate`]: the OpenAPI validation of an object (kube-openapi's
//!   validator: types, formats, enum, required, bounds, lengths, items,
//!   properties), as field errors, with ratcheting on update;
//! - [`listtype`]: `x-kubernetes-list-type` set and map: no duplicates;
//! - [`objectmeta`]: the metadata of embedded resources;
//! - [`cel`]: `x-kubernetes-validations` rules;
//! - [`defaulting`], [`pruning`]: `default:` values, and unknown fields;
//! - [`coerce`]: all the decoder does to a custom resource (pruning,
//!   nulls, embedded metadata), before any strategy sees it;
//! - [`structural`]: the structural schema's own checks (what a CRD's
//!   schema must be).

pub mod cel;
pub mod coerce;
pub mod defaulting;
pub mod listtype;
pub mod objectmeta;
pub mod props;
pub mod pruning;
pub mod structural;
pub mod validate;

pub use props::{Additional, Rule, Schema};
