//! The discovery group (`pkg/apis/discovery`): EndpointSlice.

pub(crate) mod endpointslice;
