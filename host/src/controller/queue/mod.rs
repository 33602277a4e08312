//! The per-module work queue: which key to reconcile next, and when.
//!
//! A [`WorkQueue`] holds the keys (object references) a module has to
//! reconcile. Workers call [`WorkQueue::next`] for a [`Ticket`], run the
//! reconcile, and give the ticket back with [`WorkQueue::finish`] and the
//! [`Completion`]. The queue guarantees, like client-go's workqueue and
//! kube-runtime's scheduler:
//!
//! - **Deduplication.** A key is pending at most once. Several requests for a
//!   pending key make one run, at the earliest time any of them asked for (an
//!   immediate [`add`](WorkQueue::add) beats a pending requeue-after or
//!   backoff). The reason kept is that of the request asking for the
//!   earliest run; on a tie — and any two requests that are both due already
//!   are a tie — the newest request's reason, which says the most about the
//!   object's current state.
//! - **One run per key at a time.** A request for a key in flight marks it
//!   dirty: the key is held and becomes ready when the run finishes. An
//!   immediate request made during the run wins over the outcome's own delay.
//! - **Requeue-after and backoff.** [`Completion::RequeueAfter`] schedules the
//!   key again after its delay; [`Completion::Failed`] with `retry` schedules it
//!   after a per-key exponential backoff
//!   (`min(backoff_base * 2^(failures - 1), backoff_max)`), reset by any
//!   success.
//! - **Bounded concurrency.** At most [`QueueConfig::concurrency`] keys are in
//!   flight; any number of tasks may wait in [`WorkQueue::next`] at once.
//! - **Priorities.** Each request has a [`Priority`]: what users cause
//!   first (`High`), then requeues and retries (`Normal`), then the
//!   initial list, resyncs and reloads (`Low`). Among due keys the highest
//!   priority goes first, in the order they became due; merged requests
//!   keep the highest priority. No starvation: once a lower priority's
//!   oldest key has waited [`QueueConfig::boost_after`], it is taken after
//!   every [`QueueConfig::boost_every`] keys of higher priority, so a
//!   stream of user changes slows a backlog but never stops it, and never
//!   waits behind it.
//!
//! Time is tokio time, so tests can pause it. Nothing polls: waiters
//! sleep until the earliest deadline or until woken by an add, a finish or a
//! shutdown.

use std::fmt;
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard};

mod state;
#[cfg(test)]
mod tests;

use state::{State, Take, deadline};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

/// How far away "never" is, for delays too long to add to an [`Instant`].
pub(super) const FAR_FUTURE: Duration = Duration::from_secs(100 * 365 * 24 * 60 * 60);

/// Tuning of a queue.
#[derive(Clone, Debug)]
pub struct QueueConfig {
    /// Most keys in flight at once (default 1; 0 is taken as 1).
    pub concurrency: usize,
    /// Delay before the first retry of a failed key (default 5 ms); each
    /// further failure in a row doubles it.
    pub backoff_base: Duration,
    /// Longest retry delay (default 1000 s).
    pub backoff_max: Duration,
    /// How long a key of lower priority waits before it is boosted
    /// (default 5 s).
    pub boost_after: Duration,
    /// Keys of higher priority taken between two boosted ones (default 4).
    pub boost_every: u32,
}

impl Default for QueueConfig {
    fn default() -> Self {
        Self {
            concurrency: 1,
            backoff_base: Duration::from_millis(5),
            backoff_max: Duration::from_secs(1000),
            boost_after: Duration::from_secs(5),
            boost_every: 4,
        }
    }
}

/// How soon a request should run, among those that are due.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Priority {
    /// What users cause: a change of a primary, owned or watched object.
    High,
    /// Requeues (`requeue-after`) and retries; the objects of the ranges a
    /// sharded replica takes over.
    Normal,
    /// The initial list, resyncs, reloads: a backlog of everything; and
    /// changes that only echo the host's own writes.
    Low,
}

impl Priority {
    /// How many priorities there are.
    pub(crate) const COUNT: usize = 3;
    /// Every priority, highest first.
    pub(crate) const ALL: [Priority; Priority::COUNT] =
        [Priority::High, Priority::Normal, Priority::Low];

    pub(crate) fn index(self) -> usize {
        self as usize
    }

    /// The metric label: `high`, `normal`, `low`.
    pub(crate) fn label(self) -> &'static str {
        match self {
            Priority::High => "high",
            Priority::Normal => "normal",
            Priority::Low => "low",
        }
    }
}

#[cfg(test)]
impl QueueConfig {
    /// Sets the most keys in flight at once (0 is taken as 1).
    #[must_use]
    pub fn concurrency(mut self, concurrency: usize) -> Self {
        self.concurrency = concurrency;
        self
    }

    /// Sets the delay before the first retry of a failed key.
    #[must_use]
    pub fn backoff_base(mut self, base: Duration) -> Self {
        self.backoff_base = base;
        self
    }

    /// Sets the longest retry delay.
    #[must_use]
    pub fn backoff_max(mut self, max: Duration) -> Self {
        self.backoff_max = max;
        self
    }
}

impl QueueConfig {
    /// The retry delay after `failures` failures in a row (at least 1):
    /// `min(backoff_base * 2^(failures - 1), backoff_max)`, without overflow.
    pub(super) fn backoff(&self, failures: u32) -> Duration {
        let doublings = failures.saturating_sub(1);
        1u32.checked_shl(doublings)
            .and_then(|factor| self.backoff_base.checked_mul(factor))
            .map_or(self.backoff_max, |delay| delay.min(self.backoff_max))
    }
}

/// What became of one processed key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Completion {
    /// Processed; the key's failure count is reset.
    Done,
    /// Processed; the key's failure count is reset and the key runs again
    /// after this delay (or sooner, if something asks for it sooner).
    RequeueAfter(Duration),
    /// The run failed; the key's failure count grows by one. With `retry`,
    /// the key runs again after the backoff for that count; without, only a
    /// later request runs it again.
    Failed {
        /// Whether the queue schedules a retry.
        retry: bool,
    },
}

/// A key handed out for processing, with why it was queued and how many
/// failures in a row preceded it.
///
/// Give every ticket back with [`WorkQueue::finish`]: until then its key
/// counts as in flight and is not handed out again.
#[derive(Debug)]
pub struct Ticket<K, R> {
    /// The key to process.
    pub key: K,
    /// Why the key was queued (see the module docs for which reason is kept
    /// when requests are merged).
    pub reason: R,
    /// The priority it was taken at.
    pub priority: Priority,
    /// Failures in a row before this run (0 after a success).
    pub attempt: u32,
    /// When the key became due: the time of the earliest request for an
    /// immediate one, the deadline for a delayed one. `now - queued_at` is
    /// time spent waiting in the queue (for a dirty key, waiting for the
    /// previous run included), not the delay that was asked for.
    pub queued_at: Instant,
}

/// The work queue of one module (see the [module docs](self)).
///
/// Cheap to clone; clones share one queue.
pub struct WorkQueue<K, R> {
    shared: Arc<Shared<K, R>>,
}

impl<K, R> Clone for WorkQueue<K, R> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

struct Shared<K, R> {
    config: QueueConfig,
    state: Mutex<State<K, R>>,
    /// Woken when waiters may find a ticket (or a nearer deadline): a key
    /// became the earliest scheduled, a run finished, or the queue shut down.
    changed: Notify,
}

impl<K, R> WorkQueue<K, R>
where
    K: Clone + Eq + Hash + Send + 'static,
    R: Clone + Send + 'static,
{
    /// An empty queue.
    pub fn new(config: QueueConfig) -> Self {
        Self {
            shared: Arc::new(Shared {
                config,
                state: Mutex::new(State::new()),
                changed: Notify::new(),
            }),
        }
    }

    /// Queues `key` to run now, at high priority. Ignored after
    /// [`shutdown`](Self::shutdown).
    #[cfg(test)]
    pub fn add(&self, key: K, reason: R) {
        self.add_with(key, reason, Priority::High);
    }

    /// Queues `key` to run now at `priority`. Ignored after
    /// [`shutdown`](Self::shutdown).
    pub fn add_with(&self, key: K, reason: R, priority: Priority) {
        self.add_after(key, reason, priority, Duration::ZERO);
    }

    /// Queues `key` to run after `delay`, unless it is already pending
    /// sooner. Ignored after [`shutdown`](Self::shutdown).
    pub fn add_after(&self, key: K, reason: R, priority: Priority, delay: Duration) {
        let now = Instant::now();
        let wake = self
            .lock()
            .request(key, reason, deadline(now, delay), priority, now);
        if wake {
            self.shared.changed.notify_waiters();
        }
    }

    /// The next key to process, or `None` once the queue is shut down.
    ///
    /// Waits until a key is due and fewer than
    /// [`concurrency`](QueueConfig::concurrency) keys are in flight; a key in
    /// flight is never handed out. Keys are handed out in the order they
    /// became due. Cancel-safe: dropping the future loses no key.
    pub async fn next(&self) -> Option<Ticket<K, R>> {
        let config = &self.shared.config;
        loop {
            // Registered before the state is read, so no wake-up between the
            // check and the wait is missed.
            let changed = self.shared.changed.notified();
            let take = {
                let mut state = self.lock();
                if state.shutdown {
                    return None;
                }
                state.take(Instant::now(), config)
            };
            match take {
                Take::Ticket(ticket) => return Some(ticket),
                Take::Until(due) => {
                    tokio::select! {
                        () = changed => {}
                        () = tokio::time::sleep_until(due) => {}
                    }
                }
                Take::Wait => changed.await,
            }
        }
    }

    /// Gives back a ticket from [`next`](Self::next) with what became of it
    /// (see [`Completion`]). If the key was requested again during the run, it
    /// is ready again now (or at the time asked for, if the outcome does not
    /// ask for an earlier one). A ticket from another queue is ignored.
    pub fn finish(&self, ticket: Ticket<K, R>, outcome: Completion) {
        let now = Instant::now();
        let config = &self.shared.config;
        let finished = self.lock().finish(ticket, outcome, now, config);
        if finished {
            self.shared.changed.notify_waiters();
        }
    }

    /// Most keys in flight at once.
    pub fn concurrency(&self) -> usize {
        self.shared.config.concurrency.max(1)
    }

    /// Pending keys, ready or delayed (dirty keys held during their run
    /// included): the queue depth.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.lock().pending
    }

    /// Pending keys by priority, highest first.
    pub fn depth_by_priority(&self) -> [usize; Priority::COUNT] {
        self.lock().pending_by
    }

    /// Whether no key is pending (keys may still be in flight).
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Keys handed out and not yet finished.
    #[cfg(test)]
    pub fn in_flight(&self) -> usize {
        self.lock().in_flight
    }

    /// Stops the queue: every waiter in [`next`](Self::next), now and later,
    /// gets `None`; pending keys are dropped and later adds ignored. Runs in
    /// flight may still be finished.
    pub fn shutdown(&self) {
        self.lock().shut_down();
        self.shared.changed.notify_waiters();
    }

    fn lock(&self) -> MutexGuard<'_, State<K, R>> {
        self.shared
            .state
            .lock()
            .expect("the queue lock is poisoned only if a key's Hash, Eq or Clone panicked")
    }
}

impl<K, R> fmt::Debug for WorkQueue<K, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut debug = f.debug_struct("WorkQueue");
        debug.field("config", &self.shared.config);
        if let Ok(state) = self.shared.state.try_lock() {
            debug
                .field("pending", &state.pending)
                .field("in_flight", &state.in_flight)
                .field("shutdown", &state.shutdown);
        }
        debug.finish_non_exhaustive()
    }
}
