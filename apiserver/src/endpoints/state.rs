//! What every request of a server shares.

use std::sync::Arc;
use std::time::Duration;

use rekon_store::Store;

use crate::admission::Chain;
use crate::faults::Faults;

/// The state of a running server, shared by its connections.
pub(crate) struct State {
    /// The store served.
    pub(crate) store: Store,
    /// Fault injection and the request log.
    pub(crate) faults: Faults,
    /// The address the server listens on.
    pub(crate) addr: String,
    /// How often watches with `allowWatchBookmarks` get a BOOKMARK.
    pub(crate) bookmark_interval: Duration,
    /// The admission chain of writes.
    pub(crate) admission: Arc<Chain>,
}
