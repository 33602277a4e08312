//! Kubernetes Events, recorded in the background the way client-go's
//! EventRecorder does: a guest (or the host) hands an Event over and goes
//! on at once; the `Recorder` writes it, folds repeats into one Event
//! series, rate-limits per object, and drops what the API server refuses.
//!
//! - **Never in the way.** `Recorder::record` only puts the Event in a
//!   bounded queue ([`QUEUE_CAPACITY`]); when the queue is full the Event is
//!   dropped. One task writes, with a timeout per request ([`WRITE_TIMEOUT`]),
//!   so a slow API server slows nothing but the Events.
//! - **Aggregation.** Repeats of the same Event (same object, type, reason
//!   and reporting component, whatever the message: kube-rs's recorder keys
//!   them the same way) within [`SERIES_WINDOW`] of the last one are one
//!   events.k8s.io/v1 Event whose `series.count` grows, its note the first
//!   one's. The first repeat is written at once; later ones at most every
//!   [`SERIES_FLUSH`].
//! - **Rate limit.** New Events about one object, per reporting component,
//!   come from a token bucket of [`BURST`] tokens refilled one per
//!   [`REFILL`] (client-go's spam filter). Repeats folded into a series do not
//!   count.
//! - **Drops.** An Event the API server refuses (a namespace being deleted,
//!   a quota, RBAC) is dropped with a debug log; one it cannot take now
//!   (429, 5xx, unreachable) is tried [`MAX_TRIES`] times, then dropped.
//!   Every outcome is counted in `rekon_events_total{result}`.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

mod book;
mod object;
mod writer;

use book::Book;
pub use object::event_object;
use writer::Writer;

use crate::contract::{EventType, ObjectRef};
use crate::telemetry::Metrics;

/// Events waiting to be written; more are dropped.
pub const QUEUE_CAPACITY: usize = 1024;
/// Longest wait for one write to the API server.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(5);
/// A repeat after this long without one starts a new Event.
pub const SERIES_WINDOW: Duration = Duration::from_secs(6 * 60);
/// Repeats after the first are written at most this often per Event.
pub const SERIES_FLUSH: Duration = Duration::from_secs(2);
/// New Events one object may get at once.
pub const BURST: u32 = 25;
/// One more new Event per object after this long.
pub const REFILL: Duration = Duration::from_secs(5 * 60);
/// Attempts at writing an Event the API server cannot take now.
pub const MAX_TRIES: u32 = 4;
/// Longest `note` the API server accepts (bytes).
pub const MAX_NOTE: usize = 1024;

/// One Event to record.
#[derive(Clone, Debug)]
pub(crate) struct EventRecord {
    /// The object it is about.
    pub regarding: ObjectRef,
    /// The object's uid, when known (so `kubectl describe` lists the Event).
    pub uid: Option<String>,
    pub event_type: EventType,
    pub reason: String,
    pub message: String,
    /// The reporting controller: `rekon-<module>` or `rekon-host`.
    pub component: String,
}

pub(super) enum Command {
    Record(Box<EventRecord>),
    /// Write every pending series update, then answer.
    Flush(oneshot::Sender<()>),
}

/// The handle guests' Events go through. Cheap to clone.
#[derive(Clone)]
pub(crate) struct Recorder {
    commands: mpsc::Sender<Command>,
    metrics: Arc<Metrics>,
}

impl Recorder {
    /// Starts the recorder's task, writing with `client`; `instance`
    /// names this replica in `reportingInstance`.
    pub fn start(client: kube::Client, instance: String, metrics: Arc<Metrics>) -> Recorder {
        let (commands, inbox) = mpsc::channel(QUEUE_CAPACITY);
        let writer = Writer {
            client,
            instance,
            metrics: metrics.clone(),
            book: Book::default(),
            retries: Vec::new(),
        };
        tokio::spawn(writer.run(inbox));
        Recorder { commands, metrics }
    }

    /// Hands an Event over; returns at once. Dropped (and counted) when
    /// the queue is full.
    pub fn record(&self, record: EventRecord) {
        if let Err(error) = self.commands.try_send(Command::Record(Box::new(record))) {
            let (why, result) = match error {
                mpsc::error::TrySendError::Full(_) => ("the queue is full", "dropped_queue_full"),
                mpsc::error::TrySendError::Closed(_) => ("the recorder stopped", "dropped_failed"),
            };
            tracing::debug!(why, "event dropped");
            self.metrics.count_event(result);
        }
    }

    /// Writes the series updates still pending (at shutdown), waiting at
    /// most `timeout`.
    pub async fn flush(&self, timeout: Duration) {
        let (done, flushed) = oneshot::channel();
        let sent = tokio::time::timeout(timeout, self.commands.send(Command::Flush(done)));
        if matches!(sent.await, Ok(Ok(()))) {
            let _ = tokio::time::timeout(timeout, flushed).await;
        }
    }
}

/// Counts a dropped Event (one recorded while this replica does not lead).
pub(crate) fn dropped_not_leading(metrics: &Metrics) {
    metrics.count_event("dropped_not_leading");
}
