//! Sharded informers: a cache of the objects in this replica's shard
//! ranges only. Where the API server filters (KEP-5866 `shardSelector`,
//! gate `ShardedListAndWatch`), lists and watches carry the selector and
//! only this replica's objects cross the wire; elsewhere the same FNV-1a
//! hash is applied here and foreign objects never enter the cache. When
//! the ranges change, the list and watch start over with the new ones and
//! the cache is compared with the new list (objects leaving are
//! `Deleted`, arriving are `Added`).

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use futures::StreamExt as _;
use kube::api::ApiResource;
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
}

impl ShardField {
    /// The field a `shardSelector` names.
    fn selector_field(self) -> &'static str {
        match self {
            ShardField::Uid => "object.metadata.uid",
            ShardField::Namespace => "object.metadata.namespace",
        }
    }

    /// The point of a cached object.
    pub fn point(self, object: &Cached) -> u64 {
        match self {
            ShardField::Uid => shard_point(object.uid()),
            ShardField::Namespace => shard_point(object.namespace().unwrap_or_default()),
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
/// ranges, started over whenever they change.
pub(crate) fn events(
    client: kube::Client,
    resource: ApiResource,
    namespace: Option<String>,
    sharding: &Sharding,
    make: MakeEvents,
) -> Events {
    struct State {
        client: kube::Client,
        resource: ApiResource,
        namespace: Option<String>,
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
        resource,
        namespace,
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
                let server = match ranges.selector(state.field.selector_field()) {
                    Some(selector) => probe(
                        &state.client,
                        &state.resource,
                        state.namespace.as_deref(),
                        &selector,
                        state.field,
                    )
                    .await
                    .then_some(selector),
                    None => None,
                };
                let mode = if server.is_some() {
                    Filtering::Server
                } else {
                    Filtering::Host
                };
                if state.filtering.swap(mode as u8, Ordering::Relaxed) != mode as u8 {
                    tracing::info!(kind = %state.resource.kind, filtering = mode.label(), ranges = %ranges, "sharded informer: filtering");
                }
                let client = match server {
                    Some(selector) => with_selector(&state.client, selector),
                    None => state.client.clone(),
                };
                *state.listing.lock().expect("listing lock") = Some(ranges.clone());
                let field = state.field;
                let inner = (state.make)(client).filter_map(move |event| {
                    let keep = match &event {
                        Ok(
                            watcher::Event::Apply(o)
                            | watcher::Event::InitApply(o)
                            | watcher::Event::Delete(o),
                        ) => ranges.contains(field.point(o)),
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

/// Whether the API server filters this kind's lists by `selector`: its
/// list echoes the selector (`metadata.shardInfo`), or leaves out an
/// object outside the ranges. An empty kind cannot tell: filtered here.
async fn probe(
    client: &kube::Client,
    resource: &ApiResource,
    namespace: Option<&str>,
    selector: &str,
    field: ShardField,
) -> bool {
    let url = collection_url(resource, namespace);
    let list = |query: String| {
        let client = client.clone();
        let url = format!("{url}?{query}");
        async move {
            let request = http::Request::get(url).body(Vec::new()).ok()?;
            client.request::<serde_json::Value>(request).await.ok()
        }
    };
    let encoded = encode(selector);
    let Some(filtered) = list(format!("limit=500&shardSelector={encoded}")).await else {
        return false;
    };
    if filtered["metadata"]["shardInfo"].is_object() {
        return true;
    }
    // No echo (custom resources have none): look for an object the
    // ranges leave out.
    let Some(all) = list("limit=500".to_string()).await else {
        return false;
    };
    let Some(ranges) = ShardRanges::parse(&ranges_of(selector)) else {
        return false;
    };
    let outside = all["items"].as_array().into_iter().flatten().any(|item| {
        let value = match field {
            ShardField::Uid => item["metadata"]["uid"].as_str(),
            ShardField::Namespace => item["metadata"]["namespace"].as_str(),
        };
        value.is_some_and(|v| !ranges.contains(shard_point(v)))
    });
    let returned_outside = filtered["items"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|item| {
            let value = match field {
                ShardField::Uid => item["metadata"]["uid"].as_str(),
                ShardField::Namespace => item["metadata"]["namespace"].as_str(),
            };
            value.is_some_and(|v| !ranges.contains(shard_point(v)))
        });
    outside && !returned_outside
}

/// The ranges a selector this module wrote names, in [`ShardRanges`]'s
/// text form.
fn ranges_of(selector: &str) -> String {
    selector
        .split("||")
        .filter_map(|call| {
            let mut quoted = call.split('\'').skip(1).step_by(2);
            Some(format!("{}-{}", quoted.next()?, quoted.next()?))
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn collection_url(resource: &ApiResource, namespace: Option<&str>) -> String {
    let base = if resource.group.is_empty() {
        format!("/api/{}", resource.version)
    } else {
        format!("/apis/{}/{}", resource.group, resource.version)
    };
    match namespace {
        Some(ns) => format!("{base}/namespaces/{ns}/{}", resource.plural),
        None => format!("{base}/{}", resource.plural),
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
    fn the_selectors_ranges_read_back() {
        let ranges = ShardRanges::all().minus(&ShardRanges::part(1, 3));
        let selector = ranges.selector("object.metadata.uid").unwrap();
        assert_eq!(ShardRanges::parse(&ranges_of(&selector)), Some(ranges));
        assert_eq!(encode("a b'c"), "a%20b%27c");
    }
}
