//! The engine's compile cache on disk: compiled code and module
//! descriptions, keyed by the bytes' digest and the engine's
//! compatibility hash, written atomically.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use sha2::{Digest, Sha256};
use wasmtime::component::Component;

use super::engine::Engine;
use super::world::Described;

impl Engine {
    /// The component of `digest` from the compile cache, if it is there
    /// and usable.
    pub(super) fn cached(&self, digest: &str) -> Option<Component> {
        let path = self.cache_path(digest)?;
        if !path.exists() {
            return None;
        }
        // SAFETY: the file was written by `Component::serialize` of an
        // engine with the same compatibility hash (it is in the file
        // name), into a directory owned by this host, and is only ever
        // replaced by an atomic rename, never modified in place, so the
        // mapping stays valid. wasmtime re-checks the header and refuses
        // files from other engine configurations.
        #[allow(unsafe_code)]
        let loaded = unsafe { Component::deserialize_file(&self.shared.engine, &path) };
        match loaded {
            Ok(component) => Some(component),
            Err(error) => {
                tracing::warn!(
                    path = %path.display(),
                    error = %format!("{error:#}"),
                    "compile cache entry unusable, recompiling"
                );
                None
            }
        }
    }

    /// Where the description (manifest and webhooks) of a module version
    /// is kept: beside its code, keyed also by what decides whether it
    /// describes at all (the instance limits and the deadline) and by the
    /// host's version (which reads older contracts' manifests).
    fn description_path(&self, digest: &str) -> Option<PathBuf> {
        let dir = self.shared.config.cache_dir.as_ref()?;
        let config = &self.shared.config;
        let mut key = Sha256::new();
        key.update(digest.as_bytes());
        key.update(self.shared.compat.as_bytes());
        key.update(env!("CARGO_PKG_VERSION").as_bytes());
        key.update(config.max_memory_bytes.to_le_bytes());
        key.update(config.max_wasm_stack.to_le_bytes());
        key.update(config.max_reconcile_time.as_nanos().to_le_bytes());
        Some(dir.join(format!("{}.described.json", hex::encode(key.finalize()))))
    }

    /// The description of a module version this engine described before
    /// (its manifest and webhooks are a function of its bytes), if kept.
    pub(crate) fn cached_description(&self, digest: &str) -> Option<Described> {
        let path = self.description_path(digest)?;
        let text = std::fs::read(&path).ok()?;
        match serde_json::from_slice(&text) {
            Ok(described) => Some(described),
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "cached description unusable, asking the module");
                None
            }
        }
    }

    /// Keeps a module version's description for its next load; a failed
    /// write is logged, never fatal.
    pub(crate) fn keep_description(&self, digest: &str, described: &Described) {
        let Some(path) = self.description_path(digest) else {
            return;
        };
        let bytes = serde_json::to_vec(described).expect("a description serialises");
        if let Err(error) = write_atomically(&path, &bytes) {
            tracing::warn!(path = %path.display(), %error, "cannot keep the module's description");
        }
    }

    /// The hex digest identifying this engine's compiled-code compatibility
    /// (wasmtime version and every setting that changes generated code).
    pub fn compatibility_digest(&self) -> &str {
        &self.shared.compat
    }

    /// The cache file for a component with the given sha256 digest (hex).
    pub fn cache_path(&self, digest: &str) -> Option<PathBuf> {
        let dir = self.shared.config.cache_dir.as_ref()?;
        let mut key = Sha256::new();
        key.update(digest.as_bytes());
        key.update(self.shared.compat.as_bytes());
        Some(dir.join(format!("{}.cwasm", hex::encode(key.finalize()))))
    }
}

pub(super) fn write_cache(path: &Path, component: &Component) -> std::io::Result<()> {
    let bytes = component
        .serialize()
        .map_err(|e| std::io::Error::other(format!("{e:#}")))?;
    write_atomically(path, &bytes)
}

/// Writes a cache file under a temporary name and renames it into place,
/// so a reader sees the whole file or none.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .expect("cache paths are inside the cache directory");
    std::fs::create_dir_all(dir)?;
    // Unique per writer: two loads of one version may write at once.
    static WRITES: AtomicUsize = AtomicUsize::new(0);
    let tmp = dir.join(format!(
        ".{}.{}.{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("entry"),
        std::process::id(),
        WRITES.fetch_add(1, Ordering::Relaxed)
    ));
    // Written a page at a time: the page cache then holds the file in
    // single pages, and a module mapped from it (`deserialize_file`) has
    // only the pages it touches resident, with the kernel's fault-around
    // (64 KiB) at most. Written in one call, the file lands in large
    // folios, and the first touch of a mapping maps a whole folio: every
    // loaded module then had nearly all of its code resident.
    let mut file = std::fs::File::create(&tmp)?;
    for page in bytes.chunks(4096) {
        std::io::Write::write_all(&mut file, page)?;
    }
    drop(file);
    std::fs::rename(&tmp, path)
}
