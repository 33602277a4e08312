//! The node group (`pkg/apis/node`): RuntimeClass.

pub(crate) mod runtimeclass;
