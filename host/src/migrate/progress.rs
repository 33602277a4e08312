//! A migration's progress, kept in a Lease of its own
//! (`<lease prefix>-migrate-<crd>`) so that the next leader resumes where
//! the last one stopped, and `rekon migrate status` can show it.

use std::collections::BTreeMap;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, ListParams, Patch, PatchParams};

/// The label on every progress Lease: the CRD it is about.
pub const CRD_LABEL: &str = "rekon.dev/migration";
const STORAGE: &str = "rekon.dev/migration-storage";
const STATE: &str = "rekon.dev/migration-state";
const CONTINUE: &str = "rekon.dev/migration-continue";
const MIGRATED: &str = "rekon.dev/migration-migrated";
const TOTAL: &str = "rekon.dev/migration-total";
const MESSAGE: &str = "rekon.dev/migration-message";
/// The field manager of the host's migration writes.
pub const FIELD_MANAGER: &str = "rekon-migrate";

/// Where a migration stands.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// The CRD migrated.
    pub crd: String,
    /// The storage version objects are migrated to.
    pub storage: String,
    /// `checking`, `migrating`, `done`, `refused` (a conversion that loses
    /// fields) or `failed` (stopped on an object; resumed on the next try).
    pub state: String,
    /// Where the next page starts ("" from the start).
    pub continue_token: String,
    /// Objects written back so far.
    pub migrated: u64,
    /// Objects the resource held when the last page was read.
    pub total: u64,
    /// Why it was refused or stopped.
    pub message: String,
}

impl Progress {
    /// Progress from a Lease's annotations.
    fn from_lease(lease: &Lease) -> Option<Progress> {
        let labels = lease.metadata.labels.as_ref()?;
        let annotations = lease.metadata.annotations.as_ref()?;
        let text = |key: &str| annotations.get(key).cloned().unwrap_or_default();
        let number = |key: &str| text(key).parse().unwrap_or(0);
        Some(Progress {
            crd: labels.get(CRD_LABEL)?.clone(),
            storage: text(STORAGE),
            state: text(STATE),
            continue_token: text(CONTINUE),
            migrated: number(MIGRATED),
            total: number(TOTAL),
            message: text(MESSAGE),
        })
    }
}

/// The progress Leases in one namespace.
pub struct Book {
    api: Api<Lease>,
    prefix: String,
}

impl Book {
    /// Progress Leases named `<prefix>-migrate-<crd>` in `namespace`.
    pub fn new(client: kube::Client, namespace: &str, prefix: &str) -> Book {
        Book {
            api: Api::namespaced(client, namespace),
            prefix: prefix.to_string(),
        }
    }

    fn name(&self, crd: &str) -> String {
        crate::ha::leases::lease_name(&self.prefix, "migrate", crd)
    }

    /// The progress recorded for `crd`, if any.
    pub async fn load(&self, crd: &str) -> Result<Option<Progress>, kube::Error> {
        Ok(self
            .api
            .get_opt(&self.name(crd))
            .await?
            .as_ref()
            .and_then(Progress::from_lease))
    }

    /// Every migration recorded.
    pub async fn all(&self) -> Result<Vec<Progress>, kube::Error> {
        let listed = self
            .api
            .list(&ListParams::default().labels(CRD_LABEL))
            .await?;
        Ok(listed
            .items
            .iter()
            .filter_map(Progress::from_lease)
            .collect())
    }

    /// Records `progress` (server-side apply: the Lease is created the
    /// first time).
    pub async fn save(&self, progress: &Progress) -> Result<(), kube::Error> {
        let mut labels = crate::ha::leader::managed_by();
        labels.insert(CRD_LABEL.to_string(), progress.crd.clone());
        let annotations = BTreeMap::from([
            (STORAGE.to_string(), progress.storage.clone()),
            (STATE.to_string(), progress.state.clone()),
            (CONTINUE.to_string(), progress.continue_token.clone()),
            (MIGRATED.to_string(), progress.migrated.to_string()),
            (TOTAL.to_string(), progress.total.to_string()),
            (MESSAGE.to_string(), progress.message.clone()),
        ]);
        let name = self.name(&progress.crd);
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                labels: Some(labels),
                annotations: Some(annotations),
                ..ObjectMeta::default()
            },
            spec: None,
        };
        let mut body = serde_json::to_value(&lease).unwrap_or_default();
        body["apiVersion"] = "coordination.k8s.io/v1".into();
        body["kind"] = "Lease".into();
        let params = PatchParams::apply(FIELD_MANAGER).force();
        self.api.patch(&name, &params, &Patch::Apply(body)).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_reads_back_from_the_lease_annotations() {
        let mut lease = Lease::default();
        assert_eq!(Progress::from_lease(&lease), None);
        lease.metadata.labels = Some(BTreeMap::from([(CRD_LABEL.into(), "apps.demo".into())]));
        lease.metadata.annotations = Some(BTreeMap::from([
            (STORAGE.into(), "v2".into()),
            (STATE.into(), "migrating".into()),
            (CONTINUE.into(), "abc".into()),
            (MIGRATED.into(), "120".into()),
            (TOTAL.into(), "2000".into()),
        ]));
        let progress = Progress::from_lease(&lease).unwrap();
        assert_eq!(progress.crd, "apps.demo");
        assert_eq!(progress.continue_token, "abc");
        assert_eq!((progress.migrated, progress.total), (120, 2000));
        assert_eq!(progress.message, "");
    }
}
