//! The resource.k8s.io group (`pkg/apis/resource`): of its kinds, only
//! what a ResourceSlice is selected by.

pub(crate) mod resourceslice;
