//! The book's rules on a simulated clock: series, rate limits, forgetting.

use super::*;
use std::time::Duration;

use crate::contract::{Gvk, ObjectRef};

/// An Event about the App `name` (uid `uid-<name>`).
fn record(name: &str, reason: &str, message: &str) -> EventRecord {
    EventRecord {
        regarding: ObjectRef {
            kind: Gvk {
                group: "demo.rekon.dev".into(),
                version: "v1".into(),
                kind: "App".into(),
            },
            namespace: Some("default".into()),
            name: name.into(),
        },
        uid: Some(format!("uid-{name}")),
        event_type: EventType::Warning,
        reason: reason.into(),
        message: message.into(),
        component: "rekon-app".into(),
    }
}

fn key(name: &str, reason: &str) -> SeriesKey {
    series_key(&record(name, reason, &format!("{reason} happened")))
}

fn wall() -> chrono::DateTime<chrono::Utc> {
    chrono::Utc::now()
}

/// The first occurrence of `k`, created.
pub(super) fn created(book: &mut Book, k: &SeriesKey, now: Instant) {
    assert_eq!(book.observe(k, now, wall()), Decision::Create(1));
    let name = Some(format!("{}.1", k.object.name));
    book.created(k.clone(), "default".into(), name, 1, now, wall());
}

#[test]
fn repeats_fold_into_one_event_written_at_most_every_flush_interval() {
    let mut book = Book::default();
    let t0 = Instant::now();
    let k = key("web", "ReconcileFailed");
    created(&mut book, &k, t0);
    // The first repeat goes out at once (once the interval has passed).
    let t1 = t0 + SERIES_FLUSH;
    assert_eq!(book.observe(&k, t1, wall()), Decision::WriteSeries);
    assert_eq!(book.start_write(&k, t1).map(|w| w.2), Some(2));
    book.series_written(&k, 2);
    // Later ones are counted, and written together when due.
    for i in 1..=5 {
        let t = t1 + Duration::from_millis(10 * i);
        assert_eq!(book.observe(&k, t, wall()), Decision::Fold);
    }
    assert!(book.start_write(&k, t1).is_some());
    assert!(
        book.due_series(t1 + Duration::from_millis(100), false)
            .is_empty()
    );
    assert_eq!(book.due_series(t1 + SERIES_FLUSH, false), vec![k.clone()]);
    assert_eq!(book.next_due(), Some(t1 + SERIES_FLUSH));
    assert_eq!(book.series[&k].count, 7);
    // Written: nothing is due but forgetting idle series.
    book.series_written(&k, 7);
    assert!(book.due_series(t1 + SERIES_FLUSH, true).is_empty());
    assert_eq!(book.next_due(), Some(t0 + SERIES_WINDOW));
    // Another reason is another Event.
    assert_eq!(
        book.observe(&key("web", "Other"), t1, wall()),
        Decision::Create(1)
    );
}

/// A finalizer that runs twice says something else the second time
/// (what it deleted is already gone): still one Event, counted twice.
#[test]
fn the_same_reason_with_another_message_is_a_repeat() {
    let record = |message: &str| record("web", "CleanedUp", message);
    let first = series_key(&record("deleted Deployment (was present)"));
    let second = series_key(&record("deleted Deployment (already gone)"));
    assert_eq!(first, second);
    let mut book = Book::default();
    let t0 = Instant::now();
    created(&mut book, &first, t0);
    assert_eq!(
        book.observe(&second, t0 + SERIES_FLUSH, wall()),
        Decision::WriteSeries
    );
    // Recorded once the object has left the cache (its uid unknown):
    // the uid the first Event had.
    let mut gone = record("deleted Deployment (already gone)");
    gone.uid = None;
    assert_eq!(book.known_uid(&gone).as_deref(), Some("uid-web"));
    gone.regarding.name = "other".into();
    assert_eq!(book.known_uid(&gone), None);
}

#[test]
fn an_event_not_repeated_within_the_window_starts_a_new_one() {
    let mut book = Book::default();
    let t0 = Instant::now();
    let k = key("web", "ReconcileFailed");
    created(&mut book, &k, t0);
    assert_eq!(
        book.observe(&k, t0 + SERIES_WINDOW, wall()),
        Decision::Create(1)
    );
}

#[test]
fn new_events_about_one_object_are_rate_limited_and_refill_slowly() {
    let mut book = Book::default();
    let t0 = Instant::now();
    for i in 0..BURST {
        let k = key("web", &format!("Reason{i}"));
        assert_eq!(
            book.observe(&k, t0, wall()),
            Decision::Create(1),
            "event {i}"
        );
    }
    let over = key("web", "OneTooMany");
    assert_eq!(book.observe(&over, t0, wall()), Decision::RateLimited);
    // Another object has its own bucket.
    assert_eq!(
        book.observe(&key("api", "X"), t0, wall()),
        Decision::Create(1)
    );
    // One token comes back per REFILL.
    assert_eq!(
        book.observe(&over, t0 + REFILL, wall()),
        Decision::Create(1)
    );
    assert_eq!(
        book.observe(&key("web", "AndAnother"), t0 + REFILL, wall()),
        Decision::RateLimited
    );
}

#[test]
fn idle_series_and_full_buckets_are_forgotten() {
    let mut book = Book::default();
    let t0 = Instant::now();
    let k = key("web", "ReconcileFailed");
    created(&mut book, &k, t0);
    // Not before it is due.
    book.forget_idle_when_due(t0 + SERIES_WINDOW / 2);
    assert_eq!(book.series.len(), 1);
    book.forget_idle_when_due(t0 + SERIES_WINDOW + REFILL);
    assert!(book.series.is_empty());
    assert!(book.buckets.is_empty());
    assert!(book.order.is_empty());
    // Nothing left: no timer.
    assert_eq!(book.next_due(), None);
}
