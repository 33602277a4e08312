//! The replicas serving webhooks, and which modules each serves: every
//! replica keeps a Lease of its own (`<prefix>-webhooks-<identity>`,
//! labelled `rekon.dev/lease-role: webhook-server`) that names the modules
//! it serves in the annotation `rekon.dev/webhook-modules`, renews it, and
//! deletes it when it stops. The replica that leads withdraws a module's
//! webhook configurations only when no live replica names the module, so a
//! rolling update that removes a module, or replicas that briefly differ,
//! never withdraw what another replica still answers for.
//!
//! A Lease counts as live until it has not changed for a whole lease
//! duration as this replica observed it (our clock, never another
//! machine's), as leader election judges expiry.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};

use super::registry::WebhookModules;
use crate::ha::LeaderConfig;
use crate::ha::leases::{duration_of, now, seconds};
use crate::names::MANAGED_BY;

/// The label telling the Leases of webhook servers apart.
pub const ROLE: (&str, &str) = ("rekon.dev/lease-role", "webhook-server");

/// The annotation listing the modules a replica serves webhooks for.
pub const MODULES_ANNOTATION: &str = "rekon.dev/webhook-modules";

/// This replica's membership among the webhook servers.
pub(crate) struct Members {
    api: Api<Lease>,
    /// This replica's Lease.
    name: String,
    identity: String,
    lease_duration: Duration,
    /// Each other Lease's resourceVersion and when we first saw it.
    observed: Mutex<HashMap<String, (String, Instant)>>,
}

impl Members {
    /// The membership of the replica `config` describes (its identity,
    /// namespace, the prefix of Lease names and the lease duration).
    pub fn new(client: kube::Client, config: &LeaderConfig) -> Members {
        let prefix = config
            .name
            .strip_suffix("-leader")
            .unwrap_or(&config.name)
            .to_string();
        Members {
            api: Api::namespaced(client, &config.namespace),
            name: crate::ha::leases::lease_name(&prefix, "webhooks", &config.identity),
            identity: config.identity.clone(),
            lease_duration: config.lease_duration,
            observed: Mutex::default(),
        }
    }

    /// Writes this replica's Lease: now, serving `modules`.
    async fn announce(&self, modules: &[String]) -> Result<(), kube::Error> {
        let lease = Lease {
            metadata: ObjectMeta {
                name: Some(self.name.clone()),
                labels: Some(BTreeMap::from([
                    (ROLE.0.to_string(), ROLE.1.to_string()),
                    (MANAGED_BY.0.to_string(), MANAGED_BY.1.to_string()),
                ])),
                annotations: Some(BTreeMap::from([(
                    MODULES_ANNOTATION.to_string(),
                    modules.join(","),
                )])),
                ..ObjectMeta::default()
            },
            spec: Some(LeaseSpec {
                holder_identity: Some(self.identity.clone()),
                lease_duration_seconds: Some(seconds(self.lease_duration)),
                renew_time: Some(now()),
                ..LeaseSpec::default()
            }),
        };
        self.api
            .patch(
                &self.name,
                &PatchParams::apply(super::objects::FIELD_MANAGER).force(),
                &Patch::Apply(&lease),
            )
            .await?;
        Ok(())
    }

    /// Keeps this replica's Lease up: renewed every third of the lease
    /// duration and whenever the modules served change, until aborted.
    pub async fn run(self: Arc<Self>, modules: WebhookModules) {
        let mut changes = modules.subscribe();
        let period = self.lease_duration / 3;
        loop {
            if let Err(error) = self.announce(&modules.names()).await {
                tracing::warn!(lease = %self.name, error = %error, "cannot renew this replica's webhook-server Lease");
            }
            tokio::select! {
                _ = tokio::time::sleep(period) => {}
                changed = changes.changed() => if changed.is_err() { return },
            }
        }
    }

    /// The modules the other live replicas serve webhooks for.
    pub async fn serving(&self) -> Result<BTreeSet<String>, kube::Error> {
        let leases = self
            .api
            .list(&ListParams::default().labels(&format!("{}={}", ROLE.0, ROLE.1)))
            .await?
            .items;
        let mut observed = self.observed.lock().expect("members lock");
        observed.retain(|name, _| {
            leases
                .iter()
                .any(|l| l.metadata.name.as_ref() == Some(name))
        });
        let mut serving = BTreeSet::new();
        for lease in &leases {
            let Some(name) = &lease.metadata.name else {
                continue;
            };
            if *name == self.name {
                continue;
            }
            let version = lease.metadata.resource_version.clone().unwrap_or_default();
            let since = match observed.get(name) {
                Some((seen, at)) if *seen == version => *at,
                _ => {
                    observed.insert(name.clone(), (version, Instant::now()));
                    Instant::now()
                }
            };
            let duration = duration_of(lease).unwrap_or(self.lease_duration);
            if since.elapsed() >= duration {
                continue;
            }
            let annotation = lease
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(MODULES_ANNOTATION));
            serving.extend(
                annotation
                    .into_iter()
                    .flat_map(|a| a.split(','))
                    .filter(|m| !m.is_empty())
                    .map(str::to_string),
            );
        }
        Ok(serving)
    }

    /// Deletes this replica's Lease: it serves nothing any more.
    pub async fn leave(&self) {
        match self.api.delete(&self.name, &DeleteParams::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(error) => {
                tracing::warn!(lease = %self.name, error = %error, "cannot delete this replica's webhook-server Lease")
            }
        }
    }
}
