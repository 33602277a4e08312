//! Shared informers: one list+watch per kind (and label selector) in the
//! whole process, whatever the number of modules that need it, with a cache
//! of the objects it has seen.
//!
//! The cache keeps each object in the compact form of [`crate::cached`]: its
//! JSON text (what guests read, with no re-encoding) and the few fields the
//! controller indexes, for little more memory than the JSON itself.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;

use futures::StreamExt as _;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind};
use kube::discovery::Scope;
use kube::runtime::WatchStreamExt as _;
use kube::runtime::watcher;
use tokio::sync::{broadcast, watch};

use crate::bindings::{Gvk, display_kind};
pub(crate) use crate::cached::Cached;
use crate::cached::Objects;

/// Why a kind could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// Discovery does not know the kind (a CRD not installed yet, a typo).
    #[error("the API server does not serve {kind}")]
    Unknown {
        /// The kind, as `Kind.group/version`.
        kind: String,
        /// What discovery said.
        #[source]
        source: kube::Error,
    },
}

impl ResolveError {
    /// A short, bounded label for metrics.
    pub fn metric_label(&self) -> &'static str {
        match self {
            ResolveError::Unknown { .. } => "unknown_kind",
        }
    }
}

/// A kind as the API server serves it.
#[derive(Clone, Debug)]
pub(crate) struct Resolved {
    pub resource: ApiResource,
    pub namespaced: bool,
}

impl Resolved {
    /// `/api/v1` or `/apis/group/version`, then the namespace, then the plural.
    pub fn url_path(&self, namespace: Option<&str>) -> String {
        let mut path = if self.resource.group.is_empty() {
            format!("/api/{}", self.resource.version)
        } else {
            format!("/apis/{}/{}", self.resource.group, self.resource.version)
        };
        if let (true, Some(ns)) = (self.namespaced, namespace) {
            path.push_str("/namespaces/");
            path.push_str(ns);
        }
        path.push('/');
        path.push_str(&self.resource.plural);
        path
    }
}

/// A change seen by an informer, against what its cache held.
#[derive(Clone, Debug)]
pub(crate) enum Change {
    /// An object the cache did not hold.
    Added(Arc<Cached>),
    /// An object the cache held, at another resourceVersion.
    Updated(Arc<Cached>),
    /// An object the cache held is gone.
    Deleted(Arc<Cached>),
}

/// Applies a watcher's events to a cache, synchronously, and says what each
/// changed: the one place where the cache is written.
///
/// A (re)list is collected whole, then compared with the cache: objects it
/// lacks are `Deleted`, new ones `Added`, and those whose resourceVersion
/// moved `Updated`; unchanged objects make no change. A watch event changes
/// one object; one the cache already holds at the same resourceVersion (a
/// replay) makes no change.
pub(crate) struct CacheWriter {
    objects: Arc<RwLock<Objects>>,
    relist: Option<Objects>,
    synced: bool,
}

impl CacheWriter {
    pub fn new(objects: Arc<RwLock<Objects>>) -> CacheWriter {
        CacheWriter {
            objects,
            relist: None,
            synced: false,
        }
    }

    /// Whether a list has completed.
    pub fn is_synced(&self) -> bool {
        self.synced
    }

    /// Applies one event; returns what it changed.
    pub fn apply(&mut self, event: watcher::Event<Arc<Cached>>) -> Vec<Change> {
        match event {
            watcher::Event::Init => {
                self.relist = Some(Objects::default());
                Vec::new()
            }
            watcher::Event::InitApply(object) => {
                self.relist
                    .get_or_insert_with(Objects::default)
                    .insert(object);
                Vec::new()
            }
            watcher::Event::InitDone => {
                let fresh = self.relist.take().unwrap_or_default();
                let changes = {
                    let current = self.objects.read().expect("informer cache lock");
                    diff(&current, &fresh)
                };
                *self.objects.write().expect("informer cache lock") = fresh;
                self.synced = true;
                changes
            }
            watcher::Event::Apply(object) => {
                let mut objects = self.objects.write().expect("informer cache lock");
                let previous = objects
                    .get(object.namespace().unwrap_or_default(), object.name())
                    .map(|o| o.resource_version() == object.resource_version());
                objects.insert(object.clone());
                match previous {
                    None => vec![Change::Added(object)],
                    Some(false) => vec![Change::Updated(object)],
                    Some(true) => Vec::new(),
                }
            }
            watcher::Event::Delete(object) => {
                let mut objects = self.objects.write().expect("informer cache lock");
                let held = objects
                    .get(object.namespace().unwrap_or_default(), object.name())
                    .is_some();
                objects.remove(&object);
                if held {
                    vec![Change::Deleted(object)]
                } else {
                    Vec::new()
                }
            }
        }
    }
}

/// What replacing `current` by `fresh` changes.
fn diff(current: &Objects, fresh: &Objects) -> Vec<Change> {
    fn key(o: &Cached) -> (&str, &str) {
        (o.namespace().unwrap_or_default(), o.name())
    }
    let mut changes = Vec::new();
    for object in current.iter() {
        let (namespace, name) = key(object);
        if fresh.get(namespace, name).is_none() {
            changes.push(Change::Deleted(object.clone()));
        }
    }
    for object in fresh.iter() {
        let (namespace, name) = key(object);
        match current.get(namespace, name) {
            None => changes.push(Change::Added(object.clone())),
            Some(held) if held.resource_version() != object.resource_version() => {
                changes.push(Change::Updated(object.clone()));
            }
            Some(_) => {}
        }
    }
    changes
}

/// Retry delays of a failing list or watch: [`WATCH_RETRY_MIN`] doubling
/// to [`WATCH_RETRY_MAX`], each scaled by a random factor between 0.5 and
/// 1 (so replicas do not retry in step), back to the start after any
/// success. Short, so a watch resumes within about a second of the API
/// server answering again.
struct WatchBackoff {
    next: Duration,
}

/// The first retry delay of a failing watch.
pub const WATCH_RETRY_MIN: Duration = Duration::from_millis(100);
/// The longest retry delay of a failing watch.
pub const WATCH_RETRY_MAX: Duration = Duration::from_secs(1);

impl Iterator for WatchBackoff {
    type Item = Duration;

    fn next(&mut self) -> Option<Duration> {
        let delay = self.next;
        self.next = (delay * 2).min(WATCH_RETRY_MAX);
        Some(delay.mul_f64(0.5 + random_unit() / 2.0))
    }
}

impl kube::runtime::utils::Backoff for WatchBackoff {
    fn reset(&mut self) {
        self.next = WATCH_RETRY_MIN;
    }
}

/// A random number in `[0, 1)`, from the standard library's hasher seeds.
fn random_unit() -> f64 {
    use std::hash::{BuildHasher as _, Hasher as _};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(0);
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// One shared list+watch and its cache. Stops watching when the last
/// holder drops it.
pub(crate) struct Informer {
    pub gvk: Gvk,
    pub resolved: Resolved,
    pub label_selector: Option<String>,
    objects: Arc<RwLock<Objects>>,
    changes: broadcast::Sender<Change>,
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
            .finish_non_exhaustive()
    }
}

impl Informer {
    /// Subscribes to changes from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<Change> {
        self.changes.subscribe()
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
}

/// One informer started outside a host, synced, and kept running while
/// this lives: to measure what the cache costs (`cargo bench --bench
/// pipeline`).
#[doc(hidden)]
#[derive(Debug)]
pub struct SyncedInformer {
    informer: Arc<Informer>,
}

impl SyncedInformer {
    /// Resolves `kind`, starts its informer (no label selector) and waits
    /// for the first list to be cached.
    pub async fn start(client: kube::Client, kind: &Gvk) -> Result<SyncedInformer, ResolveError> {
        let informer = Informers::new(client).informer(kind, None).await?;
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
}

impl InformerKey {
    fn new(gvk: &Gvk, label_selector: Option<&str>) -> InformerKey {
        InformerKey {
            group: gvk.group.clone(),
            version: gvk.version.clone(),
            kind: gvk.kind.clone(),
            label_selector: label_selector.map(str::to_string),
        }
    }
}

/// The process's informers, shared by every module.
pub(crate) struct Informers {
    client: kube::Client,
    informers: Mutex<HashMap<InformerKey, Weak<Informer>>>,
    resolved: Mutex<HashMap<(String, String, String), Resolved>>,
    /// Serialises starts so two modules asking at once share one watch.
    starting: tokio::sync::Mutex<()>,
}

impl Informers {
    pub fn new(client: kube::Client) -> Informers {
        Informers {
            client,
            informers: Mutex::new(HashMap::new()),
            resolved: Mutex::new(HashMap::new()),
            starting: tokio::sync::Mutex::new(()),
        }
    }

    pub fn client(&self) -> &kube::Client {
        &self.client
    }

    /// Resolves a kind through discovery (cached once found; a kind not
    /// found is asked again next time, so CRDs created later are picked up).
    pub async fn resolve(&self, gvk: &Gvk) -> Result<Resolved, ResolveError> {
        let key = (gvk.group.clone(), gvk.version.clone(), gvk.kind.clone());
        if let Some(found) = self.resolved.lock().expect("resolver lock").get(&key) {
            return Ok(found.clone());
        }
        let (resource, capabilities) = kube::discovery::pinned_kind(
            &self.client,
            &GroupVersionKind::gvk(&gvk.group, &gvk.version, &gvk.kind),
        )
        .await
        .map_err(|source| ResolveError::Unknown {
            kind: display_kind(gvk),
            source,
        })?;
        let resolved = Resolved {
            resource,
            namespaced: capabilities.scope == Scope::Namespaced,
        };
        self.resolved
            .lock()
            .expect("resolver lock")
            .insert(key, resolved.clone());
        Ok(resolved)
    }

    /// The informer for a kind (and label selector), started if no one
    /// holds it yet.
    pub async fn informer(
        &self,
        gvk: &Gvk,
        label_selector: Option<&str>,
    ) -> Result<Arc<Informer>, ResolveError> {
        let key = InformerKey::new(gvk, label_selector);
        if let Some(informer) = self.running(&key) {
            return Ok(informer);
        }
        let _starting = self.starting.lock().await;
        if let Some(informer) = self.running(&key) {
            return Ok(informer);
        }
        let resolved = self.resolve(gvk).await?;
        let informer = Arc::new(start(
            self.client.clone(),
            gvk.clone(),
            resolved,
            label_selector.map(str::to_string),
        ));
        let mut informers = self.informers.lock().expect("informers lock");
        informers.retain(|_, weak| weak.strong_count() > 0);
        informers.insert(key, Arc::downgrade(&informer));
        Ok(informer)
    }

    /// An object from a running informer of its kind (none is started).
    pub fn cached(&self, kind: &Gvk, namespace: Option<&str>, name: &str) -> Option<Arc<Cached>> {
        self.running(&InformerKey::new(kind, None))?
            .get(namespace, name)
    }

    fn running(&self, key: &InformerKey) -> Option<Arc<Informer>> {
        self.informers
            .lock()
            .expect("informers lock")
            .get(key)
            .and_then(Weak::upgrade)
    }
}

const CHANGES_CAPACITY: usize = 16 << 10;

/// Objects per page of a (re)list. Each page is decoded whole before its
/// objects are cached, and the allocator keeps the memory that decoding
/// took: with client-go's 500 per page, a synced cache of 10k 1 KB
/// ConfigMaps costs about 1.5 times their JSON in resident memory, with
/// 100 about 1.1 times (`cargo bench --bench pipeline`), for a few more
/// list requests.
const LIST_PAGE: u32 = 100;

fn start(
    client: kube::Client,
    gvk: Gvk,
    resolved: Resolved,
    label_selector: Option<String>,
) -> Informer {
    let objects = Arc::new(RwLock::new(Objects::default()));
    let (changes, _) = broadcast::channel(CHANGES_CAPACITY);
    let (ready_tx, ready) = watch::channel(false);
    let api: Api<DynamicObject> = Api::all_with(client, &resolved.resource);
    let mut config = watcher::Config::default().page_size(LIST_PAGE);
    if let Some(selector) = &label_selector {
        config = config.labels(selector);
    }
    let task = tokio::spawn(run_watch(
        api,
        config,
        resolved.resource.clone(),
        display_kind(&gvk),
        objects.clone(),
        changes.clone(),
        ready_tx,
    ));
    tracing::info!(kind = %display_kind(&gvk), label_selector, "informer started");
    Informer {
        gvk,
        resolved,
        label_selector,
        objects,
        changes,
        ready,
        task,
    }
}

/// Lists and watches until aborted. The watcher relists on 410 Gone and
/// resumes dropped watches; failures are retried with [`WatchBackoff`].
async fn run_watch(
    api: Api<DynamicObject>,
    config: watcher::Config,
    resource: ApiResource,
    kind: String,
    objects: Arc<RwLock<Objects>>,
    changes: broadcast::Sender<Change>,
    ready: watch::Sender<bool>,
) {
    let stream = watcher(api, config).backoff(WatchBackoff {
        next: WATCH_RETRY_MIN,
    });
    let mut stream = std::pin::pin!(stream);
    let mut writer = CacheWriter::new(objects);
    let mut failures = 0u32;
    while let Some(event) = stream.next().await {
        let event = match event {
            Ok(event) => {
                if failures > 0 {
                    tracing::info!(%kind, failures, "watch resumed");
                }
                failures = 0;
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
        let cache = |object| Arc::new(Cached::from_object(object, &resource));
        let event = match event {
            watcher::Event::Apply(o) => watcher::Event::Apply(cache(o)),
            watcher::Event::Delete(o) => watcher::Event::Delete(cache(o)),
            watcher::Event::Init => watcher::Event::Init,
            watcher::Event::InitApply(o) => watcher::Event::InitApply(cache(o)),
            watcher::Event::InitDone => watcher::Event::InitDone,
        };
        for change in writer.apply(event) {
            let _ = changes.send(change);
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
    use crate::cached::tests::config_maps;
    use serde_json::json;

    fn cm(name: &str, rv: &str) -> Arc<Cached> {
        let object = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "default", "resourceVersion": rv},
        });
        Arc::new(Cached::from_object(
            serde_json::from_value(object).expect("a ConfigMap"),
            &config_maps(),
        ))
    }

    /// `+name@rv`, `~name@rv`, `-name@rv` for Added, Updated, Deleted.
    fn names(changes: &[Change]) -> Vec<String> {
        changes
            .iter()
            .map(|c| match c {
                Change::Added(o) => format!("+{}@{}", o.name(), o.resource_version()),
                Change::Updated(o) => format!("~{}@{}", o.name(), o.resource_version()),
                Change::Deleted(o) => format!("-{}@{}", o.name(), o.resource_version()),
            })
            .collect()
    }

    fn list(writer: &mut CacheWriter, objects: &[Arc<Cached>]) -> Vec<String> {
        assert!(writer.apply(watcher::Event::Init).is_empty());
        for object in objects {
            let changes = writer.apply(watcher::Event::InitApply(object.clone()));
            assert!(changes.is_empty(), "a list changes nothing before it ends");
        }
        names(&writer.apply(watcher::Event::InitDone))
    }

    #[test]
    fn the_first_list_adds_everything_and_syncs() {
        let objects = Arc::new(RwLock::new(Objects::default()));
        let mut writer = CacheWriter::new(objects.clone());
        assert!(!writer.is_synced());
        assert_eq!(
            list(&mut writer, &[cm("a", "1"), cm("b", "2")]),
            ["+a@1", "+b@2"]
        );
        assert!(writer.is_synced());
        assert_eq!(objects.read().unwrap().len(), 2);
    }

    #[test]
    fn watch_events_say_added_updated_or_deleted_against_the_cache() {
        let objects = Arc::new(RwLock::new(Objects::default()));
        let mut writer = CacheWriter::new(objects.clone());
        list(&mut writer, &[cm("a", "1")]);
        let mut apply = |o| names(&writer.apply(watcher::Event::Apply(o)));
        assert_eq!(apply(cm("b", "2")), ["+b@2"], "created after the list");
        assert_eq!(apply(cm("a", "3")), ["~a@3"]);
        assert_eq!(apply(cm("a", "3")), Vec::<String>::new(), "a replay");
        assert_eq!(
            names(&writer.apply(watcher::Event::Delete(cm("b", "4")))),
            ["-b@4"]
        );
        assert_eq!(
            names(&writer.apply(watcher::Event::Delete(cm("never-seen", "5")))),
            Vec::<String>::new(),
            "nothing held, nothing deleted"
        );
        let held: Vec<String> = objects
            .read()
            .unwrap()
            .iter()
            .map(|o| format!("{}@{}", o.name(), o.resource_version()))
            .collect();
        assert_eq!(held, ["a@3"]);
    }

    #[test]
    fn a_relist_reports_only_what_changed_while_the_watch_was_down() {
        let objects = Arc::new(RwLock::new(Objects::default()));
        let mut writer = CacheWriter::new(objects.clone());
        list(
            &mut writer,
            &[cm("same", "1"), cm("edited", "2"), cm("removed", "3")],
        );
        // The watch failed; meanwhile one object changed, one went, one came.
        assert_eq!(
            list(
                &mut writer,
                &[cm("edited", "7"), cm("new", "8"), cm("same", "1")]
            ),
            ["-removed@3", "~edited@7", "+new@8"]
        );
        assert_eq!(objects.read().unwrap().len(), 3);
        // The same list again changes nothing.
        assert!(
            list(
                &mut writer,
                &[cm("edited", "7"), cm("new", "8"), cm("same", "1")]
            )
            .is_empty()
        );
    }

    #[test]
    fn watch_retries_stay_short_and_start_over_after_a_success() {
        use kube::runtime::utils::Backoff as _;
        let mut backoff = WatchBackoff {
            next: WATCH_RETRY_MIN,
        };
        let delays: Vec<Duration> = backoff.by_ref().take(10).collect();
        assert!(delays[0] <= WATCH_RETRY_MIN && delays[0] >= WATCH_RETRY_MIN / 2);
        assert!(delays.iter().all(|d| *d <= WATCH_RETRY_MAX), "{delays:?}");
        assert!(delays[9] >= WATCH_RETRY_MAX / 2, "{delays:?}");
        backoff.reset();
        assert!(backoff.next().expect("a delay") <= WATCH_RETRY_MIN);
    }
}
