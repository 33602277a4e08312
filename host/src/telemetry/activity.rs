//! How much work the host has done: a count that tells a quiet host from
//! a busy one (guests instantiated, batches of informer changes). The
//! `rekon` binary gives its allocator's free memory back once it stops
//! moving; an embedding program may read it for its own purposes.

use std::sync::atomic::{AtomicU64, Ordering};

/// Work done so far in this process.
static ACTIVITY: AtomicU64 = AtomicU64::new(0);

/// Counts some work of the host (one guest instance, one batch of informer
/// changes).
pub(crate) fn note() {
    ACTIVITY.fetch_add(1, Ordering::Relaxed);
}

/// The work the hosts of this process have done so far: it moves while
/// they work and stands still while they are quiet.
pub fn activity() -> u64 {
    ACTIVITY.load(Ordering::Relaxed)
}
