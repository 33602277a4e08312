//! Informer: one shared list+watch per kind (and selector), with a compact cache.
//! May call: discovery, the API server (lists and watches).
//!
//! The cache keeps each object in the compact form of [`cache`]: its JSON
//! text (what guests read, with no re-encoding) and the few fields the
//! controller indexes, for little more memory than the JSON itself.
//! [`writer`] is the one place the cache is written; [`watcher`] runs the
//! list+watch.

pub(crate) mod cache;
mod incoming;
pub(crate) mod index;
mod watcher;
mod writer;

pub(crate) use cache::{Cached, IndexSpec};

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock, Weak};

use tokio::sync::{mpsc, watch};

use crate::contract::Gvk;
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

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct InformerKey {
    group: String,
    version: String,
    kind: String,
    label_selector: Option<String>,
    namespace: Option<String>,
    metadata_only: bool,
}

impl InformerKey {
    fn new(gvk: &Gvk, label_selector: Option<&str>, namespace: Option<&str>) -> InformerKey {
        InformerKey {
            group: gvk.group.clone(),
            version: gvk.version.clone(),
            kind: gvk.kind.clone(),
            label_selector: label_selector.map(str::to_string),
            namespace: namespace.map(str::to_string),
            metadata_only: false,
        }
    }

    fn metadata_only(mut self) -> InformerKey {
        self.metadata_only = true;
        self
    }
}

/// How long an informer started for guests' reads is kept after its last
/// read, when no controller follows its kind.
pub(crate) const READ_IDLE: std::time::Duration = std::time::Duration::from_secs(300);

/// The process's informers, shared by every module.
pub(crate) struct Informers {
    discovery: Arc<Discovery>,
    informers: Mutex<HashMap<InformerKey, Weak<Informer>>>,
    /// Informers started for guests' reads, held until idle for
    /// [`READ_IDLE`]: with the time of their last read.
    reads: Mutex<HashMap<InformerKey, (Arc<Informer>, tokio::time::Instant)>>,
    /// Serialises starts so two modules asking at once share one watch.
    starting: tokio::sync::Mutex<()>,
}

impl Informers {
    pub fn new(discovery: Arc<Discovery>) -> Informers {
        Informers {
            discovery,
            informers: Mutex::new(HashMap::new()),
            reads: Mutex::new(HashMap::new()),
            starting: tokio::sync::Mutex::new(()),
        }
    }

    /// The informer for a kind (label selector, namespace), started if no
    /// one holds it yet. A namespace is ignored for a cluster-scoped kind.
    pub async fn informer(
        &self,
        gvk: &Gvk,
        label_selector: Option<&str>,
        namespace: Option<&str>,
    ) -> Result<Arc<Informer>, ResolveError> {
        self.start(gvk, label_selector, namespace, false).await
    }

    /// An informer of the metadata of a kind's objects (label selector,
    /// namespace): a running informer of whole objects if there is one (no
    /// second cache), else one of metadata only, started if no one holds it.
    pub async fn metadata_informer(
        &self,
        gvk: &Gvk,
        label_selector: Option<&str>,
        namespace: Option<&str>,
    ) -> Result<Arc<Informer>, ResolveError> {
        let namespace = self.scope(gvk, namespace).await?;
        if let Some(whole) = self.running(gvk, label_selector, namespace) {
            return Ok(whole);
        }
        self.start(gvk, label_selector, namespace, true).await
    }

    /// `namespace`, or none for a cluster-scoped kind.
    async fn scope<'a>(
        &self,
        gvk: &Gvk,
        namespace: Option<&'a str>,
    ) -> Result<Option<&'a str>, ResolveError> {
        match namespace {
            Some(_) if !self.discovery.resolve(gvk).await?.namespaced => Ok(None),
            other => Ok(other),
        }
    }

    async fn start(
        &self,
        gvk: &Gvk,
        label_selector: Option<&str>,
        namespace: Option<&str>,
        metadata_only: bool,
    ) -> Result<Arc<Informer>, ResolveError> {
        let namespace = self.scope(gvk, namespace).await?;
        let mut key = InformerKey::new(gvk, label_selector, namespace);
        if metadata_only {
            key = key.metadata_only();
        }
        if let Some(informer) = self.running_key(&key) {
            return Ok(informer);
        }
        let _starting = self.starting.lock().await;
        if let Some(informer) = self.running_key(&key) {
            return Ok(informer);
        }
        let resolved = self.discovery.resolve(gvk).await?;
        let informer = Arc::new(watcher::start(
            self.discovery.client().clone(),
            gvk.clone(),
            resolved,
            label_selector.map(str::to_string),
            namespace.map(str::to_string),
            metadata_only,
        ));
        let mut informers = self.informers.lock().expect("informers lock");
        informers.retain(|_, weak| weak.strong_count() > 0);
        informers.insert(key, Arc::downgrade(&informer));
        Ok(informer)
    }

    /// The informer that serves a guest's read of `gvk` in `namespace`
    /// (all with none): one that runs for the whole kind, else one for
    /// that namespace, else one started for reads (namespaced when the
    /// read is) and kept until idle for [`READ_IDLE`], so repeated reads
    /// make one list and one watch.
    pub async fn for_read(
        &self,
        gvk: &Gvk,
        namespace: Option<&str>,
    ) -> Result<Arc<Informer>, ResolveError> {
        self.release_idle_reads();
        let covering = self
            .running(gvk, None, None)
            .or_else(|| namespace.and_then(|ns| self.running(gvk, None, Some(ns))));
        let informer = match covering {
            Some(informer) => informer,
            None => self.informer(gvk, None, namespace).await?,
        };
        let key = InformerKey::new(gvk, None, informer.namespace.as_deref());
        let mut reads = self.reads.lock().expect("informers lock");
        let now = tokio::time::Instant::now();
        reads
            .entry(key)
            .and_modify(|(_, used)| *used = now)
            .or_insert_with(|| (informer.clone(), now));
        Ok(informer)
    }

    /// Lets go of the informers started for reads and not read for
    /// [`READ_IDLE`] (a controller that follows the kind keeps its own).
    pub fn release_idle_reads(&self) {
        let now = tokio::time::Instant::now();
        self.reads
            .lock()
            .expect("informers lock")
            .retain(|_, (_, used)| now.duration_since(*used) < READ_IDLE);
    }

    /// An object from a running informer of its kind (none is started).
    pub fn cached(&self, kind: &Gvk, namespace: Option<&str>, name: &str) -> Option<Arc<Cached>> {
        self.running(kind, None, None)?.get(namespace, name)
    }

    /// The informer of a kind (label selector, namespace) if one runs
    /// (none is started).
    pub fn running(
        &self,
        kind: &Gvk,
        label_selector: Option<&str>,
        namespace: Option<&str>,
    ) -> Option<Arc<Informer>> {
        self.running_key(&InformerKey::new(kind, label_selector, namespace))
    }

    /// A running informer of a kind (label selector, namespace), of whole
    /// objects or else of metadata only.
    pub fn running_any(
        &self,
        kind: &Gvk,
        label_selector: Option<&str>,
        namespace: Option<&str>,
    ) -> Option<Arc<Informer>> {
        let key = InformerKey::new(kind, label_selector, namespace);
        self.running_key(&key)
            .or_else(|| self.running_key(&key.metadata_only()))
    }

    fn running_key(&self, key: &InformerKey) -> Option<Arc<Informer>> {
        self.informers
            .lock()
            .expect("informers lock")
            .get(key)
            .and_then(Weak::upgrade)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    async fn informers() -> (rekon_apiserver::RunningServer, Informers) {
        let server = rekon_apiserver::ApiServer::builder().start().await.unwrap();
        let kubeconfig = kube::config::Kubeconfig::from_yaml(&server.kubeconfig()).unwrap();
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
            .await
            .unwrap();
        let client = kube::Client::try_from(config).unwrap();
        (server, Informers::new(Arc::new(Discovery::new(client))))
    }

    /// A subscriber that reads nothing for a long burst misses none of it
    /// and reads it in order; one that is gone is forgotten.
    #[test]
    fn a_subscriber_behind_a_burst_misses_nothing() {
        let subscribers = Subscribers::default();
        let mut slow = subscribers.subscribe();
        let gone = subscribers.subscribe();
        drop(gone);
        let object = |name: String| {
            Arc::new(cache::tests::cached_object(
                json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": name, "namespace": "default"}}),
                &cache::tests::config_maps(),
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

    /// A metadata informer caches apiVersion, kind and metadata, not the
    /// body; one of whole objects, when it runs, serves in its place.
    #[tokio::test]
    async fn metadata_informers_keep_metadata_only_and_yield_to_whole_ones() {
        let (server, informers) = informers().await;
        server
            .store()
            .apply_object(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "big", "namespace": "default", "labels": {"team": "red"}},
                "data": {"payload": "x".repeat(4096)}}))
            .unwrap();
        let kind = crate::names::config_map_kind();
        let meta = informers
            .metadata_informer(&kind, None, None)
            .await
            .unwrap();
        meta.wait_ready().await;
        assert!(meta.metadata_only);
        let cached = meta.get(Some("default"), "big").unwrap();
        assert_eq!(cached.label("team"), Some("red"));
        let object: serde_json::Value = serde_json::from_str(&cached.json).unwrap();
        assert_eq!(object["kind"], "ConfigMap");
        assert!(object.get("data").is_none(), "{object}");
        assert!(cached.json.len() < 1024);

        let whole = informers.informer(&kind, None, None).await.unwrap();
        whole.wait_ready().await;
        assert!(
            whole
                .get(Some("default"), "big")
                .unwrap()
                .json
                .contains("payload")
        );
        let again = informers
            .metadata_informer(&kind, None, None)
            .await
            .unwrap();
        assert!(
            Arc::ptr_eq(&again, &whole),
            "a whole-object informer serves metadata too"
        );
    }
}
