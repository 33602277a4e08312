//! Taking back what an installation of rekon published.

use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, ListParams, Patch, PatchParams};
use serde_json::json;

use super::UninstallError;
use crate::names::MANAGED_BY;
use crate::runtime::Phase;
use crate::webhook::apis::{configurations, crds, delete_quietly};
use crate::webhook::objects::{CONVERTED_BY, Endpoint, configuration_kind, no_conversion_patch};

/// What an uninstall removed.
#[derive(Debug, Default, serde::Serialize)]
pub struct Report {
    /// Webhook configurations deleted (`Kind/name`).
    pub configurations: Vec<String>,
    /// CRDs whose conversion was turned back to `None`.
    pub conversions: Vec<String>,
    /// Leases deleted.
    pub leases: Vec<String>,
}

/// Takes back what an installation of rekon published: every webhook
/// configuration rekon manages that calls `endpoint` (the uninstall
/// webhook's too), the conversion of every CRD that converts through it,
/// and rekon's Leases in `namespace`.
pub struct Uninstall {
    client: kube::Client,
    namespace: String,
    endpoint: Endpoint,
}

impl std::fmt::Debug for Uninstall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Uninstall")
            .field("namespace", &self.namespace)
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl Uninstall {
    /// The clean-up of the installation in `namespace` whose webhooks
    /// are reached at `endpoint`.
    pub fn new(client: kube::Client, namespace: &str, endpoint: Endpoint) -> Self {
        Uninstall {
            client,
            namespace: namespace.to_string(),
            endpoint,
        }
    }

    /// Does it all. Every step runs even when an earlier one failed; the
    /// first failure is returned once all have run.
    pub async fn run(&self) -> Result<Report, UninstallError> {
        let mut report = Report::default();
        let mut failure = None;
        let mut fail = |what: String, source: kube::Error| {
            tracing::warn!(error = %source, "{what}");
            failure.get_or_insert(UninstallError::Api { what, source });
        };
        let managed = ListParams::default().labels(&format!("{}={}", MANAGED_BY.0, MANAGED_BY.1));
        for phase in [Phase::Mutating, Phase::Validating] {
            let kind = configuration_kind(phase);
            let api = configurations(&self.client, phase);
            let listed = match api.list(&managed).await {
                Ok(list) => list.items,
                Err(source) => {
                    fail(format!("cannot list the {kind}s"), source);
                    continue;
                }
            };
            for object in listed {
                let ours = object.data["webhooks"].as_array().is_some_and(|w| {
                    w.iter()
                        .any(|w| self.endpoint.is_target_of(&w["clientConfig"]))
                });
                let Some(name) = object.metadata.name.filter(|_| ours) else {
                    continue;
                };
                match delete_quietly(&api, &name).await {
                    Ok(()) => report.configurations.push(format!("{kind}/{name}")),
                    Err(source) => fail(format!("cannot delete {kind} {name}"), source),
                }
            }
        }
        match crds(&self.client).list(&ListParams::default()).await {
            Ok(list) => {
                for crd in list.items {
                    let conversion = &crd.data["spec"]["conversion"];
                    let name = crd.metadata.name.clone().unwrap_or_default();
                    let ours = conversion["strategy"] == "Webhook"
                        && self
                            .endpoint
                            .is_target_of(&conversion["webhook"]["clientConfig"]);
                    let labelled = crd
                        .metadata
                        .labels
                        .as_ref()
                        .is_some_and(|l| l.contains_key(CONVERTED_BY));
                    if !ours && !labelled {
                        continue;
                    }
                    let patch = if ours {
                        no_conversion_patch()
                    } else {
                        // Converted elsewhere now: only our label goes.
                        json!({"metadata": {"labels": {CONVERTED_BY: null}}})
                    };
                    match crds(&self.client)
                        .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                        .await
                    {
                        Ok(_) if ours => report.conversions.push(name),
                        Ok(_) => {}
                        Err(kube::Error::Api(status)) if status.code == 404 => {}
                        Err(source) => {
                            fail(format!("cannot turn off the conversion of {name}"), source)
                        }
                    }
                }
            }
            Err(source) => fail(
                "cannot list the CustomResourceDefinitions".to_string(),
                source,
            ),
        }
        let leases: Api<Lease> = Api::namespaced(self.client.clone(), &self.namespace);
        match leases.list(&managed).await {
            Ok(list) => {
                for lease in list.items {
                    let name = lease.metadata.name.unwrap_or_default();
                    match delete_quietly(&leases, &name).await {
                        Ok(()) => report.leases.push(name),
                        Err(source) => fail(format!("cannot delete the Lease {name}"), source),
                    }
                }
            }
            Err(source) => fail(
                format!("cannot list the Leases in {}", self.namespace),
                source,
            ),
        }
        failure.map_or(Ok(report), Err)
    }
}
