//! A watched directory of `*.wasm` files: created, replaced (also by
//! atomic rename, as editors and `cp` do) and deleted, debounced, reported
//! as [`SourceEvent`]s.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use notify::Watcher as _;
use tokio::sync::mpsc;

use super::{DEBOUNCE, Origin, SourceEvent};

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
                let digest = crate::runtime::digest(&bytes);
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
                        origin: Origin::File(path.clone()),
                        bytes: bytes.clone(),
                        rollout: super::Rollout::Serve,
                        marks: super::Marks::default(),
                    });
                }
            }
            for path in known.keys() {
                if !now.contains_key(path) {
                    let _ = events.send(SourceEvent::Remove {
                        origin: Origin::File(path.clone()),
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
