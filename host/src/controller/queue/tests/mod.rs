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

mod priority;
mod state;
mod waking;

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
