//! One informer's list+watch task: kube-rs's watcher with rekon's retry
//! delays, feeding the [`CacheWriter`](super::writer::CacheWriter).

use std::sync::{Arc, RwLock};
use std::time::Duration;

use futures::StreamExt as _;
use kube::api::{Api, DynamicObject, PartialObjectMeta};
use kube::runtime::WatchStreamExt as _;
use kube::runtime::watcher;
use tokio::sync::watch;

use super::cache::Objects;
use super::cached::Cached;
use super::incoming::Incoming;
use super::shard::{MakeEvents, Sharding};
use super::writer::CacheWriter;
use super::{Informer, Subscribers};
use crate::contract::Gvk;
use crate::names::{Resolved, display_kind};

/// Retry delays of a failing list or watch: [`WATCH_RETRY_MIN`] doubling
/// to [`WATCH_RETRY_MAX`], each scaled by a random factor between 0.5 and
/// 1 (so replicas do not retry in step), back to the start after a
/// success. Short, so a watch resumes within about a second of the API
/// server answering again.
///
/// A success is an object or a completed list, not the watcher's `Init`
/// (which it emits before each list is even sent): kube's `StreamBackoff`
/// resets on every item, so its `reset` does nothing here and
/// [`run_watch`] resets the shared delay itself. Otherwise a list refused
/// at once (403) would be retried every few milliseconds.
#[derive(Clone)]
struct WatchBackoff {
    next: Arc<std::sync::Mutex<Duration>>,
}

impl WatchBackoff {
    fn new() -> WatchBackoff {
        WatchBackoff {
            next: Arc::new(std::sync::Mutex::new(WATCH_RETRY_MIN)),
        }
    }

    /// Back to the shortest delay: the list or watch works again.
    fn succeeded(&self) {
        *self.next.lock().expect("backoff lock") = WATCH_RETRY_MIN;
    }
}

/// The first retry delay of a failing watch.
pub const WATCH_RETRY_MIN: Duration = Duration::from_millis(100);
/// The longest retry delay of a failing watch.
pub const WATCH_RETRY_MAX: Duration = Duration::from_secs(1);

impl Iterator for WatchBackoff {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        let mut next = self.next.lock().expect("backoff lock");
        let delay = *next;
        *next = (delay * 2).min(WATCH_RETRY_MAX);
        Some(delay.mul_f64(0.5 + crate::names::random_unit() / 2.0))
    }
}

impl kube::runtime::utils::Backoff for WatchBackoff {
    fn reset(&mut self) {}
}

/// Objects per page of a (re)list. Each page is decoded whole before its
/// objects are cached, and the allocator keeps the memory that decoding
/// took: with client-go's 500 per page, a synced cache of 10k 1 KB
/// ConfigMaps costs about 1.5 times their JSON in resident memory, with
/// 100 about 1.1 times (`cargo bench --bench pipeline`), for a few more
/// list requests.
const LIST_PAGE: u32 = 100;

pub(super) fn start(
    client: kube::Client,
    gvk: Gvk,
    resolved: Resolved,
    label_selector: Option<String>,
    namespace: Option<String>,
    metadata_only: bool,
    sharding: Option<Sharding>,
) -> Informer {
    let objects = Arc::new(RwLock::new(Objects::default()));
    let changes = Subscribers::default();
    let (ready_tx, ready) = watch::channel(false);
    let ar = resolved.resource.clone();
    let mut config = watcher::Config::default().page_size(LIST_PAGE);
    if let Some(selector) = &label_selector {
        config = config.labels(selector);
    }
    let make: MakeEvents = {
        let (ar, namespace) = (ar.clone(), namespace.clone());
        Arc::new(move |client: kube::Client| -> Events {
            let resource = ar.clone();
            // Metadata only: each object as apiVersion, kind and metadata
            // (a PartialObjectMetadata watch), for sources that map by
            // metadata.
            if metadata_only {
                let api: Api<PartialObjectMeta<DynamicObject>> = match &namespace {
                    Some(namespace) => Api::namespaced_with(client, namespace, &ar),
                    None => Api::all_with(client, &ar),
                };
                let cache = move |meta: PartialObjectMeta<DynamicObject>| {
                    let object = DynamicObject {
                        types: meta.types,
                        metadata: meta.metadata,
                        data: serde_json::Value::Object(serde_json::Map::new()),
                    };
                    Arc::new(Cached::from_object(object, &resource))
                };
                Box::pin(
                    watcher(api, config.clone()).map(move |event| event.map(|e| cached(e, &cache))),
                )
            } else {
                let api: Api<Incoming> = match &namespace {
                    Some(namespace) => Api::namespaced_with(client, namespace, &ar),
                    None => Api::all_with(client, &ar),
                };
                let cache = move |object| Arc::new(Cached::from_incoming(object, &resource));
                Box::pin(
                    watcher(api, config.clone()).map(move |event| event.map(|e| cached(e, &cache))),
                )
            }
        })
    };
    let (events, listed) = match &sharding {
        Some(sharding) => (
            super::shard::events(client, display_kind(&gvk), sharding, make),
            Some((sharding.listing.clone(), sharding.synced.clone())),
        ),
        None => (make(client), None),
    };
    let task = tokio::spawn(run_watch(
        events,
        display_kind(&gvk),
        objects.clone(),
        changes.clone(),
        ready_tx,
        listed,
    ));
    let sharded = sharding.as_ref().map(|s| format!("{:?}", s.field));
    tracing::info!(kind = %display_kind(&gvk), label_selector, namespace, metadata_only, sharded, "informer started");
    Informer {
        gvk,
        resolved,
        label_selector,
        namespace,
        metadata_only,
        sharding,
        objects,
        changes,
        ready,
        task,
    }
}

/// An event of the watcher's objects as one of cached objects.
fn cached<K>(
    event: watcher::Event<K>,
    cache: impl Fn(K) -> Arc<Cached>,
) -> watcher::Event<Arc<Cached>> {
    match event {
        watcher::Event::Apply(o) => watcher::Event::Apply(cache(o)),
        watcher::Event::Delete(o) => watcher::Event::Delete(cache(o)),
        watcher::Event::Init => watcher::Event::Init,
        watcher::Event::InitApply(o) => watcher::Event::InitApply(cache(o)),
        watcher::Event::InitDone => watcher::Event::InitDone,
    }
}

/// A watcher's events, of whole objects or of their metadata only, as
/// the cache keeps them.
pub(super) type Events = std::pin::Pin<
    Box<dyn futures::Stream<Item = Result<watcher::Event<Arc<Cached>>, watcher::Error>> + Send>,
>;

/// A sharded informer's ranges being listed, and where to say they are
/// cached once listed.
type Listed = (
    Arc<std::sync::Mutex<Option<rekon_rules::ShardRanges>>>,
    watch::Sender<Option<rekon_rules::ShardRanges>>,
);

/// Lists and watches until aborted. The watcher relists on 410 Gone and
/// resumes dropped watches; failures are retried with [`WatchBackoff`].
async fn run_watch(
    events: Events,
    kind: String,
    objects: Arc<RwLock<Objects>>,
    changes: Subscribers,
    ready: watch::Sender<bool>,
    listed: Option<Listed>,
) {
    let backoff = WatchBackoff::new();
    let stream = events.backoff(backoff.clone());
    let mut stream = std::pin::pin!(stream);
    let mut writer = CacheWriter::new(objects);
    let mut failures = 0u32;
    while let Some(event) = stream.next().await {
        let event = match event {
            Ok(watcher::Event::Init) => watcher::Event::Init,
            Ok(event) => {
                if failures > 0 {
                    tracing::info!(%kind, failures, "watch resumed");
                }
                failures = 0;
                backoff.succeeded();
                event
            }
            Err(error) => {
                failures += 1;
                // The first failure of a streak is worth a warning; the
                // backoff then retries quietly.
                if failures == 1 {
                    tracing::warn!(%kind, error = %error, "watch failed, retrying with backoff");
                } else {
                    tracing::debug!(%kind, error = %error, failures, "watch still failing");
                }
                continue;
            }
        };
        let done = matches!(event, watcher::Event::InitDone);
        changes.send_all(writer.apply(event));
        if let (true, Some((listing, synced))) = (done, &listed) {
            // A sharded cache now holds the ranges it listed.
            let ranges = listing.lock().expect("listing lock").clone();
            synced.send_replace(ranges);
        }
        if writer.is_synced() && !*ready.borrow() {
            tracing::info!(%kind, "informer synced");
            ready.send_replace(true);
        }
    }
    // The watcher stream never ends on its own; if it does, say so.
    tracing::error!(%kind, "informer stream ended");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watch_retries_stay_short_and_start_over_after_a_success() {
        use kube::runtime::utils::Backoff as _;
        let mut backoff = WatchBackoff::new();
        let delays: Vec<Duration> = backoff.by_ref().take(10).collect();
        assert!(delays[0] <= WATCH_RETRY_MIN && delays[0] >= WATCH_RETRY_MIN / 2);
        assert!(delays.iter().all(|d| *d <= WATCH_RETRY_MAX), "{delays:?}");
        assert!(delays[9] >= WATCH_RETRY_MAX / 2, "{delays:?}");
        // kube's StreamBackoff resets on every item, the watcher's Init
        // (sent before a list that then fails) included: that is no success.
        backoff.reset();
        assert!(backoff.next().expect("a delay") >= WATCH_RETRY_MAX / 2);
        backoff.succeeded();
        assert!(backoff.next().expect("a delay") <= WATCH_RETRY_MIN);
    }
}
