//! rekon-rules: the rules of rekon's contract (`wit/reconciler.wit`) that
//! every implementation of its host calls applies alike — the host library
//! against a cluster, the embedded Kubernetes behind `rekon dev` and
//! `rekon test`, and the SDK's native test harness — so that a module
//! meets the same answers everywhere.
//!
//! Where to start: [`LabelSelector`] (the selectors manifests, calls and
//! webhook configurations carry, parsed as Kubernetes parses them),
//! [`index_keys`] (what a cache index keys an object by), and
//! [`is_allowed`] with [`denial_message`] (the permission rule of
//! modules), [`ShardRanges`] (which objects of a sharded module a
//! replica owns), and [`diff_lines`], how every rekon tool shows two texts
//! that differ; [`storage_version_hash`], discovery's mark of a storage
//! version. Nothing here does I/O or keeps state.
#![deny(missing_docs)]

mod diff;
mod discovery;
mod index;
mod labels;
mod permissions;
mod shard;

pub use diff::diff_lines;
pub use discovery::storage_version_hash;
pub use index::{IndexKeyRef, index_keys, valid_field_path};
pub use labels::{LabelSelector, SelectorError};
pub use permissions::{Grant, KindRef, denial_message, is_allowed};
pub use shard::{SHARD_SLOTS, ShardRanges, fnv1a64, shard_point};

/// Longest Event reason a real API server takes.
pub const MAX_EVENT_REASON: usize = 128;
