//! Objects written back: page by page from where the progress says, a few
//! writes in flight within the configured rate, each a no-op patch with
//! its `resourceVersion` as the precondition, so the API server stores it
//! again in the storage version.

use std::time::Duration;

use futures::StreamExt as _;
use futures::stream::FuturesOrdered;
use kube::api::{DynamicObject, ListParams, Patch, PatchParams};
use serde_json::{Value, json};

use super::check::describe;
use super::plan::Plan;
use super::progress::{Book, FIELD_MANAGER, Progress};
use super::run::{CONFLICT_RETRIES, Migrator};

/// Objects written back at once (within the rate): each waits on the API
/// server and the conversion webhook more than on anything here.
const WRITES_IN_FLIGHT: usize = 4;

impl Migrator {
    /// Writes every object back, page by page from where the progress
    /// says, saving the progress after each page.
    pub(super) async fn write_back(
        &self,
        plan: &Plan,
        book: &Book,
        progress: &mut Progress,
    ) -> Result<(), String> {
        let api = self.api(plan, None);
        let gap = Duration::from_secs_f64(1.0 / self.config.writes_per_second.max(0.1));
        let mut next_write = tokio::time::Instant::now();
        loop {
            if self.leadership.as_ref().is_some_and(|l| !l.is_leading()) {
                return Err("this replica stopped leading; the next leader resumes".into());
            }
            let mut params = ListParams::default().limit(self.config.page_size);
            if !progress.continue_token.is_empty() {
                params = params.continue_token(&progress.continue_token);
            }
            let page = match api.list(&params).await {
                Ok(page) => page,
                // The token expired (compaction): from the start again;
                // objects written already are written again, harmlessly.
                Err(kube::Error::Api(status)) if status.code == 410 => {
                    tracing::info!(crd = %plan.crd, "migration: the list expired; starting the pages again");
                    progress.continue_token.clear();
                    progress.migrated = 0;
                    continue;
                }
                Err(e) => return Err(format!("cannot list {}: {e}", plan.crd)),
            };
            let mut writes = FuturesOrdered::new();
            let mut objects = page.items.iter();
            loop {
                while writes.len() < WRITES_IN_FLIGHT {
                    let Some(object) = objects.next() else { break };
                    let slot = next_write.max(tokio::time::Instant::now());
                    next_write = slot + gap;
                    writes.push_back(self.write_one(slot, plan, object));
                }
                let Some(written) = writes.next().await else {
                    break;
                };
                written?;
                progress.migrated += 1;
            }
            let remaining = page
                .metadata
                .remaining_item_count
                .and_then(|r| u64::try_from(r).ok())
                .unwrap_or(0);
            progress.total = progress.migrated + remaining;
            match page.metadata.continue_ {
                Some(next) if !next.is_empty() => {
                    progress.continue_token = next;
                    self.save(book, progress).await;
                }
                _ => {
                    progress.continue_token.clear();
                    progress.total = progress.migrated;
                    return Ok(());
                }
            }
        }
    }

    /// Writes one object back unchanged once `slot` comes, its
    /// resourceVersion the precondition: the API server stores it again in
    /// the storage version. A conflict (someone wrote it meanwhile) is read
    /// again and retried; an object gone is skipped.
    async fn write_one(
        &self,
        slot: tokio::time::Instant,
        plan: &Plan,
        object: &DynamicObject,
    ) -> Result<(), String> {
        tokio::time::sleep_until(slot).await;
        let name = object.metadata.name.clone().unwrap_or_default();
        let api = self.api(plan, object.metadata.namespace.as_deref());
        let mut version = object.metadata.resource_version.clone().unwrap_or_default();
        let params = PatchParams {
            field_manager: Some(FIELD_MANAGER.to_string()),
            ..PatchParams::default()
        };
        for _ in 0..=CONFLICT_RETRIES {
            let unchanged = json!({"metadata": {"resourceVersion": version}});
            match api.patch(&name, &params, &Patch::Merge(&unchanged)).await {
                Ok(_) => return Ok(()),
                Err(kube::Error::Api(status)) if status.code == 404 => return Ok(()),
                Err(kube::Error::Api(status)) if status.code == 409 => {
                    match api.get_opt(&name).await {
                        Ok(Some(fresh)) => {
                            version = fresh.metadata.resource_version.unwrap_or_default();
                        }
                        Ok(None) => return Ok(()),
                        Err(e) => return Err(format!("{}: {e}", who(object))),
                    }
                }
                Err(e) => return Err(format!("{}: {e}", who(object))),
            }
        }
        Err(format!(
            "{}: still changing after {CONFLICT_RETRIES} retries",
            who(object)
        ))
    }
}

fn who(object: &DynamicObject) -> String {
    describe(&serde_json::to_value(object).unwrap_or(Value::Null))
}
