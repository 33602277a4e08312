//! One migration, start to end: the CRD read, conversion checked on every
//! object, every object written back unchanged (so the API server stores it
//! in the storage version), then `status.storedVersions` set to the storage
//! version alone. Progress is saved after every page.

use std::sync::Arc;
use std::time::Duration;

use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams};
use serde_json::json;

use super::check::{Converter, round_trip};
use super::plan::Plan;
use super::progress::{Book, FIELD_MANAGER, Progress};
use crate::cluster::Cluster;
use crate::contract::{EventType, Gvk, ObjectRef};
use crate::ha::Leadership;
use crate::telemetry::{Metrics, MigrationLabels};

/// How a migration runs.
#[derive(Clone, Debug)]
pub struct MigrateConfig {
    /// Where the progress Leases are kept.
    pub namespace: String,
    /// Their name prefix (`<prefix>-migrate-<crd>`).
    pub lease_prefix: String,
    /// Most objects written back per second.
    pub writes_per_second: f64,
    /// Objects per page read.
    pub page_size: u32,
}

impl Default for MigrateConfig {
    fn default() -> Self {
        MigrateConfig {
            namespace: "default".into(),
            lease_prefix: "rekon".into(),
            writes_per_second: 50.0,
            page_size: 100,
        }
    }
}

/// What became of a migration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing to do: `storedVersions` lists the storage version alone.
    NotDue,
    /// Every object written back; `storedVersions` is the storage version.
    Done {
        /// Objects written back.
        migrated: u64,
    },
    /// Conversion loses something: nothing was written.
    Refused(String),
    /// Stopped on an object or a request; what was done is kept.
    Failed(String),
}

/// How long a migration waits for the API server to use a new storage
/// version before it stops (and is tried again).
const IN_USE_WAIT: Duration = Duration::from_secs(30);

/// Retries of one object's write after a conflict.
pub(super) const CONFLICT_RETRIES: u32 = 5;

/// Migrates the objects of CRDs to their storage version.
pub struct Migrator {
    pub(super) client: kube::Client,
    pub(super) config: MigrateConfig,
    converter: Option<Arc<dyn Converter>>,
    metrics: Option<Arc<Metrics>>,
    pub(super) leadership: Option<Leadership>,
    events: Option<Arc<dyn Cluster>>,
}

impl Migrator {
    /// A migrator writing with `client`; `converter` checks conversion
    /// round trips of CRDs the module converts (none: not checked).
    pub fn new(
        client: kube::Client,
        config: MigrateConfig,
        converter: Option<Arc<dyn Converter>>,
    ) -> Migrator {
        Migrator {
            client,
            config,
            converter,
            metrics: None,
            leadership: None,
            events: None,
        }
    }

    /// Records Events on the CRD (migration started, done, refused,
    /// failed) through `cluster`.
    #[must_use]
    pub fn events(mut self, cluster: Arc<dyn Cluster>) -> Migrator {
        self.events = Some(cluster);
        self
    }

    async fn announce(&self, crd: &str, event_type: EventType, reason: &str, message: &str) {
        let Some(events) = &self.events else {
            return;
        };
        let regarding = ObjectRef {
            kind: Gvk {
                group: "apiextensions.k8s.io".into(),
                version: "v1".into(),
                kind: "CustomResourceDefinition".into(),
            },
            namespace: None,
            name: crd.to_string(),
        };
        let message: String = message.chars().take(1000).collect();
        let _ = events
            .record_event(&regarding, event_type, reason, &message, "rekon-migrate")
            .await;
    }

    /// Writes only while `leadership` leads: losing it stops the
    /// migration after the page in hand (the next leader resumes).
    #[must_use]
    pub fn leadership(mut self, leadership: Leadership) -> Migrator {
        self.leadership = Some(leadership);
        self
    }

    /// Counts progress and outcomes in `metrics`
    /// (`rekon_migration_objects`, `rekon_migrations_total`).
    #[must_use]
    pub fn metrics(mut self, metrics: Arc<Metrics>) -> Migrator {
        self.metrics = Some(metrics);
        self
    }

    fn count(&self, progress: &Progress) {
        let Some(metrics) = &self.metrics else {
            return;
        };
        for (state, value) in [("migrated", progress.migrated), ("total", progress.total)] {
            let labels = MigrationLabels {
                crd: progress.crd.clone(),
                state: state.into(),
            };
            metrics
                .migration_objects
                .get_or_create(&labels)
                .set(i64::try_from(value).unwrap_or(i64::MAX));
        }
        if matches!(progress.state.as_str(), "done" | "refused" | "failed") {
            let labels = MigrationLabels {
                crd: progress.crd.clone(),
                state: progress.state.clone(),
            };
            metrics.migrations.get_or_create(&labels).inc();
        }
    }

    fn book(&self) -> Book {
        Book::new(
            self.client.clone(),
            &self.config.namespace,
            &self.config.lease_prefix,
        )
    }

    /// Runs the migration of CRD `crd` to its storage version, resuming
    /// what an earlier run (here or on another replica) recorded.
    pub async fn migrate(&self, crd: &str) -> Outcome {
        let plan = match Plan::read(&self.client, crd).await {
            Ok(Some(plan)) => plan,
            // A CRD not installed (yet) has nothing stored.
            Ok(None) => return Outcome::NotDue,
            Err(why) => return Outcome::Failed(why),
        };
        if !plan.due() {
            return Outcome::NotDue;
        }
        let book = self.book();
        let mut progress = match book.load(crd).await {
            Ok(Some(p)) if p.storage == plan.storage && p.state != "refused" => p,
            Ok(_) => Progress {
                crd: crd.to_string(),
                storage: plan.storage.clone(),
                ..Progress::default()
            },
            Err(e) => return Outcome::Failed(format!("cannot read the progress of {crd}: {e}")),
        };
        tracing::info!(crd, storage = %plan.storage, stored = ?plan.stored, migrated = progress.migrated, "migration: objects to write back in the storage version");
        if progress.state.is_empty() || progress.state == "checking" {
            let started = format!(
                "writing back every object in {} (storedVersions {:?})",
                plan.storage, plan.stored
            );
            self.announce(crd, EventType::Normal, "MigrationStarted", &started)
                .await;
            progress.state = "checking".into();
            self.save(&book, &progress).await;
            if let Err(why) = self.check(&plan).await {
                progress.state = "refused".into();
                progress.message = why.clone();
                self.save(&book, &progress).await;
                tracing::error!(
                    crd,
                    why,
                    "migration refused: the conversion does not round-trip; nothing was written"
                );
                return Outcome::Refused(why);
            }
            progress.state = "migrating".into();
            progress.message.clear();
        }
        let written = match self.storage_in_use(&plan).await {
            Ok(()) => self.write_back(&plan, &book, &mut progress).await,
            Err(why) => Err(why),
        };
        if let Err(why) = written {
            progress.state = "failed".into();
            progress.message = why.clone();
            self.save(&book, &progress).await;
            tracing::error!(crd, why, "migration stopped; what was written stays");
            let note = format!("stopped after {} objects: {why}", progress.migrated);
            self.announce(crd, EventType::Warning, "MigrationFailed", &note)
                .await;
            return Outcome::Failed(why);
        }
        if let Err(why) = self.finish(crd, &plan).await {
            progress.state = "failed".into();
            progress.message = why.clone();
            self.save(&book, &progress).await;
            return Outcome::Failed(why);
        }
        progress.state = "done".into();
        progress.continue_token.clear();
        self.save(&book, &progress).await;
        tracing::info!(crd, storage = %plan.storage, migrated = progress.migrated, "migration done: storedVersions is the storage version alone");
        let done = format!(
            "{} objects written back in {}; storedVersions is [{}]",
            progress.migrated, plan.storage, plan.storage
        );
        self.announce(crd, EventType::Normal, "Migrated", &done)
            .await;
        Outcome::Done {
            migrated: progress.migrated,
        }
    }

    pub(super) async fn save(&self, book: &Book, progress: &Progress) {
        self.count(progress);
        if let Err(e) = book.save(progress).await {
            tracing::warn!(crd = %progress.crd, error = %e, "migration: cannot record progress");
        }
    }

    pub(super) fn api(&self, plan: &Plan, namespace: Option<&str>) -> Api<DynamicObject> {
        let resource = plan.resource(&plan.storage);
        match namespace {
            Some(ns) if plan.namespaced => Api::namespaced_with(self.client.clone(), ns, &resource),
            _ => Api::all_with(self.client.clone(), &resource),
        }
    }

    /// Every object, in the storage version, through the module's
    /// conversion to each served version and back.
    async fn check(&self, plan: &Plan) -> Result<(), String> {
        let Some(converter) = self
            .converter
            .as_ref()
            .filter(|c| plan.webhook || c.converts(&plan.group, &plan.kind))
        else {
            return Ok(());
        };
        let api = self.api(plan, None);
        let mut token: Option<String> = None;
        loop {
            let mut params = ListParams::default().limit(self.config.page_size);
            if let Some(token) = &token {
                params = params.continue_token(token);
            }
            let page = api
                .list(&params)
                .await
                .map_err(|e| format!("cannot list {}: {e}", plan.crd))?;
            for object in &page.items {
                let value = serde_json::to_value(object).unwrap_or_default();
                round_trip(
                    converter.as_ref(),
                    &value,
                    &plan.group,
                    &plan.storage,
                    &plan.served,
                )
                .await?;
            }
            match page.metadata.continue_ {
                Some(next) if !next.is_empty() => token = Some(next),
                _ => return Ok(()),
            }
        }
    }

    /// Waits (up to [`IN_USE_WAIT`]) until the API server writes in the
    /// storage version: written back before, an object would be stored
    /// again as it was — or, with a conversion not yet in use, pruned by
    /// the new version's schema.
    async fn storage_in_use(&self, plan: &Plan) -> Result<(), String> {
        let deadline = tokio::time::Instant::now() + IN_USE_WAIT;
        while !plan.in_use(&self.client).await? {
            if tokio::time::Instant::now() >= deadline {
                return Err(format!(
                    "the API server does not write {} in {} yet (its discovery names another storage version)",
                    plan.crd, plan.storage
                ));
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        Ok(())
    }

    /// `status.storedVersions` set to the storage version alone, if the
    /// CRD still stores in the version migrated to.
    async fn finish(&self, crd: &str, migrated: &Plan) -> Result<(), String> {
        let crds = crate::webhook::apis::crds(&self.client);
        for _ in 0..=CONFLICT_RETRIES {
            let now = Plan::read(&self.client, crd)
                .await?
                .ok_or_else(|| format!("the CRD {crd} is gone"))?;
            if now.storage != migrated.storage {
                return Err(format!(
                    "the storage version changed to {} meanwhile; migrating again",
                    now.storage
                ));
            }
            let patch = json!({
                "metadata": {"resourceVersion": now.resource_version},
                "status": {"storedVersions": [now.storage]},
            });
            let params = PatchParams {
                field_manager: Some(FIELD_MANAGER.to_string()),
                ..PatchParams::default()
            };
            match crds.patch_status(crd, &params, &Patch::Merge(&patch)).await {
                Ok(_) => return Ok(()),
                Err(kube::Error::Api(status)) if status.code == 409 => continue,
                Err(e) => return Err(format!("cannot set the storedVersions of {crd}: {e}")),
            }
        }
        Err(format!("the CRD {crd} kept changing"))
    }
}
