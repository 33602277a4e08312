//! The recorder's memory, without I/O: which Events exist and their
//! counts (series), and each object's token bucket.

use std::collections::{HashMap, HashSet, VecDeque};

use tokio::time::Instant;

use super::{BURST, EventRecord, REFILL, SERIES_FLUSH, SERIES_WINDOW};
use crate::contract::EventType;
use crate::names::api_version;

/// Most Events (and objects) remembered for aggregation and rate limits.
const MAX_REMEMBERED: usize = 4096;

/// What makes two Events the same Event: the object, the reporting
/// component, the type and the reason; not the message (as kube-rs's
/// recorder keys them), so an object's finalizer that runs twice with
/// another message records one Event whose count is 2.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
pub(super) struct SeriesKey {
    object: ObjectKey,
    warning: bool,
    reason: String,
}

/// One object, as a reporting component sees it.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct ObjectKey {
    component: String,
    api_version: String,
    kind: String,
    namespace: Option<String>,
    name: String,
    uid: Option<String>,
}

/// An Event written (or being written), and its repeats.
struct Series {
    /// Where it lives, once created.
    namespace: String,
    name: Option<String>,
    count: u32,
    /// The count the API server has.
    written: u32,
    last_seen: Instant,
    last_observed: chrono::DateTime<chrono::Utc>,
    last_write: Instant,
}

/// A token bucket.
struct Bucket {
    tokens: f64,
    updated: Instant,
}

impl Bucket {
    fn refilled(&self, now: Instant) -> f64 {
        let refill = now.duration_since(self.updated).as_secs_f64() / REFILL.as_secs_f64();
        (self.tokens + refill).min(f64::from(BURST))
    }

    fn take(&mut self, now: Instant) -> bool {
        self.tokens = self.refilled(now);
        self.updated = now;
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// What to do with one more occurrence of an Event.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Decision {
    /// Create a new Event with this count.
    Create(u32),
    /// A repeat: write the series now.
    WriteSeries,
    /// A repeat: counted, written later.
    Fold,
    /// Too many new Events about the object: drop it.
    RateLimited,
}

/// The recorder's memory, without I/O: which Events exist, their counts,
/// and each object's token bucket. Time is passed in, so it is tested
/// without waiting.
#[derive(Default)]
pub(super) struct Book {
    series: HashMap<SeriesKey, Series>,
    /// Series keys, oldest first, to forget the oldest beyond the limit.
    order: VecDeque<SeriesKey>,
    buckets: HashMap<ObjectKey, Bucket>,
    /// Created Events with repeats the API server does not have yet: the
    /// only ones a timer waits for (a host recording thousands of Events
    /// looks at these few, not at every series, each time it wakes).
    unflushed: HashSet<SeriesKey>,
    /// When idle series and full buckets are next forgotten.
    forget_due: Option<Instant>,
}

impl Book {
    /// The uid of the object `record` is about, as a remembered Event about
    /// it gives it: an Event recorded once the object has left the cache
    /// (a finalizer's second run) then joins the series of the first.
    pub(super) fn known_uid(&self, record: &EventRecord) -> Option<String> {
        let object = series_key(record).object;
        self.series.keys().find_map(|key| {
            let known = &key.object;
            (known.uid.is_some()
                && known.component == object.component
                && known.api_version == object.api_version
                && known.kind == object.kind
                && known.namespace == object.namespace
                && known.name == object.name)
                .then(|| known.uid.clone())
                .flatten()
        })
    }

    /// Forgets the Event `key` (its next occurrence is a new Event).
    pub(super) fn forget(&mut self, key: &SeriesKey) {
        self.series.remove(key);
        self.unflushed.remove(key);
    }

    /// How many times the Event `key` has occurred in its series.
    pub(super) fn count(&self, key: &SeriesKey) -> Option<u32> {
        self.series.get(key).map(|s| s.count)
    }

    /// One more occurrence of the Event `key`.
    pub(super) fn observe(
        &mut self,
        key: &SeriesKey,
        now: Instant,
        wall: chrono::DateTime<chrono::Utc>,
    ) -> Decision {
        if let Some(series) = self.series.get_mut(key)
            && now.duration_since(series.last_seen) < SERIES_WINDOW
        {
            series.count += 1;
            series.last_seen = now;
            series.last_observed = wall;
            // The first repeat is written at once; later ones are coalesced.
            let first_repeat = series.written == 1 && series.name.is_some();
            if first_repeat && now.duration_since(series.last_write) >= SERIES_FLUSH {
                return Decision::WriteSeries;
            }
            if series.name.is_some() && !self.unflushed.contains(key) {
                self.unflushed.insert(key.clone());
            }
            return Decision::Fold;
        }
        let bucket = self.buckets.entry(key.object.clone()).or_insert(Bucket {
            tokens: f64::from(BURST),
            updated: now,
        });
        if bucket.take(now) {
            self.series.remove(key);
            self.unflushed.remove(key);
            Decision::Create(1)
        } else {
            Decision::RateLimited
        }
    }

    /// The Event `key` was created as `namespace/name` with `count`.
    pub(super) fn created(
        &mut self,
        key: SeriesKey,
        namespace: String,
        name: Option<String>,
        count: u32,
        now: Instant,
        wall: chrono::DateTime<chrono::Utc>,
    ) {
        // Repeats counted while the create was retried stay counted.
        let count = self.series.get(&key).map_or(count, |s| s.count.max(count));
        let series = Series {
            namespace,
            name,
            count,
            written: count,
            last_seen: now,
            last_observed: wall,
            last_write: now,
        };
        self.unflushed.remove(&key);
        if self.series.insert(key.clone(), series).is_none() {
            self.order.push_back(key);
        }
        self.forget_due.get_or_insert(now + SERIES_WINDOW);
        while self.order.len() > MAX_REMEMBERED {
            if let Some(oldest) = self.order.pop_front() {
                self.series.remove(&oldest);
                self.unflushed.remove(&oldest);
            }
        }
        if self.buckets.len() > MAX_REMEMBERED {
            self.forget_idle(now);
        }
    }

    /// The create of `key` is being retried: repeats meanwhile are counted
    /// on a placeholder.
    pub(super) fn pending(
        &mut self,
        key: &SeriesKey,
        namespace: &str,
        now: Instant,
        wall: chrono::DateTime<chrono::Utc>,
    ) {
        self.series.entry(key.clone()).or_insert(Series {
            namespace: namespace.to_string(),
            name: None,
            count: 1,
            written: 0,
            last_seen: now,
            last_observed: wall,
            last_write: now,
        });
    }

    /// A series write of `key` starts at `now`: where the Event is, the
    /// count to write and when it was last seen.
    pub(super) fn start_write(
        &mut self,
        key: &SeriesKey,
        now: Instant,
    ) -> Option<(String, String, u32, chrono::DateTime<chrono::Utc>)> {
        let series = self.series.get_mut(key)?;
        let name = series.name.clone()?;
        series.last_write = now;
        Some((
            series.namespace.clone(),
            name,
            series.count,
            series.last_observed,
        ))
    }

    /// The series of `key` is written up to `count`.
    pub(super) fn series_written(&mut self, key: &SeriesKey, count: u32) {
        if let Some(series) = self.series.get_mut(key) {
            series.written = series.written.max(count);
            if series.written >= series.count {
                self.unflushed.remove(key);
            }
        }
    }

    /// The Events whose series has repeats to write: due ones (at most one
    /// write per [`SERIES_FLUSH`]), or all of them.
    pub(super) fn due_series(&self, now: Instant, all: bool) -> Vec<SeriesKey> {
        self.unflushed
            .iter()
            .filter(|k| {
                self.series.get(*k).is_some_and(|s| {
                    s.name.is_some()
                        && s.count > s.written
                        && (all || now.duration_since(s.last_write) >= SERIES_FLUSH)
                })
            })
            .cloned()
            .collect()
    }

    /// When a series with repeats is next due to be written, or idle
    /// series next to be forgotten.
    pub(super) fn next_due(&self) -> Option<Instant> {
        self.unflushed
            .iter()
            .filter_map(|k| self.series.get(k))
            .map(|s| s.last_write + SERIES_FLUSH)
            .chain(self.forget_due)
            .min()
    }

    /// Forgets idle series and full buckets when it is time to
    /// ([`Book::next_due`]): at most once per [`SERIES_WINDOW`].
    pub(super) fn forget_idle_when_due(&mut self, now: Instant) {
        if self.forget_due.is_some_and(|due| now >= due) {
            self.forget_idle(now);
        }
    }

    /// Forgets series not seen for [`SERIES_WINDOW`] and full buckets.
    pub(super) fn forget_idle(&mut self, now: Instant) {
        self.series
            .retain(|_, s| now.duration_since(s.last_seen) < SERIES_WINDOW || s.count > s.written);
        let series = &self.series;
        self.order.retain(|k| series.contains_key(k));
        self.unflushed.retain(|k| series.contains_key(k));
        self.buckets
            .retain(|_, b| b.refilled(now) < f64::from(BURST));
        self.forget_due =
            (!self.series.is_empty() || !self.buckets.is_empty()).then_some(now + SERIES_WINDOW);
    }
}

pub(super) fn series_key(record: &EventRecord) -> SeriesKey {
    let regarding = &record.regarding;
    SeriesKey {
        object: ObjectKey {
            component: record.component.clone(),
            api_version: api_version(&regarding.kind),
            kind: regarding.kind.kind.clone(),
            namespace: regarding.namespace.clone(),
            name: regarding.name.clone(),
            uid: record.uid.clone(),
        },
        warning: record.event_type == EventType::Warning,
        reason: record.reason.clone(),
    }
}

#[cfg(test)]
mod tests;
