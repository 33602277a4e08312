//! The state machine on a simulated clock: deduplication, delays,
//! backoff, requeues, concurrency and leases.

use super::*;

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
