//! What runs of a module: its version, where it came from, and its
//! controller task.

use std::sync::Arc;

use tokio::sync::watch;

use crate::controller::{self, Shared, Start};
use crate::dispatch::Dispatch;
use crate::runtime::Module;
use crate::source::Origin;

/// A controller task and how to stop it.
pub(super) struct Controller {
    name: String,
    pub(super) stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Controller {
    pub(super) fn spawn(dispatch: Dispatch, shared: Shared, start: Start) -> Controller {
        let (stop, stopped) = watch::channel(false);
        let name = dispatch.serving().name().to_string();
        let task = tokio::spawn(controller::run(dispatch, shared, start, stopped));
        Controller { name, stop, task }
    }

    /// Stops taking work and waits for reconciles in flight.
    pub(super) async fn stop(self) {
        self.stop.send_replace(true);
        if let Err(error) = self.task.await {
            tracing::error!(module = %self.name, error = %error, "controller task failed");
        }
    }
}

/// A module version being run, and where it came from.
pub(super) struct Running {
    pub(super) origin: Origin,
    pub(super) module: Module,
    /// None for a module that only serves webhooks.
    pub(super) controller: Option<Controller>,
    /// Its CRDs' storage migrations (stopped with it).
    pub(super) _migrations: Option<super::migrations::Migrations>,
}

/// One module's place: its running version, swapped under its own lock.
pub(super) type Slot = Arc<tokio::sync::Mutex<Option<Running>>>;

/// The labels of `module`'s `rekon_module_info` series.
pub(super) fn info_labels(module: &crate::runtime::Module) -> crate::telemetry::InfoLabels {
    crate::telemetry::InfoLabels {
        module: module.name().to_string(),
        version: module.manifest().version.clone(),
        digest: module.digest().to_string(),
    }
}
