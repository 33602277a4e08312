//! The recorder's task: keeps the [`Book`], writes one request at a time,
//! tries a create the API server could not take now again, and patches
//! each series with its count.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::events::v1::Event;
use serde_json::json;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::book::{Book, Decision, SeriesKey, series_key};
use super::object::{event_object, series};
use super::{Command, EventRecord, MAX_TRIES, WRITE_TIMEOUT};
use crate::contract::{ApiError, from_kube};
use crate::telemetry::Metrics;

/// A create to try again.
pub(super) struct Retry {
    due: Instant,
    key: SeriesKey,
    record: EventRecord,
    /// The Event as first sent: a retry sends the same name, so a create
    /// that timed out but went through is not made twice.
    event: Event,
    tries: u32,
}

/// The recorder's task: keeps the [`Book`], writes one request at a time.
pub(super) struct Writer {
    pub client: kube::Client,
    pub instance: String,
    pub metrics: Arc<Metrics>,
    pub book: Book,
    pub retries: Vec<Retry>,
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
    pub(super) async fn run(mut self, mut inbox: mpsc::Receiver<Command>) {
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
        event: Option<Event>,
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
            event.reporting_instance = Some(instance_name(&record.component, &self.instance));
            event
        });
        if count > 1 {
            event.series = Some(series(count, observed));
        }
        let namespace = event
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".to_string());
        let path = format!("/apis/events.k8s.io/v1/namespaces/{namespace}/events");
        let request = http::Request::post(path)
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(serde_json::to_vec(&event).expect("an Event serialises"));
        let name = event.metadata.name.clone();
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
        let body = json!({ "series": series(count, observed) });
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

#[cfg(test)]
mod tests {
    use super::instance_name;

    #[test]
    fn the_reporting_instance_is_cut_to_what_the_api_server_accepts() {
        assert_eq!(
            instance_name("rekon-app", "replica-1"),
            "rekon-app-replica-1"
        );
        assert_eq!(instance_name("rekon-app", &"x".repeat(200)).len(), 128);
    }
}
