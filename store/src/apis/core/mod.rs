//! The core group (`pkg/apis/core`): one file per kind.

pub(crate) mod configmap;
pub(crate) mod endpoints;
pub(crate) mod event;
pub(crate) mod finalizers;
pub(crate) mod limitrange;
pub(crate) mod namespace;
pub(crate) mod node;
pub(crate) mod persistentvolume;
pub(crate) mod persistentvolumeclaim;
pub(crate) mod pod;
pub(crate) mod replicationcontroller;
pub(crate) mod resourcequota;
pub(crate) mod resources;
pub(crate) mod secret;
pub(crate) mod service;
pub(crate) mod serviceaccount;
