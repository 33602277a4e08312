//! The queue's bookkeeping, without waiting: which keys are pending, due
//! when, in flight, and how many times each failed.

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;
use std::time::Duration;

use tokio::time::Instant;

use super::{Completion, FAR_FUTURE, QueueConfig, Ticket};

pub(super) struct State<K, R> {
    /// Every key that is pending, in flight, or has failures on record.
    pub(super) entries: HashMap<K, Entry<R>>,
    /// Pending keys that are not in flight, by (due, sequence number).
    pub(super) schedule: BTreeMap<(Instant, u64), K>,
    pub(super) next_seq: u64,
    /// Pending keys, dirty keys held during their run included.
    pub(super) pending: usize,
    pub(super) in_flight: usize,
    pub(super) shutdown: bool,
}

pub(super) struct Entry<R> {
    pub(super) pending: Option<Pending<R>>,
    pub(super) in_flight: bool,
    pub(super) failures: u32,
}

pub(super) struct Pending<R> {
    pub(super) due: Instant,
    pub(super) seq: u64,
    pub(super) reason: R,
}

/// What a waiter found.
pub(super) enum Take<K, R> {
    Ticket(Ticket<K, R>),
    /// Nothing is ready before this deadline.
    Until(Instant),
    /// Nothing can be taken until the queue changes.
    Wait,
}

/// A request's time for comparisons: anything due already counts as now.
pub(super) fn effective(due: Instant, now: Instant) -> Instant {
    due.max(now)
}

pub(super) fn deadline(now: Instant, delay: Duration) -> Instant {
    now.checked_add(delay)
        .or_else(|| now.checked_add(FAR_FUTURE))
        .expect("an instant a century ahead is representable")
}

impl<K, R> State<K, R> {
    pub(super) fn new() -> Self {
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
    pub(super) fn request(&mut self, key: K, reason: R, due: Instant, now: Instant) -> bool {
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

    pub(super) fn take(&mut self, now: Instant, concurrency: usize) -> Take<K, R> {
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
        Take::Ticket(Ticket {
            key,
            reason: pending.reason,
            attempt: entry.failures,
            queued_at: pending.due,
        })
    }

    /// Ends the run of `ticket`; returns whether it was in flight here.
    pub(super) fn finish(
        &mut self,
        ticket: Ticket<K, R>,
        outcome: Completion,
        now: Instant,
        config: &QueueConfig,
    ) -> bool {
        let Ticket { key, reason, .. } = ticket;
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
            Completion::Done => {
                entry.failures = 0;
                None
            }
            Completion::RequeueAfter(delay) => {
                entry.failures = 0;
                Some(delay)
            }
            Completion::Failed { retry } => {
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

    pub(super) fn shut_down(&mut self) {
        self.shutdown = true;
        self.schedule.clear();
        self.pending = 0;
        self.entries.retain(|_, entry| {
            entry.pending = None;
            entry.in_flight
        });
    }
}
