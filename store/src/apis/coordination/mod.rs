//! The coordination group (`pkg/apis/coordination`): one file per kind.

pub(crate) mod lease;
