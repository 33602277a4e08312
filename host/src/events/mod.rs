//! Kubernetes Events, recorded in the background the way client-go's
//! EventRecorder does: a guest (or the host) hands an Event over and goes
//! on at once; the [`Recorder`] writes it, folds repeats into one Event
//! series, rate-limits per object, and drops what the API server refuses.
//!
//! - **Never in the way.** [`Recorder::record`] only puts the Event in a
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

use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

mod book;

use book::{Book, Decision, SeriesKey, series_key};

use crate::contract::{ApiError, EventType, ObjectRef, from_kube};
use crate::names::api_version;
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

enum Command {
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

/// A create to try again.
struct Retry {
    due: Instant,
    key: SeriesKey,
    record: EventRecord,
    /// The Event as first sent: a retry sends the same name, so a create
    /// that timed out but went through is not made twice.
    event: Value,
    tries: u32,
}

/// The recorder's task: keeps the [`Book`], writes one request at a time.
struct Writer {
    client: kube::Client,
    instance: String,
    metrics: Arc<Metrics>,
    book: Book,
    retries: Vec<Retry>,
}

/// What a failed write means.
enum Failure {
    /// The API server will not take it (4xx but 408 and 429): drop.
    Refused(ApiError),
    /// It may take it later.
    Transient(ApiError),
}

fn classify(error: ApiError) -> Failure {
    if (400..500).contains(&error.code) && error.code != 429 && error.code != 408 {
        Failure::Refused(error)
    } else {
        Failure::Transient(error)
    }
}

impl Writer {
    async fn run(mut self, mut inbox: mpsc::Receiver<Command>) {
        loop {
            let due = self
                .retries
                .iter()
                .map(|r| r.due)
                .chain(self.book.next_due())
                .min();
            tokio::select! {
                command = inbox.recv() => match command {
                    Some(Command::Record(record)) => self.record(*record).await,
                    Some(Command::Flush(done)) => {
                        self.flush_series(true).await;
                        let _ = done.send(());
                    }
                    None => {
                        self.flush_series(true).await;
                        return;
                    }
                },
                _ = sleep_until(due) => {
                    self.retry_due().await;
                    self.flush_series(false).await;
                    self.book.forget_idle_when_due(Instant::now());
                }
            }
        }
    }

    async fn record(&mut self, mut record: EventRecord) {
        if record.uid.is_none() {
            record.uid = self.book.known_uid(&record);
        }
        let key = series_key(&record);
        match self.book.observe(&key, Instant::now(), chrono::Utc::now()) {
            Decision::Create(count) => self.create(key, record, None, count, 1).await,
            Decision::WriteSeries => {
                self.metrics.count_event("aggregated");
                self.write_series(&key).await;
            }
            Decision::Fold => self.metrics.count_event("aggregated"),
            Decision::RateLimited => {
                tracing::debug!(
                    object = %record.regarding.name,
                    reason = %record.reason,
                    "event dropped: too many Events about this object"
                );
                self.metrics.count_event("dropped_rate_limited");
            }
        }
    }

    /// Creates the Event for `key` (try number `tries`, sending `event`
    /// again when it is a retry).
    async fn create(
        &mut self,
        key: SeriesKey,
        record: EventRecord,
        event: Option<Value>,
        count: u32,
        tries: u32,
    ) {
        let observed = chrono::Utc::now();
        let mut event = event.unwrap_or_else(|| {
            let mut event = event_object(
                &record.regarding,
                record.uid.as_deref(),
                record.event_type,
                &record.reason,
                &record.message,
                &record.component,
            );
            event["reportingInstance"] = json!(instance_name(&record.component, &self.instance));
            event
        });
        if count > 1 {
            event["series"] = json!({"count": count, "lastObservedTime": micro_time(observed)});
        }
        let namespace = event["metadata"]["namespace"]
            .as_str()
            .unwrap_or("default")
            .to_string();
        let path = format!("/apis/events.k8s.io/v1/namespaces/{namespace}/events");
        let request = http::Request::post(path)
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(event.to_string().into_bytes());
        let name = event["metadata"]["name"].as_str().map(str::to_string);
        match self.send(request).await {
            Ok(_) => {
                self.metrics.count_event("created");
                self.book
                    .created(key, namespace, name, count, Instant::now(), observed);
            }
            // An earlier try went through after all.
            Err(Failure::Refused(error))
                if tries > 1 && error.code == 409 && error.reason == "AlreadyExists" =>
            {
                self.metrics.count_event("created");
                self.book
                    .created(key, namespace, name, count, Instant::now(), observed);
            }
            Err(Failure::Refused(error)) => {
                tracing::debug!(
                    object = %record.regarding.name,
                    reason = %record.reason,
                    code = error.code,
                    error = %error.message,
                    "event dropped: the API server refused it"
                );
                self.metrics.count_event("dropped_refused");
                self.book.forget(&key);
            }
            Err(Failure::Transient(error)) if tries < MAX_TRIES => {
                tracing::debug!(tries, code = error.code, error = %error.message, "event not written yet; trying again");
                let now = Instant::now();
                self.book.pending(&key, &namespace, now, observed);
                self.retries.push(Retry {
                    due: now + Duration::from_secs(1 << (tries - 1)),
                    key,
                    record,
                    event,
                    tries: tries + 1,
                });
            }
            Err(Failure::Transient(error)) => {
                tracing::debug!(tries, code = error.code, error = %error.message, "event dropped: the API server did not take it");
                self.metrics.count_event("dropped_failed");
                self.book.forget(&key);
            }
        }
    }

    /// Patches the series of an Event with its current count.
    async fn write_series(&mut self, key: &SeriesKey) {
        let Some((namespace, name, count, observed)) = self.book.start_write(key, Instant::now())
        else {
            return;
        };
        let body = json!({"series": {"count": count, "lastObservedTime": micro_time(observed)}});
        let path = format!("/apis/events.k8s.io/v1/namespaces/{namespace}/events/{name}");
        let request = http::Request::patch(path)
            .header(http::header::CONTENT_TYPE, "application/merge-patch+json")
            .body(body.to_string().into_bytes());
        match self.send(request).await {
            Ok(_) => self.book.series_written(key, count),
            Err(Failure::Refused(error)) | Err(Failure::Transient(error)) => {
                // Gone (expired) or refused: the next repeat starts anew.
                tracing::debug!(event = %name, code = error.code, error = %error.message, "event series not updated");
                self.book.forget(key);
            }
        }
    }

    /// Writes the series whose updates are due (all pending ones when `all`).
    async fn flush_series(&mut self, all: bool) {
        for key in self.book.due_series(Instant::now(), all) {
            self.write_series(&key).await;
        }
    }

    async fn retry_due(&mut self) {
        let now = Instant::now();
        let (due, later): (Vec<Retry>, Vec<Retry>) = std::mem::take(&mut self.retries)
            .into_iter()
            .partition(|r| r.due <= now);
        self.retries = later;
        for retry in due {
            let count = self.book.count(&retry.key).unwrap_or(1);
            let (key, record, event) = (retry.key, retry.record, Some(retry.event));
            self.create(key, record, event, count, retry.tries).await;
        }
    }

    async fn send(
        &self,
        request: Result<http::Request<Vec<u8>>, http::Error>,
    ) -> Result<String, Failure> {
        let request = request.map_err(|e| {
            Failure::Refused(ApiError {
                code: 400,
                reason: "BadRequest".into(),
                message: e.to_string(),
            })
        })?;
        match tokio::time::timeout(WRITE_TIMEOUT, self.client.request_text(request)).await {
            Ok(Ok(text)) => Ok(text),
            Ok(Err(error)) => Err(classify(from_kube(error))),
            Err(_) => Err(Failure::Transient(ApiError {
                code: 504,
                reason: "Timeout".into(),
                message: format!("no answer within {WRITE_TIMEOUT:?}"),
            })),
        }
    }
}

/// `reportingInstance`: the component and this replica, at most 128
/// characters (the API server's limit).
fn instance_name(component: &str, instance: &str) -> String {
    let mut name = format!("{component}-{instance}");
    let mut cut = name.len().min(128);
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    name.truncate(cut);
    name
}

async fn sleep_until(due: Option<Instant>) {
    match due {
        Some(due) => tokio::time::sleep_until(due).await,
        None => std::future::pending().await,
    }
}

/// A MicroTime as the API server demands it: exactly 6 fractional digits.
fn micro_time(time: chrono::DateTime<chrono::Utc>) -> String {
    time.format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

/// `message`, cut to at most [`MAX_NOTE`] bytes (ending in `...` when cut).
fn note(message: &str) -> String {
    if message.len() <= MAX_NOTE {
        return message.to_string();
    }
    let mut cut = MAX_NOTE - 3;
    while !message.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}...", &message[..cut])
}

/// The events.k8s.io/v1 Event a module records about an object.
pub fn event_object(
    regarding: &ObjectRef,
    uid: Option<&str>,
    event_type: EventType,
    reason: &str,
    message: &str,
    component: &str,
) -> Value {
    let now = chrono::Utc::now();
    let mut event = json!({
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {
            "name": format!("{}.{:x}", regarding.name, now.timestamp_nanos_opt().unwrap_or_default()),
            "namespace": regarding.namespace.clone().unwrap_or_else(|| "default".to_string()),
        },
        "eventTime": micro_time(now),
        "reportingController": component,
        "reportingInstance": component,
        "action": reason,
        "reason": reason,
        "note": note(message),
        "type": match event_type { EventType::Normal => "Normal", EventType::Warning => "Warning" },
        "regarding": {
            "apiVersion": api_version(&regarding.kind),
            "kind": regarding.kind.kind,
            "namespace": regarding.namespace,
            "name": regarding.name,
        },
    });
    // With the uid, `kubectl describe` lists the Event under the object.
    if let Some(uid) = uid.filter(|u| !u.is_empty()) {
        event["regarding"]["uid"] = json!(uid);
    }
    event
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_are_cut_to_what_the_api_server_accepts() {
        assert_eq!(note("short"), "short");
        let long = "é".repeat(MAX_NOTE);
        let cut = note(&long);
        assert!(
            cut.len() <= MAX_NOTE && cut.ends_with("..."),
            "{}",
            cut.len()
        );
        assert_eq!(instance_name("rekon-app", &"x".repeat(200)).len(), 128);
    }
}
