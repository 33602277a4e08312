//! The kinds with rules of their own, one file each.

pub(crate) mod crd;
pub(crate) mod custom;
pub(crate) mod namespace;
