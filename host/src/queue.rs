//! The per-module work queue: which key to reconcile next, and when.
//!
//! A [`WorkQueue`] holds the keys (object references) a module has to
//! reconcile. Workers call [`WorkQueue::next`] for a [`Lease`], run the
//! reconcile, and give the lease back with [`WorkQueue::finish`] and the
//! [`Outcome`]. The queue guarantees, like client-go's workqueue and
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
//! - **Requeue-after and backoff.** [`Outcome::RequeueAfter`] schedules the
//!   key again after its delay; [`Outcome::Failed`] with `retry` schedules it
//!   after a per-key exponential backoff
//!   (`min(backoff_base * 2^(failures - 1), backoff_max)`), reset by any
//!   success.
//! - **Bounded concurrency.** At most [`QueueConfig::concurrency`] keys are in
//!   flight; any number of tasks may wait in [`WorkQueue::next`] at once.
//!
//! Time is tokio time, so tests can pause it. Nothing polls: waiters
//! sleep until the earliest deadline or until woken by an add, a finish or a
//! shutdown.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::hash::Hash;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

/// How far away "never" is, for delays too long to add to an [`Instant`].
const FAR_FUTURE: Duration = Duration::from_secs(100 * 365 * 24 * 60 * 60);

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
}

impl Default for QueueConfig {
    fn default() -> Self {
        Self {
            concurrency: 1,
            backoff_base: Duration::from_millis(5),
            backoff_max: Duration::from_secs(1000),
        }
    }
}

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

    /// The retry delay after `failures` failures in a row (at least 1):
    /// `min(backoff_base * 2^(failures - 1), backoff_max)`, without overflow.
    fn backoff(&self, failures: u32) -> Duration {
        let doublings = failures.saturating_sub(1);
        1u32.checked_shl(doublings)
            .and_then(|factor| self.backoff_base.checked_mul(factor))
            .map_or(self.backoff_max, |delay| delay.min(self.backoff_max))
    }
}

/// What became of one processed key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
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
/// Give every lease back with [`WorkQueue::finish`]: until then its key
/// counts as in flight and is not handed out again.
#[derive(Debug)]
pub struct Lease<K, R> {
    /// The key to process.
    pub key: K,
    /// Why the key was queued (see the module docs for which reason is kept
    /// when requests are merged).
    pub reason: R,
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
    /// Woken when waiters may find a lease (or a nearer deadline): a key
    /// became the earliest scheduled, a run finished, or the queue shut down.
    changed: Notify,
}

struct State<K, R> {
    /// Every key that is pending, in flight, or has failures on record.
    entries: HashMap<K, Entry<R>>,
    /// Pending keys that are not in flight, by (due, sequence number).
    schedule: BTreeMap<(Instant, u64), K>,
    next_seq: u64,
    /// Pending keys, dirty keys held during their run included.
    pending: usize,
    in_flight: usize,
    shutdown: bool,
}

struct Entry<R> {
    pending: Option<Pending<R>>,
    in_flight: bool,
    failures: u32,
}

struct Pending<R> {
    due: Instant,
    seq: u64,
    reason: R,
}

/// What a waiter found.
enum Take<K, R> {
    Lease(Lease<K, R>),
    /// Nothing is ready before this deadline.
    Until(Instant),
    /// Nothing can be taken until the queue changes.
    Wait,
}

/// A request's time for comparisons: anything due already counts as now.
fn effective(due: Instant, now: Instant) -> Instant {
    due.max(now)
}

fn deadline(now: Instant, delay: Duration) -> Instant {
    now.checked_add(delay)
        .or_else(|| now.checked_add(FAR_FUTURE))
        .expect("an instant a century ahead is representable")
}

impl<K, R> State<K, R> {
    fn new() -> Self {
        Self {
            entries: HashMap::new(),
            schedule: BTreeMap::new(),
            next_seq: 0,
            pending: 0,
            in_flight: 0,
            shutdown: false,
        }
    }
}

impl<K, R> State<K, R>
where
    K: Clone + Eq + Hash,
{
    /// Merges a request for `key` into the queue; returns whether waiters
    /// should be woken (the key became the earliest scheduled one).
    fn request(&mut self, key: K, reason: R, due: Instant, now: Instant) -> bool {
        if self.shutdown {
            return false;
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        let entry = self.entries.entry(key.clone()).or_insert(Entry {
            pending: None,
            in_flight: false,
            failures: 0,
        });
        let slot = match &mut entry.pending {
            None => {
                entry.pending = Some(Pending { due, seq, reason });
                self.pending += 1;
                if entry.in_flight {
                    return false;
                }
                self.schedule.insert((due, seq), key);
                (due, seq)
            }
            Some(pending) => {
                if effective(due, now) <= effective(pending.due, now) {
                    pending.reason = reason;
                }
                if due >= pending.due {
                    return false;
                }
                let old = (pending.due, pending.seq);
                pending.due = due;
                if entry.in_flight {
                    return false;
                }
                let key = self
                    .schedule
                    .remove(&old)
                    .expect("a pending key that is not in flight is scheduled");
                self.schedule.insert((due, old.1), key);
                (due, old.1)
            }
        };
        self.schedule.first_key_value().map(|(first, _)| *first) == Some(slot)
    }

    fn take(&mut self, now: Instant, concurrency: usize) -> Take<K, R> {
        if self.in_flight >= concurrency {
            return Take::Wait;
        }
        let Some(first) = self.schedule.first_entry() else {
            return Take::Wait;
        };
        let due = first.key().0;
        if due > now {
            return Take::Until(due);
        }
        let key = first.remove();
        let entry = self
            .entries
            .get_mut(&key)
            .expect("a scheduled key has an entry");
        let pending = entry.pending.take().expect("a scheduled key is pending");
        entry.in_flight = true;
        self.pending -= 1;
        self.in_flight += 1;
        Take::Lease(Lease {
            key,
            reason: pending.reason,
            attempt: entry.failures,
            queued_at: pending.due,
        })
    }

    /// Ends the run of `lease`; returns whether it was in flight here.
    fn finish(
        &mut self,
        lease: Lease<K, R>,
        outcome: Outcome,
        now: Instant,
        config: &QueueConfig,
    ) -> bool {
        let Lease { key, reason, .. } = lease;
        let Some(entry) = self.entries.get_mut(&key) else {
            return false;
        };
        if !entry.in_flight {
            return false;
        }
        entry.in_flight = false;
        self.in_flight -= 1;
        if self.shutdown {
            self.entries.remove(&key);
            return true;
        }
        let again = match outcome {
            Outcome::Done => {
                entry.failures = 0;
                None
            }
            Outcome::RequeueAfter(delay) => {
                entry.failures = 0;
                Some(delay)
            }
            Outcome::Failed { retry } => {
                entry.failures = entry.failures.saturating_add(1);
                retry.then(|| config.backoff(entry.failures))
            }
        };
        if let Some(delay) = again {
            let due = deadline(now, delay);
            match &mut entry.pending {
                // A request made during the run keeps its reason unless the
                // outcome asks for a strictly earlier run.
                Some(dirty) => {
                    if effective(due, now) < effective(dirty.due, now) {
                        dirty.due = due;
                        dirty.reason = reason;
                    }
                }
                None => {
                    let seq = self.next_seq;
                    self.next_seq += 1;
                    entry.pending = Some(Pending { due, seq, reason });
                    self.pending += 1;
                }
            }
        }
        match &entry.pending {
            Some(pending) => {
                self.schedule.insert((pending.due, pending.seq), key);
            }
            // Nothing to remember: forget the key. A key that failed without
            // retry keeps its count until a later run succeeds (in a
            // controller, the object's deletion is such a run).
            None if entry.failures == 0 => {
                self.entries.remove(&key);
            }
            None => {}
        }
        true
    }

    fn shut_down(&mut self) {
        self.shutdown = true;
        self.schedule.clear();
        self.pending = 0;
        self.entries.retain(|_, entry| {
            entry.pending = None;
            entry.in_flight
        });
    }
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

    /// Queues `key` to run now. Ignored after [`shutdown`](Self::shutdown).
    pub fn add(&self, key: K, reason: R) {
        self.add_after(key, reason, Duration::ZERO);
    }

    /// Queues `key` to run after `delay`, unless it is already pending
    /// sooner. Ignored after [`shutdown`](Self::shutdown).
    pub fn add_after(&self, key: K, reason: R, delay: Duration) {
        let now = Instant::now();
        let wake = self.lock().request(key, reason, deadline(now, delay), now);
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
    pub async fn next(&self) -> Option<Lease<K, R>> {
        let concurrency = self.shared.config.concurrency.max(1);
        loop {
            // Registered before the state is read, so no wake-up between the
            // check and the wait is missed.
            let changed = self.shared.changed.notified();
            let take = {
                let mut state = self.lock();
                if state.shutdown {
                    return None;
                }
                state.take(Instant::now(), concurrency)
            };
            match take {
                Take::Lease(lease) => return Some(lease),
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

    /// Gives back a lease from [`next`](Self::next) with what became of it
    /// (see [`Outcome`]). If the key was requested again during the run, it
    /// is ready again now (or at the time asked for, if the outcome does not
    /// ask for an earlier one). A lease from another queue is ignored.
    pub fn finish(&self, lease: Lease<K, R>, outcome: Outcome) {
        let now = Instant::now();
        let config = &self.shared.config;
        let finished = self.lock().finish(lease, outcome, now, config);
        if finished {
            self.shared.changed.notify_waiters();
        }
    }

    /// Pending keys, ready or delayed (dirty keys held during their run
    /// included): the queue depth.
    pub fn len(&self) -> usize {
        self.lock().pending
    }

    /// Whether no key is pending (keys may still be in flight).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Keys handed out and not yet finished.
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

#[cfg(test)]
mod tests {
    //! The state machine is tested on a simulated clock (explicit instants,
    //! jumped to the next deadline like paused tokio time), so every timing
    //! is asserted exactly and nothing sleeps. The async layer (waking,
    //! concurrency across tasks, shutdown) is tested on a real runtime
    //! without depending on timing, except one short deadline.

    use std::collections::HashSet;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use futures::FutureExt;
    use tokio::time::timeout;

    use super::*;

    const MS: Duration = Duration::from_millis(1);
    const SEC: Duration = Duration::from_secs(1);
    /// Only reached if a waiter is never woken: fails the test instead of
    /// hanging it.
    const HANG: Duration = Duration::from_secs(10);

    type Key = &'static str;
    type Why = &'static str;

    /// A queue's state driven by a simulated clock.
    struct Sim {
        state: State<Key, Why>,
        config: QueueConfig,
        start: Instant,
        now: Instant,
    }

    impl Sim {
        fn new(concurrency: usize) -> Self {
            Self::with(QueueConfig::default().concurrency(concurrency))
        }

        fn with(config: QueueConfig) -> Self {
            let start = Instant::now();
            Self {
                state: State::new(),
                config,
                start,
                now: start,
            }
        }

        fn elapsed(&self) -> Duration {
            self.now - self.start
        }

        fn advance(&mut self, by: Duration) {
            self.now += by;
        }

        fn add(&mut self, key: Key, reason: Why) {
            self.add_after(key, reason, Duration::ZERO);
        }

        fn add_after(&mut self, key: Key, reason: Why, delay: Duration) {
            let due = deadline(self.now, delay);
            self.state.request(key, reason, due, self.now);
        }

        /// A lease due now, without moving the clock.
        fn try_now(&mut self) -> Option<Lease<Key, Why>> {
            match self.state.take(self.now, self.config.concurrency.max(1)) {
                Take::Lease(lease) => Some(lease),
                Take::Until(_) | Take::Wait => None,
            }
        }

        /// The next lease, the clock jumped to when it is due; `None` if no
        /// key can be handed out whatever the time.
        fn next(&mut self) -> Option<Lease<Key, Why>> {
            loop {
                match self.state.take(self.now, self.config.concurrency.max(1)) {
                    Take::Lease(lease) => return Some(lease),
                    Take::Until(due) => self.now = due,
                    Take::Wait => return None,
                }
            }
        }

        fn lease(&mut self) -> Lease<Key, Why> {
            self.next().expect("a key can be handed out")
        }

        /// How long until the next key is due, if any can be handed out.
        fn due_in(&self) -> Option<Duration> {
            if self.state.in_flight >= self.config.concurrency.max(1) {
                return None;
            }
            let (&(due, _), _) = self.state.schedule.first_key_value()?;
            Some(due.saturating_duration_since(self.now))
        }

        fn finish(&mut self, lease: Lease<Key, Why>, outcome: Outcome) {
            assert!(self.state.finish(lease, outcome, self.now, &self.config));
        }
    }

    #[test]
    fn config_defaults_and_setters() {
        let config = QueueConfig::default();
        assert_eq!(config.concurrency, 1);
        assert_eq!(config.backoff_base, 5 * MS);
        assert_eq!(config.backoff_max, 1000 * SEC);
        let config = config.concurrency(8).backoff_base(MS).backoff_max(2 * SEC);
        assert_eq!(config.concurrency, 8);
        assert_eq!(config.backoff_base, MS);
        assert_eq!(config.backoff_max, 2 * SEC);
    }

    #[test]
    fn backoff_doubles_and_caps_without_overflow() {
        let config = QueueConfig::default();
        let cases = [
            ("first failure", 1, 5 * MS),
            ("second", 2, 10 * MS),
            ("third", 3, 20 * MS),
            ("fourth", 4, 40 * MS),
            ("last below the cap", 18, 655_360 * MS),
            ("first at the cap", 19, 1000 * SEC),
            ("shift past 32 bits", 40, 1000 * SEC),
            ("count saturated", u32::MAX, 1000 * SEC),
        ];
        for (name, failures, expected) in cases {
            assert_eq!(config.backoff(failures), expected, "{name}");
        }
        let huge = QueueConfig::default()
            .backoff_base(Duration::MAX)
            .backoff_max(7 * SEC);
        assert_eq!(huge.backoff(3), 7 * SEC, "multiplication overflow");
    }

    #[test]
    fn dedup_of_pending_keys() {
        let mut q = Sim::new(1);
        q.add("a", "first");
        q.add("b", "only");
        q.advance(MS);
        q.add("a", "second");
        q.add("a", "third");
        assert_eq!(q.state.pending, 2);

        let a = q.lease();
        assert_eq!(
            (a.key, a.reason),
            ("a", "third"),
            "newest reason of due requests"
        );
        assert_eq!(a.queued_at, q.start, "due since the first add");
        q.finish(a, Outcome::Done);
        let b = q.lease();
        assert_eq!(b.key, "b");
        q.finish(b, Outcome::Done);

        assert_eq!(q.state.pending, 0);
        assert!(q.next().is_none(), "a key pending thrice runs once");
        assert!(q.state.entries.is_empty(), "nothing kept for finished keys");
    }

    #[test]
    fn earlier_add_beats_later_delayed_add() {
        struct Case {
            name: &'static str,
            requests: Vec<(Why, Duration)>,
            runs_after: Duration,
            reason: Why,
        }
        let cases = [
            Case {
                name: "immediate, then delayed",
                requests: vec![
                    ("event", Duration::ZERO),
                    ("requeue", Duration::from_secs(10)),
                ],
                runs_after: Duration::ZERO,
                reason: "event",
            },
            Case {
                name: "delayed, then immediate",
                requests: vec![
                    ("requeue", Duration::from_secs(10)),
                    ("event", Duration::ZERO),
                ],
                runs_after: Duration::ZERO,
                reason: "event",
            },
            Case {
                name: "three delays",
                requests: vec![
                    ("later", Duration::from_secs(20)),
                    ("sooner", Duration::from_secs(5)),
                    ("latest", Duration::from_secs(30)),
                ],
                runs_after: Duration::from_secs(5),
                reason: "sooner",
            },
            Case {
                name: "equal delays: the newest reason",
                requests: vec![
                    ("one", Duration::from_secs(5)),
                    ("two", Duration::from_secs(5)),
                ],
                runs_after: Duration::from_secs(5),
                reason: "two",
            },
        ];
        for case in cases {
            let mut q = Sim::new(1);
            for &(reason, delay) in &case.requests {
                q.add_after("a", reason, delay);
            }
            assert_eq!(q.state.pending, 1, "{}", case.name);
            let a = q.lease();
            assert_eq!(q.elapsed(), case.runs_after, "{}: when", case.name);
            assert_eq!(a.reason, case.reason, "{}: reason", case.name);
            assert_eq!(a.queued_at, q.start + case.runs_after, "{}", case.name);
            q.finish(a, Outcome::Done);
            assert!(
                q.next().is_none(),
                "{}: the later requests were merged",
                case.name
            );
        }
    }

    #[test]
    fn ready_keys_come_out_in_the_order_they_became_due() {
        let mut q = Sim::new(1);
        q.add_after("late", "x", 2 * MS);
        q.add("b", "x");
        q.add("c", "x");
        q.add("b", "x"); // keeps its place
        q.add_after("soon", "x", MS);
        let mut order = Vec::new();
        while let Some(lease) = q.next() {
            order.push(lease.key);
            q.finish(lease, Outcome::Done);
        }
        assert_eq!(order, ["b", "c", "soon", "late"]);
    }

    #[test]
    fn dirty_key_runs_again_after_finish() {
        let mut q = Sim::new(2);
        q.add("a", "created");
        let a = q.lease();
        q.advance(MS);
        q.add("a", "updated");
        q.advance(MS);
        q.add("a", "updated again");
        assert_eq!(q.state.pending, 1, "the dirty key is pending");
        assert!(q.next().is_none(), "not handed out while in flight");

        q.advance(SEC);
        q.finish(a, Outcome::Done);
        let again = q.try_now().expect("ready as soon as the run finished");
        assert_eq!(
            (again.key, again.reason),
            ("a", "updated again"),
            "newest reason"
        );
        assert_eq!(
            again.queued_at,
            q.start + MS,
            "due since the first dirty add"
        );
        q.finish(again, Outcome::Done);
        assert!(q.next().is_none());
    }

    #[test]
    fn dirty_add_beats_the_outcome_delay() {
        let cases = [
            (
                "requeue-after",
                Outcome::RequeueAfter(Duration::from_secs(60)),
                0,
            ),
            (
                "requeue-after zero",
                Outcome::RequeueAfter(Duration::ZERO),
                0,
            ),
            ("retry", Outcome::Failed { retry: true }, 1),
            ("no retry", Outcome::Failed { retry: false }, 1),
        ];
        for (name, outcome, attempt) in cases {
            let mut q = Sim::new(1);
            q.add("a", "created");
            let a = q.lease();
            q.add("a", "updated");
            q.finish(a, outcome);
            let again = q.try_now().expect("ran at once");
            assert_eq!(
                (again.reason, again.attempt),
                ("updated", attempt),
                "{name}"
            );
            q.finish(again, Outcome::Done);
            assert!(q.next().is_none(), "{name}: the outcome's run was merged");
        }
    }

    #[test]
    fn outcome_sooner_than_a_delayed_dirty_add_wins() {
        let mut q = Sim::new(1);
        q.add("a", "created");
        let a = q.lease();
        q.add_after("a", "periodic", Duration::from_secs(60));
        q.finish(a, Outcome::RequeueAfter(SEC));
        let again = q.lease();
        assert_eq!(q.elapsed(), SEC);
        assert_eq!(again.reason, "created", "the reason of the earliest run");
        q.finish(again, Outcome::Done);
        assert!(q.next().is_none(), "the later request was merged");
    }

    #[test]
    fn requeue_after_is_honoured() {
        let mut q = Sim::new(1);
        q.add("a", "event");
        let a = q.lease();
        q.finish(a, Outcome::RequeueAfter(Duration::from_secs(10)));
        assert_eq!(q.state.pending, 1);
        assert_eq!(q.due_in(), Some(Duration::from_secs(10)));

        q.advance(Duration::from_secs(10) - MS);
        assert!(q.try_now().is_none(), "not before the delay");
        q.advance(MS);
        let again = q.try_now().expect("at the delay");
        assert_eq!((again.reason, again.attempt), ("event", 0));
        assert_eq!(again.queued_at, q.start + Duration::from_secs(10));
    }

    #[test]
    fn backoff_sequence_then_cap() {
        let mut q = Sim::new(1);
        q.add("a", "event");
        let mut delays = Vec::new();
        let mut attempts = Vec::new();
        let mut lease = q.lease();
        for _ in 0..20 {
            attempts.push(lease.attempt);
            let failed_at = q.now;
            q.finish(lease, Outcome::Failed { retry: true });
            let delay = q.due_in().expect("a retry is scheduled");
            q.advance(delay - Duration::from_nanos(1));
            assert!(q.try_now().is_none(), "not before the backoff");
            lease = q.lease();
            delays.push(q.now - failed_at);
            assert_eq!(lease.reason, "event", "a retry keeps the reason");
        }
        assert_eq!(attempts, (0..20).collect::<Vec<u32>>());
        assert_eq!(delays[..4], [5 * MS, 10 * MS, 20 * MS, 40 * MS]);
        assert_eq!(delays[17], 655_360 * MS, "18th failure, below the cap");
        assert_eq!(delays[18..], [1000 * SEC; 2], "capped");
    }

    #[test]
    fn backoff_follows_the_config() {
        let mut q = Sim::with(
            QueueConfig::default()
                .backoff_base(SEC)
                .backoff_max(3 * SEC),
        );
        q.add("a", "event");
        let mut delays = Vec::new();
        for _ in 0..4 {
            let lease = q.lease();
            q.finish(lease, Outcome::Failed { retry: true });
            delays.push(q.due_in().expect("a retry is scheduled"));
        }
        assert_eq!(delays, [SEC, 2 * SEC, 3 * SEC, 3 * SEC]);
    }

    #[test]
    fn success_resets_the_backoff() {
        let cases = [
            ("done", Outcome::Done),
            ("requeue-after", Outcome::RequeueAfter(SEC)),
        ];
        for (name, success) in cases {
            let mut q = Sim::new(1);
            q.add("a", "event");
            for _ in 0..3 {
                let a = q.lease();
                q.finish(a, Outcome::Failed { retry: true });
            }
            let a = q.lease();
            assert_eq!(a.attempt, 3, "{name}");
            q.finish(a, success);
            q.add("a", "event");
            let a = q.lease();
            assert_eq!(a.attempt, 0, "{name}: count reset");
            q.finish(a, Outcome::Failed { retry: true });
            assert_eq!(q.due_in(), Some(5 * MS), "{name}: backoff restarts");
        }
    }

    #[test]
    fn no_retry_is_not_rescheduled() {
        let mut q = Sim::new(1);
        q.add("a", "event");
        let a = q.lease();
        q.finish(a, Outcome::Failed { retry: true });
        let a = q.lease();
        q.finish(a, Outcome::Failed { retry: false });
        assert_eq!(q.state.pending, 0);
        assert!(q.next().is_none(), "never retried");

        q.advance(Duration::from_secs(10_000));
        q.add("a", "edited");
        let a = q.try_now().expect("a later add runs it");
        assert_eq!((a.reason, a.attempt), ("edited", 2), "failures are kept");
        q.finish(a, Outcome::Done);
        q.add("a", "edited");
        assert_eq!(q.lease().attempt, 0);
    }

    #[test]
    fn add_during_backoff_runs_at_once_and_keeps_the_count() {
        let mut q = Sim::new(1);
        q.add("a", "event");
        let a = q.lease();
        q.finish(a, Outcome::Failed { retry: true });
        let a = q.lease();
        q.finish(a, Outcome::Failed { retry: true });
        assert_eq!(q.due_in(), Some(10 * MS));
        q.add("a", "edited");
        let a = q.try_now().expect("ran at once");
        assert_eq!((a.reason, a.attempt), ("edited", 2));
        q.finish(a, Outcome::Done);
        assert!(q.next().is_none(), "the retry was merged into that run");
    }

    #[test]
    fn concurrency_limit_is_respected() {
        let mut q = Sim::new(2);
        for key in ["a", "b", "c"] {
            q.add(key, "x");
        }
        let a = q.lease();
        let b = q.lease();
        assert_eq!((q.state.in_flight, q.state.pending), (2, 1));
        assert!(q.next().is_none(), "c waits for a free slot");
        q.finish(a, Outcome::Done);
        assert_eq!(q.try_now().expect("a slot is free").key, "c");
        assert_eq!(q.state.in_flight, 2);
        q.finish(b, Outcome::Done);
        assert_eq!(q.state.in_flight, 1);
    }

    #[test]
    fn huge_delays_do_not_overflow() {
        let mut q = Sim::new(1);
        q.add_after("a", "x", Duration::MAX);
        assert_eq!(q.state.pending, 1);
        assert!(q.due_in().expect("scheduled") > Duration::from_secs(365 * 24 * 3600));
        q.add("a", "now");
        assert_eq!(q.try_now().expect("ran at once").reason, "now");
    }

    #[test]
    fn a_lease_in_flight_at_shutdown_can_be_finished() {
        let mut q = Sim::new(1);
        q.add("a", "x");
        q.add("b", "x");
        let a = q.lease();
        q.add("a", "dirty");
        q.state.shut_down();
        assert_eq!((q.state.in_flight, q.state.pending), (1, 0));
        q.finish(a, Outcome::Failed { retry: true });
        assert_eq!((q.state.in_flight, q.state.pending), (0, 0));
        assert!(q.state.entries.is_empty() && q.state.schedule.is_empty());
        q.add("c", "x");
        assert_eq!(q.state.pending, 0, "adds after shutdown are ignored");
    }

    #[test]
    fn a_lease_from_another_queue_is_ignored() {
        let mut q = Sim::new(1);
        let mut other = Sim::new(1);
        other.add("a", "x");
        let foreign = other.lease();
        q.add("a", "x");
        assert!(!q.state.finish(foreign, Outcome::Done, q.now, &q.config));
        assert_eq!((q.state.in_flight, q.state.pending), (0, 1));
    }

    fn queue(concurrency: usize) -> WorkQueue<Key, Why> {
        WorkQueue::new(QueueConfig::default().concurrency(concurrency))
    }

    fn waiter(q: &WorkQueue<Key, Why>) -> tokio::task::JoinHandle<Option<Key>> {
        let q = q.clone();
        tokio::spawn(async move { q.next().await.map(|lease| lease.key) })
    }

    /// Lets spawned tasks run until they wait.
    async fn settle() {
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
    }

    async fn woken(waiter: tokio::task::JoinHandle<Option<Key>>) -> Option<Key> {
        timeout(HANG, waiter)
            .await
            .expect("the waiter was woken")
            .expect("the waiter did not panic")
    }

    #[tokio::test]
    async fn a_waiter_is_woken_by_add() {
        let q = queue(1);
        let w = waiter(&q);
        settle().await;
        q.add("a", "x");
        assert_eq!(woken(w).await, Some("a"));
        assert_eq!((q.in_flight(), q.len()), (1, 0));
    }

    #[tokio::test]
    async fn a_waiter_is_woken_by_finish_at_the_concurrency_limit() {
        let q = queue(1);
        q.add("a", "x");
        q.add("b", "x");
        let a = q.next().await.expect("a is ready");
        assert!(q.next().now_or_never().is_none(), "b waits for a free slot");
        let w = waiter(&q);
        settle().await;
        q.finish(a, Outcome::Done);
        assert_eq!(woken(w).await, Some("b"));
    }

    #[tokio::test]
    async fn a_dirty_key_wakes_its_waiter_on_finish() {
        let q = queue(4);
        q.add("a", "created");
        let a = q.next().await.expect("a is ready");
        q.add("a", "updated");
        let w = waiter(&q);
        settle().await;
        assert!(!w.is_finished(), "not handed out while in flight");
        q.finish(a, Outcome::RequeueAfter(Duration::from_secs(3600)));
        assert_eq!(woken(w).await, Some("a"));
    }

    #[tokio::test]
    async fn a_waiter_sleeps_until_the_earliest_deadline() {
        let q = queue(1);
        q.add_after("far", "x", Duration::from_secs(3600));
        let w = waiter(&q);
        settle().await;
        let start = Instant::now();
        q.add_after("near", "x", 20 * MS);
        assert_eq!(woken(w).await, Some("near"), "woken by the nearer key");
        assert!(start.elapsed() >= 20 * MS, "not before its time");
    }

    #[tokio::test]
    async fn zero_concurrency_means_one() {
        let q = queue(0);
        q.add("a", "x");
        q.add("b", "x");
        let _a = q.next().await.expect("a is ready");
        assert!(q.next().now_or_never().is_none());
    }

    #[tokio::test]
    async fn shutdown_wakes_every_waiter() {
        let q = queue(1);
        q.add_after("later", "x", Duration::from_secs(3600));
        let waiters: Vec<_> = (0..3).map(|_| waiter(&q)).collect();
        settle().await;
        q.shutdown();
        for w in waiters {
            assert_eq!(woken(w).await, None);
        }
        assert!(q.is_empty(), "pending keys dropped");
        q.add("a", "x");
        assert!(q.is_empty(), "adds after shutdown are ignored");
        assert!(q.next().await.is_none());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn never_the_same_key_twice_at_once_under_concurrency_4() {
        const KEYS: u32 = 6;
        const ROUNDS: u32 = 200;
        let q: WorkQueue<u32, u32> = WorkQueue::new(QueueConfig::default().concurrency(4));
        let running = Arc::new(Mutex::new(HashSet::new()));
        let peak = Arc::new(AtomicUsize::new(0));
        let last_reason = Arc::new(Mutex::new(HashMap::new()));
        let workers: Vec<_> = (0..6)
            .map(|_| {
                let (q, running, peak, last_reason) = (
                    q.clone(),
                    running.clone(),
                    peak.clone(),
                    last_reason.clone(),
                );
                tokio::spawn(async move {
                    while let Some(lease) = q.next().await {
                        {
                            let mut running = running.lock().unwrap();
                            assert!(running.insert(lease.key), "key {} twice at once", lease.key);
                            peak.fetch_max(running.len(), Ordering::SeqCst);
                        }
                        last_reason.lock().unwrap().insert(lease.key, lease.reason);
                        for _ in 0..3 {
                            tokio::task::yield_now().await;
                        }
                        running.lock().unwrap().remove(&lease.key);
                        q.finish(lease, Outcome::Done);
                    }
                })
            })
            .collect();

        for round in 0..ROUNDS {
            for key in 0..KEYS {
                q.add(key, round);
            }
            tokio::task::yield_now().await;
        }
        timeout(HANG, async {
            while !q.is_empty() || q.in_flight() > 0 {
                tokio::task::yield_now().await;
            }
        })
        .await
        .expect("the queue drains");
        q.shutdown();
        for worker in workers {
            worker.await.unwrap();
        }

        assert!(peak.load(Ordering::SeqCst) <= 4, "at most four in flight");
        let last_reason = last_reason.lock().unwrap();
        for key in 0..KEYS {
            assert_eq!(
                last_reason[&key],
                ROUNDS - 1,
                "key {key} ran after its last add"
            );
        }
    }

    #[test]
    fn debug_shows_the_depth() {
        let q = queue(1);
        q.add("a", "x");
        let shown = format!("{q:?}");
        assert!(shown.contains("pending: 1"), "{shown}");
    }
}
