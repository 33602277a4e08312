//! The storage group (`pkg/apis/storage`, `pkg/registry/storage`): one
//! file per kind: a StorageClass's defaults and immutable fields, a
//! CSIDriver's defaults, immutable fields and warnings.

pub(crate) mod csidriver;
pub(crate) mod storageclass;
