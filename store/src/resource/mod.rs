//! What a store serves: each resource's description ([`ResourceInfo`]),
//! the built-in resources of Kubernetes 1.36 (from its recorded discovery
//! documents), a custom resource's compiled schemas ([`CustomSchemas`]),
//! and the conversion between a custom resource's versions ([`Converter`]).

pub(crate) mod builtin;
pub(crate) mod conversion;
pub(crate) mod custom;
pub(crate) mod info;

pub use crate::machinery::version::version_priority;
pub use builtin::{builtin_discovery_documents, builtin_resources, is_builtin};
pub use conversion::{Conversion, Converter};
pub use custom::{CustomSchemas, Scale};
pub use info::{ALL_VERBS, ResourceInfo, Subresource};
