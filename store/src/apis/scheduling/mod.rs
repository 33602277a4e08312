//! The scheduling group (`pkg/apis/scheduling`,
//! `pkg/registry/scheduling`): PriorityClass, with the system priority
//! classes the real server creates at start and refuses to delete.

pub(crate) mod priorityclass;
