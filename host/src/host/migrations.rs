//! Each module's CRDs kept at their storage version: where the module
//! leads, a task migrates every CRD the module ships whose
//! `status.storedVersions` lists another version (see [`crate::migrate`]),
//! looks again whenever one of them changes (a CRD applied by other means
//! too: they are watched) and every [`RECHECK`], and stops with the module
//! version.

use std::sync::Arc;
use std::time::Duration;

use crate::cluster::Cluster;
use crate::ha::Leadership;
use crate::migrate::{MigrateConfig, Migrator, ModuleConverter, Outcome};
use crate::runtime::Module;
use crate::telemetry::Metrics;

/// How often the CRDs are looked at again without a change seen.
const RECHECK: Duration = Duration::from_secs(60);
/// How long a refused migration waits before it is checked again (a new
/// module version restarts it at once).
const AFTER_REFUSAL: Duration = Duration::from_secs(300);
/// How long a migration stopped by a failure (a conversion webhook not
/// reachable yet, an API server answering 500) waits before it resumes.
const AFTER_FAILURE: Duration = Duration::from_secs(10);

/// A module version's migration task; stops when dropped.
pub(super) struct Migrations(tokio::task::JoinHandle<()>);

impl Drop for Migrations {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Starts migrating `module`'s CRDs while `leadership` says it leads.
pub(super) fn start(
    client: kube::Client,
    config: MigrateConfig,
    module: Module,
    cluster: Arc<dyn Cluster>,
    leadership: Leadership,
    metrics: Arc<Metrics>,
) -> Migrations {
    Migrations(tokio::spawn(async move {
        let crds: Vec<String> = match module.crds().await {
            Ok(crds) => crds
                .iter()
                .filter_map(|crd| crd["metadata"]["name"].as_str().map(str::to_string))
                .collect(),
            Err(_) => return,
        };
        if crds.is_empty() {
            return;
        }
        let converter = Arc::new(ModuleConverter::new(module.clone(), cluster.clone()));
        let (mut changed, watching) = watch_crds(client.clone(), crds.clone());
        // The watch stops with this task.
        let _watching = Migrations(watching);
        let migrator = Migrator::new(client, config, Some(converter))
            .metrics(metrics)
            .events(cluster)
            .leadership(leadership.clone());
        let mut leading = leadership.subscribe();
        loop {
            let (mut failed, mut refused) = (false, false);
            if leadership.is_leading() {
                for crd in &crds {
                    match migrator.migrate(crd).await {
                        Outcome::Failed(_) => failed = true,
                        Outcome::Refused(_) => refused = true,
                        Outcome::NotDue | Outcome::Done { .. } => {}
                    }
                }
            }
            // A failure resumes soon, even beside a refusal elsewhere.
            let wait = match (failed, refused) {
                (true, _) => AFTER_FAILURE,
                (false, true) => AFTER_REFUSAL,
                (false, false) => RECHECK,
            };
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                Some(()) = changed.recv() => {
                    // A burst of changes is one look.
                    while changed.try_recv().is_ok() {}
                }
                Ok(()) = leading.changed() => {}
            }
        }
    }))
}

/// One `()` whenever a CRD named in `names` changes (watched; a watch that
/// fails is retried by the watcher).
fn watch_crds(
    client: kube::Client,
    names: Vec<String>,
) -> (tokio::sync::mpsc::Receiver<()>, tokio::task::JoinHandle<()>) {
    use futures::StreamExt as _;
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    let task = tokio::spawn(async move {
        let api = crate::webhook::apis::crds(&client);
        let mut events =
            kube::runtime::watcher(api, kube::runtime::watcher::Config::default()).boxed();
        while let Some(event) = events.next().await {
            let ours = match &event {
                Ok(kube::runtime::watcher::Event::Apply(crd))
                | Ok(kube::runtime::watcher::Event::InitApply(crd)) => crd
                    .metadata
                    .name
                    .as_ref()
                    .is_some_and(|n| names.contains(n)),
                _ => false,
            };
            if ours && tx.try_send(()).is_err() && tx.is_closed() {
                return;
            }
        }
    });
    (rx, task)
}
