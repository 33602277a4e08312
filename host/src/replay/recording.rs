//! A module's reconciles kept while it runs, and each module's recording,
//! kept across its versions.

use std::collections::{BTreeMap, VecDeque};
use std::io::Write as _;
use std::path::Path;
use std::sync::{Arc, Mutex};

use super::trace::Trace;

/// A module's reconciles kept while it runs: the last `last` in memory,
/// and every one appended to a file when one is named.
pub struct Recording {
    last: usize,
    ring: Mutex<VecDeque<Trace>>,
    file: Option<Mutex<std::fs::File>>,
}

impl std::fmt::Debug for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recording")
            .field("last", &self.last)
            .finish_non_exhaustive()
    }
}

impl Recording {
    /// A recording keeping the last `last` traces, appending each to `file`
    /// too when given (created if missing).
    pub fn new(last: usize, file: Option<&Path>) -> std::io::Result<Recording> {
        let file = match file {
            Some(path) => Some(Mutex::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)?,
            )),
            None => None,
        };
        Ok(Recording {
            last,
            ring: Mutex::new(VecDeque::new()),
            file,
        })
    }

    /// Keeps one more trace.
    pub fn push(&self, trace: Trace) {
        if let Some(file) = &self.file {
            let mut file = file.lock().expect("recording file lock");
            if let Err(error) = file.write_all(trace.to_lines().as_bytes()) {
                tracing::warn!(module = %trace.module, error = %error, "cannot append to the recording file");
            }
        }
        if self.last == 0 {
            return;
        }
        let mut ring = self.ring.lock().expect("recording lock");
        if ring.len() == self.last {
            ring.pop_front();
        }
        ring.push_back(trace);
    }

    /// The traces kept in memory, oldest first.
    pub fn traces(&self) -> Vec<Trace> {
        self.ring
            .lock()
            .expect("recording lock")
            .iter()
            .cloned()
            .collect()
    }
}

/// Each module's recording, by module name: a recording follows its
/// module across versions (served at `/recordings/<module>`).
#[derive(Debug, Default)]
pub struct Recordings {
    map: Mutex<BTreeMap<String, Arc<Recording>>>,
}

impl Recordings {
    /// The recording of `module`'s reconciles: the one it has (kept across
    /// its versions), or a new one from `make`.
    pub fn of(
        &self,
        module: &str,
        make: impl FnOnce() -> Option<Recording>,
    ) -> Option<Arc<Recording>> {
        let mut map = self.map.lock().expect("recordings lock");
        if let Some(recording) = map.get(module) {
            return Some(recording.clone());
        }
        let recording = Arc::new(make()?);
        map.insert(module.to_string(), recording.clone());
        Some(recording)
    }

    /// The recording `module` has, if any.
    pub fn existing(&self, module: &str) -> Option<Arc<Recording>> {
        self.map
            .lock()
            .expect("recordings lock")
            .get(module)
            .cloned()
    }

    /// The traces kept of `module`'s reconciles, as JSON lines; `None` when
    /// they are not recorded.
    pub fn lines(&self, module: &str) -> Option<String> {
        let map = self.map.lock().expect("recordings lock");
        let recording = map.get(module)?;
        Some(recording.traces().iter().map(|t| t.to_lines()).collect())
    }
}
