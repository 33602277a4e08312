//! The queue's rules. The state machine is tested on a simulated clock (explicit instants,
//! jumped to the next deadline like paused tokio time), so every timing
//! is asserted exactly and nothing sleeps. The async layer (waking,
//! concurrency across tasks, shutdown) is tested on a real runtime
//! without depending on timing, except one short deadline.

use std::collections::{HashMap, HashSet};
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
        self.add_at(key, reason, Priority::High, delay);
    }

    fn add_at(&mut self, key: Key, reason: Why, priority: Priority, delay: Duration) {
        let due = deadline(self.now, delay);
        self.state.request(key, reason, due, priority, self.now);
    }

    /// A ticket due now, without moving the clock.
    fn try_now(&mut self) -> Option<Ticket<Key, Why>> {
        match self.state.take(self.now, &self.config) {
            Take::Ticket(ticket) => Some(ticket),
            Take::Until(_) | Take::Wait => None,
        }
    }

    /// The next ticket, the clock jumped to when it is due; `None` if no
    /// key can be handed out whatever the time.
    fn next(&mut self) -> Option<Ticket<Key, Why>> {
        loop {
            match self.state.take(self.now, &self.config) {
                Take::Ticket(ticket) => return Some(ticket),
                Take::Until(due) => self.now = due,
                Take::Wait => return None,
            }
        }
    }

    fn ticket(&mut self) -> Ticket<Key, Why> {
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

    fn finish(&mut self, ticket: Ticket<Key, Why>, outcome: Completion) {
        assert!(self.state.finish(ticket, outcome, self.now, &self.config));
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

    let a = q.ticket();
    assert_eq!(
        (a.key, a.reason),
        ("a", "third"),
        "newest reason of due requests"
    );
    assert_eq!(a.queued_at, q.start, "due since the first add");
    q.finish(a, Completion::Done);
    let b = q.ticket();
    assert_eq!(b.key, "b");
    q.finish(b, Completion::Done);

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
        let a = q.ticket();
        assert_eq!(q.elapsed(), case.runs_after, "{}: when", case.name);
        assert_eq!(a.reason, case.reason, "{}: reason", case.name);
        assert_eq!(a.queued_at, q.start + case.runs_after, "{}", case.name);
        q.finish(a, Completion::Done);
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
    while let Some(ticket) = q.next() {
        order.push(ticket.key);
        q.finish(ticket, Completion::Done);
    }
    assert_eq!(order, ["b", "c", "soon", "late"]);
}

#[test]
fn dirty_key_runs_again_after_finish() {
    let mut q = Sim::new(2);
    q.add("a", "created");
    let a = q.ticket();
    q.advance(MS);
    q.add("a", "updated");
    q.advance(MS);
    q.add("a", "updated again");
    assert_eq!(q.state.pending, 1, "the dirty key is pending");
    assert!(q.next().is_none(), "not handed out while in flight");

    q.advance(SEC);
    q.finish(a, Completion::Done);
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
    q.finish(again, Completion::Done);
    assert!(q.next().is_none());
}

#[test]
fn dirty_add_beats_the_outcome_delay() {
    let cases = [
        (
            "requeue-after",
            Completion::RequeueAfter(Duration::from_secs(60)),
            0,
        ),
        (
            "requeue-after zero",
            Completion::RequeueAfter(Duration::ZERO),
            0,
        ),
        ("retry", Completion::Failed { retry: true }, 1),
        ("no retry", Completion::Failed { retry: false }, 1),
    ];
    for (name, outcome, attempt) in cases {
        let mut q = Sim::new(1);
        q.add("a", "created");
        let a = q.ticket();
        q.add("a", "updated");
        q.finish(a, outcome);
        let again = q.try_now().expect("ran at once");
        assert_eq!(
            (again.reason, again.attempt),
            ("updated", attempt),
            "{name}"
        );
        q.finish(again, Completion::Done);
        assert!(q.next().is_none(), "{name}: the outcome's run was merged");
    }
}

#[test]
fn outcome_sooner_than_a_delayed_dirty_add_wins() {
    let mut q = Sim::new(1);
    q.add("a", "created");
    let a = q.ticket();
    q.add_after("a", "periodic", Duration::from_secs(60));
    q.finish(a, Completion::RequeueAfter(SEC));
    let again = q.ticket();
    assert_eq!(q.elapsed(), SEC);
    assert_eq!(again.reason, "created", "the reason of the earliest run");
    q.finish(again, Completion::Done);
    assert!(q.next().is_none(), "the later request was merged");
}

#[test]
fn requeue_after_is_honoured() {
    let mut q = Sim::new(1);
    q.add("a", "event");
    let a = q.ticket();
    q.finish(a, Completion::RequeueAfter(Duration::from_secs(10)));
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
    let mut ticket = q.ticket();
    for _ in 0..20 {
        attempts.push(ticket.attempt);
        let failed_at = q.now;
        q.finish(ticket, Completion::Failed { retry: true });
        let delay = q.due_in().expect("a retry is scheduled");
        q.advance(delay - Duration::from_nanos(1));
        assert!(q.try_now().is_none(), "not before the backoff");
        ticket = q.ticket();
        delays.push(q.now - failed_at);
        assert_eq!(ticket.reason, "event", "a retry keeps the reason");
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
        let ticket = q.ticket();
        q.finish(ticket, Completion::Failed { retry: true });
        delays.push(q.due_in().expect("a retry is scheduled"));
    }
    assert_eq!(delays, [SEC, 2 * SEC, 3 * SEC, 3 * SEC]);
}

#[test]
fn success_resets_the_backoff() {
    let cases = [
        ("done", Completion::Done),
        ("requeue-after", Completion::RequeueAfter(SEC)),
    ];
    for (name, success) in cases {
        let mut q = Sim::new(1);
        q.add("a", "event");
        for _ in 0..3 {
            let a = q.ticket();
            q.finish(a, Completion::Failed { retry: true });
        }
        let a = q.ticket();
        assert_eq!(a.attempt, 3, "{name}");
        q.finish(a, success);
        q.add("a", "event");
        let a = q.ticket();
        assert_eq!(a.attempt, 0, "{name}: count reset");
        q.finish(a, Completion::Failed { retry: true });
        assert_eq!(q.due_in(), Some(5 * MS), "{name}: backoff restarts");
    }
}

#[test]
fn no_retry_is_not_rescheduled() {
    let mut q = Sim::new(1);
    q.add("a", "event");
    let a = q.ticket();
    q.finish(a, Completion::Failed { retry: true });
    let a = q.ticket();
    q.finish(a, Completion::Failed { retry: false });
    assert_eq!(q.state.pending, 0);
    assert!(q.next().is_none(), "never retried");

    q.advance(Duration::from_secs(10_000));
    q.add("a", "edited");
    let a = q.try_now().expect("a later add runs it");
    assert_eq!((a.reason, a.attempt), ("edited", 2), "failures are kept");
    q.finish(a, Completion::Done);
    q.add("a", "edited");
    assert_eq!(q.ticket().attempt, 0);
}

#[test]
fn add_during_backoff_runs_at_once_and_keeps_the_count() {
    let mut q = Sim::new(1);
    q.add("a", "event");
    let a = q.ticket();
    q.finish(a, Completion::Failed { retry: true });
    let a = q.ticket();
    q.finish(a, Completion::Failed { retry: true });
    assert_eq!(q.due_in(), Some(10 * MS));
    q.add("a", "edited");
    let a = q.try_now().expect("ran at once");
    assert_eq!((a.reason, a.attempt), ("edited", 2));
    q.finish(a, Completion::Done);
    assert!(q.next().is_none(), "the retry was merged into that run");
}

#[test]
fn concurrency_limit_is_respected() {
    let mut q = Sim::new(2);
    for key in ["a", "b", "c"] {
        q.add(key, "x");
    }
    let a = q.ticket();
    let b = q.ticket();
    assert_eq!((q.state.in_flight, q.state.pending), (2, 1));
    assert!(q.next().is_none(), "c waits for a free slot");
    q.finish(a, Completion::Done);
    assert_eq!(q.try_now().expect("a slot is free").key, "c");
    assert_eq!(q.state.in_flight, 2);
    q.finish(b, Completion::Done);
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
    let a = q.ticket();
    q.add("a", "dirty");
    q.state.shut_down();
    assert_eq!((q.state.in_flight, q.state.pending), (1, 0));
    q.finish(a, Completion::Failed { retry: true });
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
    let foreign = other.ticket();
    q.add("a", "x");
    assert!(!q.state.finish(foreign, Completion::Done, q.now, &q.config));
    assert_eq!((q.state.in_flight, q.state.pending), (0, 1));
}

fn queue(concurrency: usize) -> WorkQueue<Key, Why> {
    WorkQueue::new(QueueConfig::default().concurrency(concurrency))
}

fn waiter(q: &WorkQueue<Key, Why>) -> tokio::task::JoinHandle<Option<Key>> {
    let q = q.clone();
    tokio::spawn(async move { q.next().await.map(|ticket| ticket.key) })
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
    q.finish(a, Completion::Done);
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
    q.finish(a, Completion::RequeueAfter(Duration::from_secs(3600)));
    assert_eq!(woken(w).await, Some("a"));
}

#[tokio::test]
async fn a_waiter_sleeps_until_the_earliest_deadline() {
    let q = queue(1);
    q.add_after("far", "x", Priority::High, Duration::from_secs(3600));
    let w = waiter(&q);
    settle().await;
    let start = Instant::now();
    q.add_after("near", "x", Priority::High, 20 * MS);
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
    q.add_after("later", "x", Priority::High, Duration::from_secs(3600));
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
                while let Some(ticket) = q.next().await {
                    {
                        let mut running = running.lock().unwrap();
                        assert!(
                            running.insert(ticket.key),
                            "key {} twice at once",
                            ticket.key
                        );
                        peak.fetch_max(running.len(), Ordering::SeqCst);
                    }
                    last_reason
                        .lock()
                        .unwrap()
                        .insert(ticket.key, ticket.reason);
                    for _ in 0..3 {
                        tokio::task::yield_now().await;
                    }
                    running.lock().unwrap().remove(&ticket.key);
                    q.finish(ticket, Completion::Done);
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

#[test]
fn higher_priorities_go_first_then_each_in_order() {
    let mut q = Sim::new(1);
    q.add_at("backlog-1", "added", Priority::Low, Duration::ZERO);
    q.add_at("backlog-2", "added", Priority::Low, Duration::ZERO);
    q.add_at("retry", "retry", Priority::Normal, Duration::ZERO);
    q.add_at("edit-1", "updated", Priority::High, Duration::ZERO);
    q.add_at("edit-2", "updated", Priority::High, Duration::ZERO);
    assert_eq!(q.state.pending_by, [2, 1, 2]);
    let order: Vec<Key> = (0..5)
        .map(|_| {
            let t = q.ticket();
            let key = t.key;
            q.finish(t, Completion::Done);
            key
        })
        .collect();
    assert_eq!(
        order,
        ["edit-1", "edit-2", "retry", "backlog-1", "backlog-2"]
    );
    assert_eq!(q.state.pending_by, [0, 0, 0]);
}

#[test]
fn a_user_change_lifts_a_pending_backlog_key() {
    let mut q = Sim::new(1);
    q.add_at("a", "added", Priority::Low, Duration::ZERO);
    q.add_at("b", "added", Priority::Low, Duration::ZERO);
    // Sorted into the ready lists by a take, then lifted by an edit.
    let first = q.ticket();
    assert_eq!(first.key, "a");
    q.add_at("c", "added", Priority::Low, Duration::ZERO);
    q.add_at("c", "updated", Priority::High, Duration::ZERO);
    assert_eq!(q.state.pending_by, [1, 0, 1]);
    q.finish(first, Completion::Done);
    let lifted = q.ticket();
    assert_eq!(
        (lifted.key, lifted.reason, lifted.priority),
        ("c", "updated", Priority::High)
    );
    // A low request never lowers a pending high one.
    q.add_at("d", "updated", Priority::High, Duration::ZERO);
    q.add_at("d", "resync", Priority::Low, Duration::ZERO);
    q.finish(lifted, Completion::Done);
    assert_eq!(q.ticket().priority, Priority::High);
}

#[test]
fn retries_and_requeues_come_back_at_normal_priority() {
    let mut q = Sim::new(1);
    q.add("a", "updated");
    let t = q.ticket();
    q.finish(t, Completion::Failed { retry: true });
    assert_eq!(q.state.pending_by, [0, 1, 0]);
    let retry = q.ticket();
    assert_eq!(retry.priority, Priority::Normal);
    q.finish(retry, Completion::RequeueAfter(SEC));
    assert_eq!(q.ticket().priority, Priority::Normal);
}

/// A stream of user changes never starves the backlog: once its oldest key
/// waited `boost_after`, one of it runs after every `boost_every` changes.
#[test]
fn a_starving_backlog_is_boosted_between_user_changes() {
    let config = QueueConfig::default().concurrency(1);
    let mut q = Sim::with(config.clone());
    for key in ["b1", "b2", "b3"] {
        q.add_at(key, "added", Priority::Low, Duration::ZERO);
    }
    let edits: Vec<Key> = vec![
        "e0", "e1", "e2", "e3", "e4", "e5", "e6", "e7", "e8", "e9", "e10", "e11",
    ];
    let mut order = Vec::new();
    for edit in &edits {
        q.add(edit, "updated");
        q.advance(SEC);
        let t = q.ticket();
        order.push(t.key);
        q.finish(t, Completion::Done);
    }
    // Before 5 s only edits run; from then on a backlog key after every 4.
    let backlog: Vec<usize> = order
        .iter()
        .enumerate()
        .filter(|(_, k)| k.starts_with('b'))
        .map(|(i, _)| i)
        .collect();
    assert!(!backlog.is_empty(), "the backlog starved: {order:?}");
    assert!(backlog[0] >= 4, "boosted before it waited: {order:?}");
    assert!(
        backlog
            .windows(2)
            .all(|w| w[1] - w[0] == config.boost_every as usize + 1),
        "{order:?}"
    );
    // And without a stream of edits, the backlog simply drains.
    let mut q = Sim::new(1);
    q.add_at("b", "added", Priority::Low, Duration::ZERO);
    assert_eq!(q.ticket().key, "b");
}
