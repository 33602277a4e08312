//! Module sources: where module versions come from. A source only produces
//! bytes under an origin name; the host validates and loads them (see
//! [`crate::host`]), so a controller only ever sees validated versions.
//!
//! [`watch_dir`] watches a directory of `*.wasm` files with notify: files
//! created, replaced (also by atomic rename, as editors and `cp` do) and
//! deleted, debounced, reported as [`SourceEvent`]s.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use notify::Watcher as _;
use tokio::sync::mpsc;

/// How long a directory must be quiet before it is rescanned.
pub const DEBOUNCE: Duration = Duration::from_millis(50);

/// How long module ConfigMaps must be quiet before they are read: the
/// parts of one `kubectl apply` arrive within milliseconds of each other.
pub const CONFIGMAP_QUIET: Duration = Duration::from_millis(100);

/// A change of a module source.
#[derive(Clone, Debug)]
pub enum SourceEvent {
    /// A module version appeared or changed at `origin`.
    Upsert {
        /// Where it comes from (a path, `configmap:ns/name`).
        origin: String,
        /// Its bytes.
        bytes: Arc<Vec<u8>>,
    },
    /// The module at `origin` is gone.
    Remove {
        /// Where it came from.
        origin: String,
    },
    /// What `origin` holds is not a module (a missing or mismatched part,
    /// a digest mismatch): reported, and the last good version keeps serving.
    Invalid {
        /// Where it comes from.
        origin: String,
        /// Why, as a bounded metric label.
        reason: &'static str,
        /// Why, for people.
        message: String,
    },
}

/// The origin name of a module ConfigMap.
pub fn configmap_origin(namespace: &str, name: &str) -> String {
    format!("configmap:{namespace}/{name}")
}

/// The namespace and name of a ConfigMap origin.
pub fn parse_configmap_origin(origin: &str) -> Option<(&str, &str)> {
    origin.strip_prefix("configmap:")?.split_once('/')
}

/// Watches module ConfigMaps (labelled [`crate::pack::MODULE_LABEL`]) through
/// the shared informers, in `namespaces` (all when empty): sends an `Upsert`
/// for every complete module, an `Invalid` for a broken one, a `Remove` when
/// a module's ConfigMap goes. Changes are evaluated once the ConfigMaps
/// have been quiet for [`CONFIGMAP_QUIET`], so the parts of one `kubectl apply`
/// arrive together.
pub(crate) async fn watch_configmaps(
    informers: Arc<crate::informer::Informers>,
    namespaces: Vec<String>,
    events: mpsc::UnboundedSender<SourceEvent>,
) {
    let kind = crate::bindings::Gvk {
        group: String::new(),
        version: "v1".into(),
        kind: "ConfigMap".into(),
    };
    let informer = loop {
        match informers
            .informer(&kind, Some(crate::pack::MODULE_LABEL))
            .await
        {
            Ok(informer) => break informer,
            Err(error) => {
                tracing::error!(error = %error, "cannot watch module ConfigMaps; retrying");
                tokio::time::sleep(Duration::from_secs(2)).await;
            }
        }
    };
    let mut changes = informer.subscribe();
    informer.wait_ready().await;
    // origin -> the digest last sent (or the error last reported)
    let mut known: BTreeMap<String, String> = BTreeMap::new();
    loop {
        let configmaps: Vec<serde_json::Value> = informer
            .list(None)
            .iter()
            .filter(|c| {
                namespaces.is_empty()
                    || c.namespace()
                        .is_some_and(|ns| namespaces.iter().any(|n| n == ns))
            })
            .filter_map(|c| serde_json::from_str(&c.json).ok())
            .collect();
        let mut seen = BTreeMap::new();
        for manifest in configmaps.iter().filter(|c| crate::pack::is_manifest(c)) {
            let origin = configmap_origin(
                manifest["metadata"]["namespace"]
                    .as_str()
                    .unwrap_or_default(),
                manifest["metadata"]["name"].as_str().unwrap_or_default(),
            );
            let (state, event) = match crate::pack::assemble(manifest, &configmaps) {
                Ok(bytes) => {
                    let digest = crate::module::digest(&bytes);
                    let event = SourceEvent::Upsert {
                        origin: origin.clone(),
                        bytes: Arc::new(bytes),
                    };
                    (digest, event)
                }
                Err(error) => {
                    let message = error.to_string();
                    let event = SourceEvent::Invalid {
                        origin: origin.clone(),
                        reason: error.metric_label(),
                        message: message.clone(),
                    };
                    (format!("error: {message}"), event)
                }
            };
            if known.get(&origin) != Some(&state) {
                let _ = events.send(event);
            }
            seen.insert(origin, state);
        }
        for origin in known.keys() {
            if !seen.contains_key(origin) {
                let _ = events.send(SourceEvent::Remove {
                    origin: origin.clone(),
                });
            }
        }
        known = seen;
        // Wait for a change (a lagging receiver missed some: rescan too),
        // then for quiet.
        if let Err(tokio::sync::broadcast::error::RecvError::Closed) = changes.recv().await {
            return;
        }
        loop {
            match tokio::time::timeout(CONFIGMAP_QUIET, changes.recv()).await {
                Ok(Ok(_)) | Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => {
                    continue;
                }
                Ok(Err(tokio::sync::broadcast::error::RecvError::Closed)) => return,
                Err(_) => break,
            }
        }
    }
}

/// Why a source could not start.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The directory cannot be watched.
    #[error("cannot watch the module directory {dir}")]
    Watch {
        /// The directory.
        dir: String,
        /// Why.
        #[source]
        source: notify::Error,
    },
}

impl SourceError {
    /// A short, bounded label for metrics.
    pub fn metric_label(&self) -> &'static str {
        match self {
            SourceError::Watch { .. } => "watch",
        }
    }
}

/// A directory being watched; dropping it stops the watch.
pub struct DirWatcher {
    _watcher: notify::RecommendedWatcher,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for DirWatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirWatcher").finish_non_exhaustive()
    }
}

impl Drop for DirWatcher {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The `*.wasm` files of a directory and their contents' digests.
fn scan(dir: &Path) -> BTreeMap<PathBuf, (String, Arc<Vec<u8>>)> {
    let mut found = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "wasm") || !path.is_file() {
            continue;
        }
        match std::fs::read(&path) {
            Ok(bytes) => {
                let digest = crate::module::digest(&bytes);
                found.insert(path, (digest, Arc::new(bytes)));
            }
            Err(error) => {
                tracing::warn!(path = %path.display(), error = %error, "cannot read a module file")
            }
        }
    }
    found
}

/// Watches `dir`: sends an `Upsert` for every module file now, then one per
/// change (by content: touching a file without changing it sends nothing),
/// and a `Remove` when a file goes.
pub fn watch_dir(
    dir: PathBuf,
    events: mpsc::UnboundedSender<SourceEvent>,
) -> Result<DirWatcher, SourceError> {
    let (dirty_tx, mut dirty) = mpsc::unbounded_channel::<()>();
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        if event.is_ok() {
            let _ = dirty_tx.send(());
        }
    })
    .map_err(|source| SourceError::Watch {
        dir: dir.display().to_string(),
        source,
    })?;
    watcher
        .watch(&dir, notify::RecursiveMode::NonRecursive)
        .map_err(|source| SourceError::Watch {
            dir: dir.display().to_string(),
            source,
        })?;
    let task = tokio::spawn(async move {
        let mut known: BTreeMap<PathBuf, String> = BTreeMap::new();
        loop {
            let now = scan(&dir);
            for (path, (digest, bytes)) in &now {
                if known.get(path) != Some(digest) {
                    let _ = events.send(SourceEvent::Upsert {
                        origin: path.display().to_string(),
                        bytes: bytes.clone(),
                    });
                }
            }
            for path in known.keys() {
                if !now.contains_key(path) {
                    let _ = events.send(SourceEvent::Remove {
                        origin: path.display().to_string(),
                    });
                }
            }
            known = now.into_iter().map(|(p, (d, _))| (p, d)).collect();
            // Wait for a change, then for the directory to be quiet.
            if dirty.recv().await.is_none() {
                return;
            }
            loop {
                match tokio::time::timeout(DEBOUNCE, dirty.recv()).await {
                    Ok(Some(())) => continue,
                    Ok(None) => return,
                    Err(_) => break,
                }
            }
        }
    });
    Ok(DirWatcher {
        _watcher: watcher,
        task,
    })
}
