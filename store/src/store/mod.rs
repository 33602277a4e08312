//! The [`Store`]: the handle an embedder holds, cheap to clone, over the
//! registry behind one lock. Its calls, by job: the resources served
//! ([`resources`]), reads and lists with their pages ([`read`],
//! [`paging`]), writes ([`write`]), fixtures ([`fixtures`]), watches
//! ([`watch`]) and snapshots ([`snapshot`]).

pub(crate) mod fixtures;
pub(crate) mod handle;
pub(crate) mod paging;
pub(crate) mod read;
pub(crate) mod resources;
pub(crate) mod snapshot;
pub(crate) mod watch;
pub(crate) mod write;
