//! The policy group (`pkg/apis/policy`): one file per kind.

pub(crate) mod poddisruptionbudget;
