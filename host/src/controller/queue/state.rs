//! The queue's bookkeeping, without waiting: which keys are pending, due
//! when and at which priority, in flight, and how many times each failed.

use std::collections::{BTreeMap, HashMap};
use std::hash::Hash;
use std::time::Duration;

use tokio::time::Instant;

use super::{Completion, FAR_FUTURE, Priority, QueueConfig, Ticket};

pub(super) struct State<K, R> {
    /// Every key that is pending, in flight, or has failures on record.
    pub(super) entries: HashMap<K, Entry<R>>,
    /// Pending keys that are not in flight and not yet sorted into
    /// `ready`, by (due, sequence number): those waiting for their time,
    /// and those requested since the last take.
    pub(super) schedule: BTreeMap<(Instant, u64), K>,
    /// Due keys by priority (highest first), each by (due, sequence).
    pub(super) ready: [BTreeMap<(Instant, u64), K>; Priority::COUNT],
    /// Takes in a row from a higher priority while a lower one had a key
    /// waiting longer than the boost age.
    pub(super) passed_over: u32,
    pub(super) next_seq: u64,
    /// Pending keys, dirty keys held during their run included.
    pub(super) pending: usize,
    /// The same, by priority.
    pub(super) pending_by: [usize; Priority::COUNT],
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
    pub(super) priority: Priority,
    /// In `ready` (else in `schedule`, or held while in flight).
    pub(super) sorted: bool,
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
            ready: Default::default(),
            passed_over: 0,
            next_seq: 0,
            pending: 0,
            pending_by: [0; Priority::COUNT],
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
    /// should be woken (the key is due, or became the earliest scheduled).
    pub(super) fn request(
        &mut self,
        key: K,
        reason: R,
        due: Instant,
        priority: Priority,
        now: Instant,
    ) -> bool {
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
                entry.pending = Some(Pending {
                    due,
                    seq,
                    reason,
                    priority,
                    sorted: false,
                });
                self.pending += 1;
                self.pending_by[priority.index()] += 1;
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
                let raised = priority < pending.priority;
                if raised {
                    self.pending_by[pending.priority.index()] -= 1;
                    self.pending_by[priority.index()] += 1;
                }
                let old = (pending.due, pending.seq, pending.priority, pending.sorted);
                pending.priority = pending.priority.min(priority);
                if due >= pending.due && !raised {
                    return false;
                }
                pending.due = pending.due.min(due);
                pending.sorted = false;
                if entry.in_flight {
                    return false;
                }
                let (old_due, old_seq, old_priority, old_sorted) = old;
                let map = if old_sorted {
                    &mut self.ready[old_priority.index()]
                } else {
                    &mut self.schedule
                };
                let key = map
                    .remove(&(old_due, old_seq))
                    .expect("a pending key that is not in flight is in the schedule or ready");
                let slot = (pending.due, old_seq);
                self.schedule.insert(slot, key);
                slot
            }
        };
        slot.0 <= now || self.schedule.first_key_value().map(|(first, _)| *first) == Some(slot)
    }

    /// Sorts the keys that are due into `ready`.
    fn sort_due(&mut self, now: Instant) {
        while let Some(entry) = self.schedule.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let (slot, key) = entry.remove_entry();
            let pending = self
                .entries
                .get_mut(&key)
                .and_then(|e| e.pending.as_mut())
                .expect("a scheduled key is pending");
            pending.sorted = true;
            self.ready[pending.priority.index()].insert(slot, key);
        }
    }

    /// The priority to take from: the highest with a due key, unless a
    /// lower one has a key that waited past the boost age and the higher
    /// ones were served `boost_every` times in a row meanwhile.
    fn pick(&mut self, now: Instant, config: &QueueConfig) -> Option<usize> {
        let top = self.ready.iter().position(|r| !r.is_empty())?;
        let starving = (top + 1..Priority::COUNT).find(|&p| {
            self.ready[p]
                .first_key_value()
                .is_some_and(|(&(due, _), _)| {
                    now.saturating_duration_since(due) >= config.boost_after
                })
        });
        match starving {
            Some(low) if self.passed_over >= config.boost_every => {
                self.passed_over = 0;
                Some(low)
            }
            Some(_) => {
                self.passed_over += 1;
                Some(top)
            }
            None => {
                self.passed_over = 0;
                Some(top)
            }
        }
    }

    pub(super) fn take(&mut self, now: Instant, config: &QueueConfig) -> Take<K, R> {
        if self.in_flight >= config.concurrency.max(1) {
            return Take::Wait;
        }
        self.sort_due(now);
        let Some(priority) = self.pick(now, config) else {
            return match self.schedule.first_key_value() {
                Some((&(due, _), _)) => Take::Until(due),
                None => Take::Wait,
            };
        };
        let (_, key) = self.ready[priority]
            .pop_first()
            .expect("the picked priority has a ready key");
        let entry = self
            .entries
            .get_mut(&key)
            .expect("a scheduled key has an entry");
        let pending = entry.pending.take().expect("a scheduled key is pending");
        entry.in_flight = true;
        self.pending -= 1;
        self.pending_by[priority] -= 1;
        self.in_flight += 1;
        Take::Ticket(Ticket {
            key,
            reason: pending.reason,
            priority: pending.priority,
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
                // A request made during the run keeps its reason (and
                // priority) unless the outcome asks for a strictly earlier run.
                Some(dirty) => {
                    if effective(due, now) < effective(dirty.due, now) {
                        dirty.due = due;
                        dirty.reason = reason;
                    }
                }
                // Requeues and retries come after the work users cause.
                None => {
                    let seq = self.next_seq;
                    self.next_seq += 1;
                    entry.pending = Some(Pending {
                        due,
                        seq,
                        reason,
                        priority: Priority::Normal,
                        sorted: false,
                    });
                    self.pending += 1;
                    self.pending_by[Priority::Normal.index()] += 1;
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
        for ready in &mut self.ready {
            ready.clear();
        }
        self.pending = 0;
        self.pending_by = [0; Priority::COUNT];
        self.entries.retain(|_, entry| {
            entry.pending = None;
            entry.in_flight
        });
    }
}
