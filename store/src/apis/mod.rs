//! The API groups, as Kubernetes keeps them (`pkg/apis/<group>`,
//! `pkg/registry/<group>/<kind>`): for each kind, its defaults, its
//! validation and its strategy.

pub(crate) mod apiextensions;
