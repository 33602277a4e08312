//! What the operator's configuration says of one module's controller: its
//! concurrency, whether its reconciles are recorded, whether its objects
//! are sharded.

use std::sync::Arc;

use super::supervisor::Supervisor;
use crate::controller::ControllerConfig;
use crate::replay::Recording;

impl Supervisor {
    /// The controller settings of `name`: the host's, with the module's
    /// concurrency if the operator sets one.
    pub(super) fn controller_config(&self, name: &str) -> ControllerConfig {
        let mut config = self.controller.clone();
        if let Some(concurrency) = self.config.modules.get(name).and_then(|m| m.concurrency) {
            config.concurrency = Some(concurrency.max(1));
        }
        config
    }

    /// Where `name`'s reconciles are recorded: as the operator asks, as a
    /// marked version asks (`marked`: how many), or (a promotion, `moved`)
    /// where the previous source's were.
    pub(super) fn recording(
        &self,
        name: &str,
        marked: Option<usize>,
        moved: bool,
    ) -> Option<Arc<Recording>> {
        let record = self
            .config
            .modules
            .get(name)
            .and_then(|m| m.record.clone())
            .or_else(|| {
                marked.map(|last| crate::config::RecordConfig {
                    last: Some(last),
                    file: None,
                })
            });
        let recording = record.and_then(|record| {
            self.recordings.of(name, || {
                let last = record.last.unwrap_or(crate::config::DEFAULT_RECORDED);
                Recording::new(last, record.file.as_deref())
                    .inspect_err(|error| {
                        tracing::error!(module = %name, error = %error, "cannot open the recording file: reconciles are not recorded");
                    })
                    .ok()
            })
        });
        recording.or_else(|| moved.then(|| self.recordings.existing(name)).flatten())
    }

    /// How the operator spreads `module`'s objects over the replicas, if
    /// it does.
    pub(super) fn sharding_of(&self, module: &str) -> Option<crate::config::ShardBy> {
        self.config
            .modules
            .get(module)
            .and_then(|m| m.sharding.as_ref())
            .map(|s| s.by)
    }
}
