//! Priorities: user changes before the backlog, without starving it.

use super::waking::queue;
use super::*;

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
