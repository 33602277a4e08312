//! What a cluster needs to call the webhooks: one
//! Validating/MutatingWebhookConfiguration per module (`rekon-<module>`)
//! with the caBundle of the serving certificate, and the `spec.conversion`
//! of the CRDs a module converts. Applied (server-side, field manager
//! `rekon-webhooks`) when a module starts serving, again when a new version
//! changes them, removed when the module goes; a failed write is retried.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{Value, json};

use super::chain::configuration_name;
use super::registry::WebhookModules;
use crate::contract::{FailurePolicy, Gvk, Webhook};
use crate::discovery::Discovery;
use crate::runtime::webhooks::operation_name;
use crate::runtime::{DEFAULT_TIMEOUT_SECONDS, Module, Phase, operations};

/// How often everything published is applied again.
const REAPPLY: Duration = Duration::from_secs(60);

/// The field manager of what the host writes for its webhooks.
pub const FIELD_MANAGER: &str = "rekon-webhooks";

/// Where the API server reaches the webhook server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// A Service in the cluster (the rekon Deployment's).
    Service {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// Its port.
        port: u16,
    },
    /// A URL (`https://host:port`), for a host outside the cluster.
    Url(String),
}

/// How the webhook configurations are told whom to trust.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CaSource {
    /// This CA bundle (base64 PEM) goes into every `clientConfig.caBundle`.
    Bundle(String),
    /// cert-manager's CA injector fills them from this Certificate
    /// (`namespace/name`): the annotation `cert-manager.io/inject-ca-from`.
    CertManager(String),
}

fn client_config(endpoint: &Endpoint, ca: &CaSource, path: &str) -> Value {
    let mut config = match endpoint {
        Endpoint::Service {
            namespace,
            name,
            port,
        } => json!({"service": {"namespace": namespace, "name": name, "path": path, "port": port}}),
        Endpoint::Url(url) => json!({"url": format!("{}{path}", url.trim_end_matches('/'))}),
    };
    if let CaSource::Bundle(bundle) = ca {
        config["caBundle"] = json!(bundle);
    }
    config
}

/// The resource names a webhook's rules list for a kind: the resource and
/// the subresources it asks for.
fn resources(plural: &str, webhook: &Webhook) -> Vec<String> {
    std::iter::once(plural.to_string())
        .chain(
            webhook
                .sub_resources
                .iter()
                .map(|s| format!("{plural}/{s}")),
        )
        .collect()
}

/// The configuration object (`ValidatingWebhookConfiguration` or
/// `MutatingWebhookConfiguration`) of a module's webhooks of `phase`.
/// `plural` names each kind's resource.
pub fn configuration(
    module: &str,
    phase: Phase,
    webhooks: &[Webhook],
    plural: &dyn Fn(&Gvk) -> Option<String>,
    endpoint: &Endpoint,
    ca: &CaSource,
) -> Value {
    let (kind, verb) = match phase {
        Phase::Mutating => ("MutatingWebhookConfiguration", "mutate"),
        Phase::Validating => ("ValidatingWebhookConfiguration", "validate"),
    };
    let entries: Vec<Value> = webhooks
        .iter()
        .map(|webhook| {
            let rules: Vec<Value> = webhook
                .kinds
                .iter()
                .filter_map(|k| {
                    let plural = plural(k)?;
                    Some(json!({
                        "apiGroups": [k.group],
                        "apiVersions": [k.version],
                        "operations": operations(webhook).into_iter().map(operation_name).collect::<Vec<_>>(),
                        "resources": resources(&plural, webhook),
                        "scope": "*",
                    }))
                })
                .collect();
            let selector = |s: &Option<String>| {
                s.as_deref()
                    .and_then(|s| rekon_store::LabelSelector::parse(s).ok())
                    .map_or_else(|| json!({}), |s| s.to_api())
            };
            let mut entry = json!({
                "name": configuration_name(module, &webhook.name),
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "matchPolicy": "Equivalent",
                "failurePolicy": match webhook.failure_policy {
                    FailurePolicy::Fail => "Fail",
                    FailurePolicy::Ignore => "Ignore",
                },
                "timeoutSeconds": webhook.timeout_seconds.unwrap_or(DEFAULT_TIMEOUT_SECONDS),
                "clientConfig": client_config(endpoint, ca, &format!("/{verb}/{module}/{}", webhook.name)),
                "rules": rules,
                "namespaceSelector": selector(&webhook.namespace_selector),
                "objectSelector": selector(&webhook.object_selector),
            });
            if phase == Phase::Mutating {
                entry["reinvocationPolicy"] = json!("Never");
            }
            entry
        })
        .collect();
    let mut metadata = json!({
        "name": format!("rekon-{module}"),
        "labels": {"app.kubernetes.io/managed-by": "rekon", "rekon.dev/webhooks-of": module},
    });
    if let CaSource::CertManager(certificate) = ca {
        metadata["annotations"] = json!({"cert-manager.io/inject-ca-from": certificate});
    }
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": metadata,
        "webhooks": entries,
    })
}

/// The `spec.conversion` patch of a CRD converted by `module`.
pub fn conversion_patch(module: &str, endpoint: &Endpoint, ca: &CaSource) -> Value {
    json!({"spec": {"conversion": {
        "strategy": "Webhook",
        "webhook": {
            "conversionReviewVersions": ["v1"],
            "clientConfig": client_config(endpoint, ca, &format!("/convert/{module}")),
        },
    }}})
}

/// Keeps the cluster's webhook configurations and CRD conversions in line
/// with the modules serving webhooks.
pub(crate) struct Publisher {
    pub client: kube::Client,
    pub discovery: Arc<Discovery>,
    pub modules: WebhookModules,
    pub endpoint: Endpoint,
    pub ca: CaSource,
}

fn api_of(client: &kube::Client, kind: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("admissionregistration.k8s.io", "v1", kind);
    let plural = format!("{}s", kind.to_ascii_lowercase());
    Api::all_with(
        client.clone(),
        &ApiResource::from_gvk_with_plural(&gvk, &plural),
    )
}

/// The API of CustomResourceDefinitions (also `rekon run --install-crds`'s).
pub(crate) fn crds(client: &kube::Client) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition");
    Api::all_with(
        client.clone(),
        &ApiResource::from_gvk_with_plural(&gvk, "customresourcedefinitions"),
    )
}

impl Publisher {
    /// Runs until aborted.
    pub async fn run(self) {
        let mut changes = self.modules.subscribe();
        // Each module's published version (digest).
        let mut published: BTreeMap<String, String> = BTreeMap::new();
        // The CRDs whose conversion each module was published for.
        let mut converting: BTreeMap<String, Vec<String>> = BTreeMap::new();
        loop {
            let current: BTreeMap<String, Module> = self
                .modules
                .all()
                .into_iter()
                .map(|m| (m.name().to_string(), m))
                .collect();
            let mut failed = false;
            for (name, module) in &current {
                if published.get(name).map(String::as_str) == Some(module.digest()) {
                    continue;
                }
                match self.publish(module).await {
                    Ok(crds) => {
                        tracing::info!(module = %name, "webhook configurations published");
                        published.insert(name.clone(), module.digest().to_string());
                        converting.insert(name.clone(), crds);
                    }
                    Err(error) => {
                        tracing::warn!(module = %name, error = %error, "cannot publish the webhook configurations; retrying");
                        failed = true;
                    }
                }
            }
            let gone: Vec<String> = converting
                .keys()
                .filter(|n| !current.contains_key(*n))
                .cloned()
                .collect();
            for name in gone {
                let crds = converting.get(&name).cloned().unwrap_or_default();
                match self.withdraw(&name, &crds).await {
                    Ok(()) => {
                        tracing::info!(module = %name, "webhook configurations removed");
                        published.remove(&name);
                        converting.remove(&name);
                    }
                    Err(error) => {
                        tracing::warn!(module = %name, error = %error, "cannot remove the webhook configurations; retrying");
                        failed = true;
                    }
                }
            }
            // A failure is retried soon; and every minute everything is
            // applied again, so configurations another replica removed
            // (its module went while this one's stays) come back.
            let retry = tokio::time::sleep(if failed {
                Duration::from_secs(2)
            } else {
                REAPPLY
            });
            tokio::select! {
                changed = changes.changed() => if changed.is_err() { return },
                () = retry => {
                    if !failed {
                        published.clear();
                    }
                }
            }
        }
    }

    /// The resource (plural) of `kind`, from discovery; the usual plural
    /// when discovery cannot say (every version of a kind names the same
    /// resource, and `*` cannot be asked of discovery).
    async fn plural(&self, kind: &Gvk) -> String {
        let resolved = match kind.version.as_str() {
            "*" => None,
            _ => self.discovery.resolve(kind).await.ok(),
        };
        resolved.map_or_else(
            || crate::shared::plural_of(&kind.kind),
            |r| r.resource.plural,
        )
    }

    async fn plurals(&self, module: &Module) -> BTreeMap<(String, String, String), String> {
        let webhooks = module.webhooks();
        let mut plurals = BTreeMap::new();
        for webhook in webhooks.mutating.iter().chain(&webhooks.validating) {
            for kind in &webhook.kinds {
                plurals.insert(key(kind), self.plural(kind).await);
            }
        }
        plurals
    }

    /// Applies a module's configurations and conversions; returns the
    /// names of the CRDs it converts.
    async fn publish(&self, module: &Module) -> Result<Vec<String>, kube::Error> {
        let name = module.name();
        let plurals = self.plurals(module).await;
        let plural = |k: &Gvk| plurals.get(&key(k)).cloned();
        let params = PatchParams::apply(FIELD_MANAGER).force();
        let webhooks = module.webhooks();
        for (phase, list, kind) in [
            (
                Phase::Mutating,
                &webhooks.mutating,
                "MutatingWebhookConfiguration",
            ),
            (
                Phase::Validating,
                &webhooks.validating,
                "ValidatingWebhookConfiguration",
            ),
        ] {
            let api = api_of(&self.client, kind);
            let object_name = format!("rekon-{name}");
            if list.is_empty() {
                delete_quietly(&api, &object_name).await?;
                continue;
            }
            let object = configuration(name, phase, list, &plural, &self.endpoint, &self.ca);
            api.patch(&object_name, &params, &Patch::Apply(&object))
                .await?;
        }
        let mut converted = Vec::new();
        for conversion in &webhooks.conversions {
            let mut kind = conversion.kind.clone();
            kind.version = conversion.versions.first().cloned().unwrap_or_default();
            let crd_name = format!("{}.{}", self.plural(&kind).await, kind.group);
            let patch = conversion_patch(name, &self.endpoint, &self.ca);
            crds(&self.client)
                .patch(&crd_name, &PatchParams::default(), &Patch::Merge(&patch))
                .await?;
            converted.push(crd_name);
        }
        Ok(converted)
    }

    /// Deletes a module's configurations and turns the conversion of the
    /// CRDs it converted back to `None`.
    async fn withdraw(&self, name: &str, converted: &[String]) -> Result<(), kube::Error> {
        for kind in [
            "MutatingWebhookConfiguration",
            "ValidatingWebhookConfiguration",
        ] {
            delete_quietly(&api_of(&self.client, kind), &format!("rekon-{name}")).await?;
        }
        let none = json!({"spec": {"conversion": {"strategy": "None", "webhook": null}}});
        for crd in converted {
            match crds(&self.client)
                .patch(crd, &PatchParams::default(), &Patch::Merge(&none))
                .await
            {
                Ok(_) => {}
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

fn key(kind: &Gvk) -> (String, String, String) {
    (kind.group.clone(), kind.version.clone(), kind.kind.clone())
}

async fn delete_quietly(api: &Api<DynamicObject>, name: &str) -> Result<(), kube::Error> {
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(e) => Err(e),
    }
}
