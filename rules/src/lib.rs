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
//! modules), and [`diff_lines`], how every rekon tool shows two texts
//! that differ. Nothing here does I/O or keeps state.
#![deny(missing_docs)]

mod diff;
mod index;
mod labels;
mod permissions;

pub use diff::diff_lines;
pub use index::{IndexKeyRef, index_keys, valid_field_path};
pub use labels::{LabelSelector, SelectorError};
pub use permissions::{Grant, KindRef, denial_message, is_allowed};

/// The 64-bit FNV-1a hash of `bytes` (Go's `hash/fnv` `New64a`): what a
/// shard selector hashes an object's uid or namespace with, and the
/// stable hash of rekon's own choices (which objects a canary serves,
/// which modules a replica prefers).
pub fn fnv1a64(bytes: impl IntoIterator<Item = u8>) -> u64 {
    bytes.into_iter().fold(0xcbf2_9ce4_8422_2325, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Longest Event reason a real API server takes.
pub const MAX_EVENT_REASON: usize = 128;
