//! metav1, the vocabulary of the store's calls: the options they take and the
//! results they give ([`types`]), the errors they answer with, shaped as
//! `metav1.Status` ([`status`]), field selectors ([`selector`]), and bodies
//! decoded as the real server's serializer decodes them ([`decode`]).

pub(crate) mod decode;
pub mod selector;
pub mod shard;
pub(crate) mod status;
pub(crate) mod types;
