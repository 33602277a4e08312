//! Sharded informers: a cache of the objects in this replica's shard
//! ranges only. Lists and watches carry the ranges as a KEP-5866
//! `shardSelector`: where the API server filters (gate
//! `ShardedListAndWatch`), only this replica's objects cross the wire;
//! elsewhere the same FNV-1a hash is applied here and foreign objects never
//! enter the cache. When
//! the ranges change, the list and watch start over with the new ones and
//! the cache is compared with the new list (objects leaving are
//! `Deleted`, arriving are `Added`).

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use futures::StreamExt as _;
use kube::runtime::watcher;
use rekon_rules::{ShardRanges, shard_point};
use tokio::sync::watch;

use super::cached::Cached;
use super::watcher::Events;

/// What a sharded informer hashes to place an object.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum ShardField {
    /// The object's uid (a primary sharded by uid).
    Uid,
    /// The object's namespace.
    Namespace,
    /// The uid of the object's controller owner (an owned object follows
    /// its owner); no server filters by it, so it is filtered here.
    Owner,
}

impl ShardField {
    /// The field a `shardSelector` names, if a server can filter by it.
    fn selector_field(self) -> Option<&'static str> {
        match self {
            ShardField::Uid => Some("object.metadata.uid"),
            ShardField::Namespace => Some("object.metadata.namespace"),
            ShardField::Owner => None,
        }
    }

    /// The point of a cached object (none: an owned object without a
    /// controller, which no shard caches).
    pub fn point(self, object: &Cached) -> Option<u64> {
        match self {
            ShardField::Uid => Some(shard_point(object.uid())),
            ShardField::Namespace => Some(shard_point(object.namespace().unwrap_or_default())),
            ShardField::Owner => object
                .owners
                .iter()
                .find(|o| o.controller)
                .map(|o| shard_point(&o.uid)),
        }
    }
}

/// How a sharded informer's objects are filtered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Filtering {
    /// Not started yet.
    Unknown = 0,
    /// Here, after the whole kind was listed and watched.
    Host = 1,
    /// By the API server (`shardSelector`).
    Server = 2,
}

impl Filtering {
    /// The metric and log label.
    pub fn label(self) -> &'static str {
        match self {
            Filtering::Unknown => "unknown",
            Filtering::Host => "host",
            Filtering::Server => "server",
        }
    }
}

/// A sharded informer's state: the ranges it follows, the ranges its
/// cache holds (once listed), and how it filters.
pub(crate) struct Sharding {
    pub field: ShardField,
    pub ranges: watch::Receiver<ShardRanges>,
    /// The ranges of the last completed list.
    pub synced: watch::Sender<Option<ShardRanges>>,
    /// The ranges of the list in progress.
    pub listing: Arc<Mutex<Option<ShardRanges>>>,
    pub filtering: Arc<AtomicU8>,
}

impl Sharding {
    pub fn new(field: ShardField, ranges: watch::Receiver<ShardRanges>) -> Sharding {
        Sharding {
            field,
            ranges,
            synced: watch::Sender::new(None),
            listing: Arc::default(),
            filtering: Arc::new(AtomicU8::new(Filtering::Unknown as u8)),
        }
    }

    pub fn filtering(&self) -> Filtering {
        match self.filtering.load(Ordering::Relaxed) {
            1 => Filtering::Host,
            2 => Filtering::Server,
            _ => Filtering::Unknown,
        }
    }
}

/// How to make one list+watch: the client (with the selector added to
/// its requests, or not) and a filter applied here.
pub(crate) type MakeEvents = Arc<dyn Fn(kube::Client) -> Events + Send + Sync>;

/// The events of a sharded informer: a list+watch with the current
/// ranges, started over whenever they change. The selector is sent
/// whenever the field is one a server can filter by (a server without the
/// gate ignores it), and the ranges are applied here to every object
/// either way, so what is cached never depends on the server. Which of the
/// two filtered is observed: an object outside the ranges reaching us
/// means the host did; enough objects and none outside, the server.
pub(crate) fn events(
    client: kube::Client,
    kind: String,
    sharding: &Sharding,
    make: MakeEvents,
) -> Events {
    struct State {
        client: kube::Client,
        kind: String,
        field: ShardField,
        ranges: watch::Receiver<ShardRanges>,
        listing: Arc<Mutex<Option<ShardRanges>>>,
        filtering: Arc<AtomicU8>,
        make: MakeEvents,
        inner: Option<Events>,
        open: bool,
    }
    let state = State {
        client,
        kind,
        field: sharding.field,
        ranges: sharding.ranges.clone(),
        listing: sharding.listing.clone(),
        filtering: sharding.filtering.clone(),
        make,
        inner: None,
        open: true,
    };
    Box::pin(futures::stream::unfold(state, |mut state| async move {
        loop {
            if state.inner.is_none() {
                let ranges = state.ranges.borrow_and_update().clone();
                let selector = state
                    .field
                    .selector_field()
                    .and_then(|f| ranges.selector(f));
                let client = match &selector {
                    Some(selector) => with_selector(&state.client, selector.clone()),
                    None => state.client.clone(),
                };
                *state.listing.lock().expect("listing lock") = Some(ranges.clone());
                let (field, kind, filtering) =
                    (state.field, state.kind.clone(), state.filtering.clone());
                let server_may_filter = selector.is_some();
                // Objects seen since this list started: kept, and left out
                // here; this many kept and none left out says the server
                // filters (by chance, under one in a million).
                let mut seen = (0usize, 0usize);
                let needed = evidence(ranges.fraction());
                let inner = (state.make)(client).filter_map(move |event| {
                    let keep = match &event {
                        Ok(
                            watcher::Event::Apply(o)
                            | watcher::Event::InitApply(o)
                            | watcher::Event::Delete(o),
                        ) => {
                            let keep = field.point(o).is_some_and(|p| ranges.contains(p));
                            if keep {
                                seen.0 += 1;
                                if server_may_filter && seen.1 == 0 && seen.0 == needed {
                                    observe(&filtering, Filtering::Server, &kind, &ranges);
                                }
                            } else {
                                seen.1 += 1;
                                observe(&filtering, Filtering::Host, &kind, &ranges);
                            }
                            keep
                        }
                        Ok(watcher::Event::InitDone) if !server_may_filter => {
                            observe(&filtering, Filtering::Host, &kind, &ranges);
                            true
                        }
                        _ => true,
                    };
                    futures::future::ready(keep.then_some(event))
                });
                state.inner = Some(Box::pin(inner));
            }
            let inner = state.inner.as_mut().expect("an inner stream");
            tokio::select! {
                item = inner.next() => return item.map(|item| (item, state)),
                changed = state.ranges.changed(), if state.open => {
                    if changed.is_err() {
                        // Nobody moves the ranges any more: keep these.
                        state.open = false;
                    } else {
                        state.inner = None;
                    }
                }
            }
        }
    }))
}

/// How many objects, all in ranges holding `fraction` of the space, it
/// takes to say the server filters: fewer than one in a million lists
/// unfiltered would show as many.
fn evidence(fraction: f64) -> usize {
    if fraction >= 0.999 || fraction <= 0.0 {
        return usize::MAX;
    }
    (1e-6f64.ln() / fraction.ln()).ceil() as usize
}

/// Records who filters, saying so when it changes.
fn observe(filtering: &AtomicU8, mode: Filtering, kind: &str, ranges: &ShardRanges) {
    if filtering.swap(mode as u8, Ordering::Relaxed) != mode as u8 {
        tracing::info!(%kind, filtering = mode.label(), %ranges, "sharded informer: filtering");
    }
}

/// Percent-encodes a query value.
fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len() * 2);
    for byte in value.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(byte as char)
            }
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

/// A client whose every request carries `shardSelector=selector`.
fn with_selector(client: &kube::Client, selector: String) -> kube::Client {
    let base = client.clone();
    let param = format!("shardSelector={}", encode(&selector));
    type BoxError = Box<dyn std::error::Error + Send + Sync>;
    let service = tower::service_fn(move |mut request: http::Request<kube::client::Body>| {
        let base = base.clone();
        let param = param.clone();
        async move {
            let uri = request.uri().clone();
            let path_and_query = match uri.query() {
                Some(query) => format!("{}?{query}&{param}", uri.path()),
                None => format!("{}?{param}", uri.path()),
            };
            let mut parts = uri.into_parts();
            parts.path_and_query = Some(path_and_query.parse().map_err(BoxError::from)?);
            *request.uri_mut() = http::Uri::from_parts(parts).map_err(BoxError::from)?;
            base.send(request).await.map_err(BoxError::from)
        }
    });
    kube::Client::new(service, client.default_namespace().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_server_is_said_to_filter_on_enough_evidence() {
        assert_eq!(evidence(1.0 / 3.0), 13);
        assert_eq!(evidence(0.5), 20);
        assert_eq!(
            evidence(1.0),
            usize::MAX,
            "nothing to tell with every point"
        );
    }

    #[test]
    fn query_values_are_percent_encoded() {
        assert_eq!(
            encode("shardRange(object.metadata.uid, '0x0', '0x1') || x"),
            "shardRange%28object.metadata.uid%2C%20%270x0%27%2C%20%270x1%27%29%20%7C%7C%20x"
        );
    }
}
