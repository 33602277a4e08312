//! Informer: one shared list+watch per kind (and selector), with a compact cache.
//! May call: discovery, the API server (lists and watches).
//!
//! The cache keeps each object in the compact form of [`cache`]: its JSON
//! text (what guests read, with no re-encoding) and the few fields the
//! controller indexes, for little more memory than the JSON itself.
//! [`writer`] is the one place the cache is written; [`watcher`] runs the
//! list+watch.

pub(crate) mod cache;
pub(crate) mod cached;
mod incoming;
pub(crate) mod index;
mod informers;
mod own;
pub(crate) mod shard;
mod watcher;
mod writer;

pub(crate) use cache::IndexSpec;
pub(crate) use cached::Cached;
pub(crate) use informers::{Informers, READ_IDLE};
pub(crate) use own::OwnWrites;
pub(crate) use shard::{Filtering, ShardField};

use std::sync::{Arc, Mutex, RwLock};

use tokio::sync::{mpsc, watch};

use crate::contract::Gvk;
#[cfg(feature = "bench")]
use crate::discovery::{Discovery, ResolveError};
use crate::names::{Resolved, display_kind};
use cache::Objects;

/// A change seen by an informer, against what its cache held.
#[derive(Clone, Debug)]
pub(crate) enum Change {
    /// An object the cache did not hold.
    Added(Arc<Cached>),
    /// An object the cache held, at another resourceVersion: what it was,
    /// then what it is.
    Updated(Arc<Cached>, Arc<Cached>),
    /// An object the cache held is gone.
    Deleted(Arc<Cached>),
}

/// Who receives an informer's changes. Each subscriber has a queue of its
/// own that grows with what it has not read yet and shrinks as it reads
/// (as client-go's listeners do): none misses a change, and an informer
/// whose subscribers keep up holds no buffer. Cheap to clone.
#[derive(Clone, Default)]
pub(crate) struct Subscribers(Arc<Mutex<Vec<mpsc::UnboundedSender<Change>>>>);

impl Subscribers {
    /// A new subscriber, receiving every change sent from now on.
    fn subscribe(&self) -> mpsc::UnboundedReceiver<Change> {
        let (sender, receiver) = mpsc::unbounded_channel();
        self.0.lock().expect("subscribers lock").push(sender);
        receiver
    }

    /// Sends each change to every subscriber, in order; forgets those
    /// that are gone.
    fn send_all(&self, changes: impl IntoIterator<Item = Change>) {
        crate::telemetry::note_activity();
        let mut subscribers = self.0.lock().expect("subscribers lock");
        for change in changes {
            subscribers.retain(|s| s.send(change.clone()).is_ok());
        }
    }
}

/// One shared list+watch and its cache. Stops watching when the last
/// holder drops it.
pub(crate) struct Informer {
    pub gvk: Gvk,
    pub resolved: Resolved,
    pub label_selector: Option<String>,
    /// The one namespace it watches, or none for every namespace.
    pub namespace: Option<String>,
    /// Whether it caches each object's metadata only (apiVersion, kind,
    /// metadata), for sources that need no more.
    pub metadata_only: bool,
    /// For a sharded module: what places an object, and the ranges cached.
    sharding: Option<shard::Sharding>,
    objects: Arc<RwLock<Objects>>,
    changes: Subscribers,
    ready: watch::Receiver<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Informer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl std::fmt::Debug for Informer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Informer")
            .field("kind", &display_kind(&self.gvk))
            .field("label_selector", &self.label_selector)
            .field("namespace", &self.namespace)
            .field("metadata_only", &self.metadata_only)
            .finish_non_exhaustive()
    }
}

impl Informer {
    /// Subscribes to changes from now on; the receiver ends once the
    /// informer is gone.
    pub fn subscribe(&self) -> mpsc::UnboundedReceiver<Change> {
        self.changes.subscribe()
    }

    /// One `()` per change from now on, ending once the informer is gone:
    /// for readers that look again at what they watch on any change.
    pub fn changed(&self) -> futures::stream::BoxStream<'static, ()> {
        Box::pin(futures::stream::unfold(
            self.subscribe(),
            |mut receiver| async move { receiver.recv().await.map(|_| ((), receiver)) },
        ))
    }

    /// Waits until the first list has completed.
    pub async fn wait_ready(&self) {
        let mut ready = self.ready.clone();
        let _ = ready.wait_for(|r| *r).await;
    }

    /// For a sharded informer: the ranges its cache holds (none before its
    /// first list), changing once a list with new ranges completes.
    pub fn shard_synced(&self) -> Option<watch::Receiver<Option<rekon_rules::ShardRanges>>> {
        self.sharding.as_ref().map(|s| s.synced.subscribe())
    }

    /// How a sharded informer filters (none for one that is not).
    pub fn filtering(&self) -> Option<Filtering> {
        self.sharding.as_ref().map(shard::Sharding::filtering)
    }

    /// Whether the first list has completed.
    pub fn is_ready(&self) -> bool {
        *self.ready.borrow()
    }

    /// One object.
    pub fn get(&self, namespace: Option<&str>, name: &str) -> Option<Arc<Cached>> {
        let objects = self.objects.read().expect("informer cache lock");
        objects.get(namespace.unwrap_or_default(), name).cloned()
    }

    /// Every object (in one namespace), ordered by namespace then name.
    pub fn list(&self, namespace: Option<&str>) -> Vec<Arc<Cached>> {
        let objects = self.objects.read().expect("informer cache lock");
        match namespace {
            Some(ns) => objects.in_namespace(ns).cloned().collect(),
            None => objects.iter().cloned().collect(),
        }
    }

    /// How many objects are cached.
    pub fn len(&self) -> usize {
        self.objects.read().expect("informer cache lock").len()
    }

    /// The objects whose key in the index `spec` is `key`, in
    /// `namespace` (or all), ordered as [`list`](Self::list). The index is
    /// built on first use and kept up to date from then on: O(matches).
    pub fn by_index(
        &self,
        spec: &IndexSpec,
        key: &str,
        namespace: Option<&str>,
    ) -> Vec<Arc<Cached>> {
        {
            let objects = self.objects.read().expect("informer cache lock");
            if let Some(found) = objects.by_index(spec, key, namespace) {
                return found;
            }
        }
        let mut objects = self.objects.write().expect("informer cache lock");
        objects.ensure_index(spec);
        objects.by_index(spec, key, namespace).unwrap_or_default()
    }
}

#[cfg(feature = "bench")]
/// One informer started outside a host, synced, and kept running while
/// this lives: to measure what the cache costs (`cargo bench --bench
/// pipeline`).
#[doc(hidden)]
#[derive(Debug)]
pub struct SyncedInformer {
    informer: Arc<Informer>,
}

#[cfg(feature = "bench")]
impl SyncedInformer {
    /// Resolves `kind`, starts its informer (no label selector) and waits
    /// for the first list to be cached.
    pub async fn start(client: kube::Client, kind: &Gvk) -> Result<SyncedInformer, ResolveError> {
        let informer = Informers::new(Arc::new(Discovery::new(client)))
            .informer(kind, None, None)
            .await?;
        informer.wait_ready().await;
        Ok(SyncedInformer { informer })
    }

    /// The same, caching each object's metadata only (as for a watched
    /// kind).
    pub async fn start_metadata(
        client: kube::Client,
        kind: &Gvk,
    ) -> Result<SyncedInformer, ResolveError> {
        let informer = Informers::new(Arc::new(Discovery::new(client)))
            .metadata_informer(kind, None, None)
            .await?;
        informer.wait_ready().await;
        Ok(SyncedInformer { informer })
    }

    /// How many objects are cached.
    pub fn len(&self) -> usize {
        self.informer.len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes of JSON text the cache holds (what guests read).
    pub fn json_bytes(&self) -> usize {
        self.informer.list(None).iter().map(|o| o.json.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// A subscriber that reads nothing for a long burst misses none of it
    /// and reads it in order; one that is gone is forgotten.
    #[test]
    fn a_subscriber_behind_a_burst_misses_nothing() {
        let subscribers = Subscribers::default();
        let mut slow = subscribers.subscribe();
        let gone = subscribers.subscribe();
        drop(gone);
        let object = |name: String| {
            Arc::new(cached::tests::cached_object(
                json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": name, "namespace": "default"}}),
                &cached::tests::config_maps(),
            ))
        };
        let burst = 20_000;
        subscribers.send_all((0..burst).map(|i| Change::Added(object(format!("c{i}")))));
        assert_eq!(
            subscribers.0.lock().unwrap().len(),
            1,
            "the gone one is forgotten"
        );
        for i in 0..burst {
            match slow.try_recv() {
                Ok(Change::Added(cached)) => assert_eq!(cached.name(), format!("c{i}")),
                other => panic!("change {i}: {other:?}"),
            }
        }
        assert!(slow.try_recv().is_err(), "nothing more");
        drop(subscribers);
        assert!(slow.blocking_recv().is_none(), "it ends with its informer");
    }
}
