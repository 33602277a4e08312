//! The process's informers: one per kind, label selector and namespace,
//! shared by every module and by guests' reads, started on first need and
//! kept while needed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use super::shard::{ShardField, Sharding};
use super::{Cached, Informer, OwnWrites, watcher};
use crate::contract::Gvk;
use crate::discovery::{Discovery, ResolveError};

#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct InformerKey {
    group: String,
    version: String,
    kind: String,
    label_selector: Option<String>,
    namespace: Option<String>,
    metadata_only: bool,
    shard: Option<ShardField>,
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
            shard: None,
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
    /// What this process wrote (echoes of its writes told apart).
    own: Arc<OwnWrites>,
}

impl Informers {
    pub fn new(discovery: Arc<Discovery>) -> Informers {
        Informers {
            discovery,
            informers: Mutex::new(HashMap::new()),
            reads: Mutex::new(HashMap::new()),
            starting: tokio::sync::Mutex::new(()),
            own: Arc::default(),
        }
    }

    /// What this process wrote: the cluster notes each write's answer, the
    /// controllers tell a change that only echoes one of them.
    pub fn own_writes(&self) -> Arc<OwnWrites> {
        self.own.clone()
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

    /// The informer of the objects of a kind (label selector, namespace)
    /// in this replica's shard `ranges`, placed by `field`; started if no
    /// one holds it yet.
    pub async fn sharded(
        &self,
        gvk: &Gvk,
        label_selector: Option<&str>,
        namespace: Option<&str>,
        field: ShardField,
        ranges: &tokio::sync::watch::Receiver<rekon_rules::ShardRanges>,
    ) -> Result<Arc<Informer>, ResolveError> {
        let namespace = self.scope(gvk, namespace).await?;
        let mut key = InformerKey::new(gvk, label_selector, namespace);
        key.shard = Some(field);
        self.start_key(key, gvk, Some(Sharding::new(field, ranges.clone())))
            .await
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
        self.start_key(key, gvk, None).await
    }

    async fn start_key(
        &self,
        key: InformerKey,
        gvk: &Gvk,
        sharding: Option<Sharding>,
    ) -> Result<Arc<Informer>, ResolveError> {
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
            key.label_selector.clone(),
            key.namespace.clone(),
            key.metadata_only,
            sharding,
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
    use serde_json::json;

    use super::*;

    async fn informers() -> (rekon_apiserver::RunningServer, Informers) {
        let server = rekon_apiserver::ApiServer::builder().start().await.unwrap();
        let kubeconfig = kube::config::Kubeconfig::from_yaml(&server.kubeconfig()).unwrap();
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
            .await
            .unwrap();
        let client = kube::Client::try_from(config).unwrap();
        (server, Informers::new(Arc::new(Discovery::new(client))))
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
