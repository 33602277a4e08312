//! What a cluster needs to call the webhooks: one
//! Validating/MutatingWebhookConfiguration per module (`rekon-<module>`)
//! with the caBundle of the serving certificate, and the `spec.conversion`
//! of the CRDs a module converts.
//!
//! They belong to the set of replicas, not to one process, as
//! controller-runtime's webhook server and cert-manager's CA injector
//! treat them: a replica that stops (a rolling restart, a scale-down, an
//! eviction, a crash) withdraws nothing. The replica that leads (the
//! module's Lease holder with `--scale-out`) applies them (server-side,
//! field manager `rekon-webhooks`) when a module starts serving or a new
//! version changes them, and again at once when it sees them changed or
//! deleted (it watches them); it withdraws a module's configurations only
//! once no live replica serves the module ([`super::members`]). Every write
//! is fenced by leadership and idempotent. Uninstalling is
//! [`uninstall`](crate::webhook::uninstall)'s.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{Value, json};
use tokio::sync::watch;

use super::chain::configuration_name;
use super::members::Members;
use super::registry::WebhookModules;
use crate::contract::{FailurePolicy, Gvk, Webhook};
use crate::discovery::Discovery;
use crate::ha::Leaders;
use crate::informer::{Informer, Informers};
use crate::runtime::webhooks::operation_name;
use crate::runtime::{DEFAULT_TIMEOUT_SECONDS, Module, Phase, operations};
use crate::webhook::uninstall::Triggers;

/// How often everything is compared with the cluster even when nothing
/// was seen to change.
const RESYNC: Duration = Duration::from_secs(60);

/// How long a change seen in what is published settles before the round
/// that answers it.
const DRIFT_SETTLE: Duration = Duration::from_millis(500);

/// How soon a failed write is tried again.
const RETRY: Duration = Duration::from_secs(2);

/// The field manager of what the host writes for its webhooks.
pub const FIELD_MANAGER: &str = "rekon-webhooks";

pub use crate::names::MANAGED_BY;

/// The label naming the module a webhook configuration is for.
pub const WEBHOOKS_OF: &str = "rekon.dev/webhooks-of";

/// The label naming the module that converts a CRD.
pub const CONVERTED_BY: &str = "rekon.dev/converted-by";

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

impl Endpoint {
    /// Whether a `clientConfig` (of a webhook or a CRD conversion) points
    /// here.
    pub fn is_target_of(&self, client_config: &Value) -> bool {
        match self {
            Endpoint::Service {
                namespace, name, ..
            } => {
                let service = &client_config["service"];
                service["namespace"] == namespace.as_str() && service["name"] == name.as_str()
            }
            Endpoint::Url(url) => client_config["url"]
                .as_str()
                .is_some_and(|u| u.starts_with(url.trim_end_matches('/'))),
        }
    }
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Endpoint::Service {
                namespace,
                name,
                port,
            } => write!(f, "service {namespace}/{name}:{port}"),
            Endpoint::Url(url) => f.write_str(url),
        }
    }
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

pub(crate) fn client_config(endpoint: &Endpoint, ca: &CaSource, path: &str) -> Value {
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

/// The kind of the configuration object of `phase`.
pub fn configuration_kind(phase: Phase) -> &'static str {
    match phase {
        Phase::Mutating => "MutatingWebhookConfiguration",
        Phase::Validating => "ValidatingWebhookConfiguration",
    }
}

/// The name of a module's configuration objects.
pub fn configuration_object_name(module: &str) -> String {
    format!("rekon-{module}")
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
    let verb = match phase {
        Phase::Mutating => "mutate",
        Phase::Validating => "validate",
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
                    .and_then(|s| rekon_rules::LabelSelector::parse(s).ok())
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
        "name": configuration_object_name(module),
        "labels": {MANAGED_BY.0: MANAGED_BY.1, WEBHOOKS_OF: module},
    });
    if let CaSource::CertManager(certificate) = ca {
        metadata["annotations"] = json!({"cert-manager.io/inject-ca-from": certificate});
    }
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": configuration_kind(phase),
        "metadata": metadata,
        "webhooks": entries,
    })
}

/// The `spec.conversion` patch of a CRD converted by `module` (with the
/// label that lets the publisher watch the CRD).
pub fn conversion_patch(module: &str, endpoint: &Endpoint, ca: &CaSource) -> Value {
    json!({
        "metadata": {"labels": {CONVERTED_BY: module}},
        "spec": {"conversion": {
            "strategy": "Webhook",
            "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": client_config(endpoint, ca, &format!("/convert/{module}")),
            },
        }},
    })
}

/// The patch that turns a CRD's conversion back to `None`.
pub fn no_conversion_patch() -> Value {
    json!({
        "metadata": {"labels": {CONVERTED_BY: null}},
        "spec": {"conversion": {"strategy": "None", "webhook": null}},
    })
}

/// Whether `live` holds everything `desired` says: objects field by field
/// (other fields may be there: the server's defaults), lists element by
/// element, scalars equal.
pub fn contains(live: &Value, desired: &Value) -> bool {
    match (live, desired) {
        (Value::Object(live), Value::Object(desired)) => desired.iter().all(|(k, v)| {
            live.get(k).is_some_and(|l| contains(l, v)) || (v.is_null() && !live.contains_key(k))
        }),
        (Value::Array(live), Value::Array(desired)) => {
            live.len() == desired.len() && live.iter().zip(desired).all(|(l, d)| contains(l, d))
        }
        _ => live == desired,
    }
}

fn api_of(client: &kube::Client, kind: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("admissionregistration.k8s.io", "v1", kind);
    let plural = format!("{}s", kind.to_ascii_lowercase());
    Api::all_with(
        client.clone(),
        &ApiResource::from_gvk_with_plural(&gvk, &plural),
    )
}

/// The API of webhook configurations of `phase`.
pub(crate) fn configurations(client: &kube::Client, phase: Phase) -> Api<DynamicObject> {
    api_of(client, configuration_kind(phase))
}

/// The API of CustomResourceDefinitions (also `rekon run --install-crds`'s).
pub(crate) fn crds(client: &kube::Client) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition");
    Api::all_with(
        client.clone(),
        &ApiResource::from_gvk_with_plural(&gvk, "customresourcedefinitions"),
    )
}

fn gvk(group: &str, kind: &str) -> Gvk {
    Gvk {
        group: group.to_string(),
        version: "v1".to_string(),
        kind: kind.to_string(),
    }
}

/// Deletes an object; one that is already gone is fine.
pub(crate) async fn delete_quietly(
    api: &Api<DynamicObject>,
    name: &str,
) -> Result<(), kube::Error> {
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(e) => Err(e),
    }
}

/// Keeps the cluster's webhook configurations and CRD conversions in line
/// with the modules serving webhooks, while this replica leads.
pub(crate) struct Publisher {
    pub client: kube::Client,
    pub discovery: Arc<Discovery>,
    pub informers: Arc<Informers>,
    pub modules: WebhookModules,
    pub endpoint: Endpoint,
    pub ca: CaSource,
    pub leaders: Leaders,
    /// The other replicas serving webhooks (none: this one is alone).
    pub members: Option<Arc<Members>>,
    /// rekon's own objects, whose deletion means it is being uninstalled
    /// (and the uninstall webhook is published for them).
    pub triggers: Triggers,
    /// True once the modules found at start have loaded (or been refused):
    /// no module is withdrawn before that.
    pub loaded: watch::Receiver<bool>,
}

/// The published objects the publisher watches.
struct Watched {
    mutating: Arc<Informer>,
    validating: Arc<Informer>,
    crds: Arc<Informer>,
}

/// What one round left undone.
#[derive(Default)]
struct Round {
    /// A write failed: try again soon.
    failed: bool,
    /// A module this replica no longer serves is still served by another
    /// replica: look again soon, it may go there too.
    pending: bool,
}

impl Publisher {
    /// Runs until aborted.
    pub async fn run(mut self) {
        let watched = self.watch().await;
        let mut module_changes = self.modules.subscribe();
        let mut leadership = self.leadership_changes();
        let mut drift = futures::stream::select_all(
            [&watched.mutating, &watched.validating, &watched.crds]
                .map(|informer| informer.changed()),
        );
        let mut uninstalling_said = false;
        loop {
            let round = if self.triggers.uninstalling().await {
                if !uninstalling_said {
                    tracing::warn!(
                        "rekon is being uninstalled: the webhook configurations are no longer published"
                    );
                    uninstalling_said = true;
                }
                Round::default()
            } else {
                self.round(&watched).await
            };
            let wait = if round.failed || round.pending {
                RETRY
            } else {
                RESYNC
            };
            tokio::select! {
                changed = module_changes.changed() => if changed.is_err() { return },
                _ = changed(&mut leadership) => {}
                _ = changed_or_never(&mut self.loaded) => {}
                Some(()) = futures::StreamExt::next(&mut drift) => {
                    // Let a burst (our own applies) settle into one round;
                    // and when an uninstall deleted what we published, let
                    // its deletion of a trigger land first, so the round
                    // sees it and publishes nothing again.
                    tokio::time::sleep(DRIFT_SETTLE).await;
                    while let Some(Some(())) = futures::FutureExt::now_or_never(futures::StreamExt::next(&mut drift)) {}
                }
                () = tokio::time::sleep(wait) => {}
            }
        }
    }

    /// A receiver that changes when this replica's leadership does (none
    /// in scale-out mode: module Leases come and go, the periodic round
    /// catches them, and each module's publication is fenced by its own).
    fn leadership_changes(&self) -> Option<watch::Receiver<bool>> {
        match &self.leaders {
            Leaders::Host(leadership) => Some(leadership.subscribe()),
            Leaders::Modules(_) => None,
        }
    }

    /// Informers of what is published (label-selected: nothing else is
    /// cached), retried until they start.
    async fn watch(&self) -> Watched {
        let start = |kind: Gvk, selector: String| {
            let informers = self.informers.clone();
            async move {
                loop {
                    match informers.informer(&kind, Some(&selector), None).await {
                        Ok(informer) => return informer,
                        Err(error) => {
                            tracing::warn!(kind = %kind.kind, error = %error, "cannot watch the published webhook objects; retrying");
                            tokio::time::sleep(RETRY).await;
                        }
                    }
                }
            }
        };
        let managed = format!("{}={}", MANAGED_BY.0, MANAGED_BY.1);
        let (mutating, validating, crds) = tokio::join!(
            start(
                gvk(
                    "admissionregistration.k8s.io",
                    "MutatingWebhookConfiguration"
                ),
                managed.clone()
            ),
            start(
                gvk(
                    "admissionregistration.k8s.io",
                    "ValidatingWebhookConfiguration"
                ),
                managed
            ),
            start(
                gvk("apiextensions.k8s.io", "CustomResourceDefinition"),
                CONVERTED_BY.to_string()
            ),
        );
        for informer in [&mutating, &validating, &crds] {
            informer.wait_ready().await;
        }
        Watched {
            mutating,
            validating,
            crds,
        }
    }

    /// One comparison of what should be published with what is, and the
    /// writes that close the difference.
    async fn round(&self, watched: &Watched) -> Round {
        let mut round = Round::default();
        let modules: BTreeMap<String, Module> = self
            .modules
            .all()
            .into_iter()
            .map(|m| (m.name().to_string(), m))
            .collect();
        for (name, module) in &modules {
            if !self.leaders.speaks_for(Some(name)) {
                continue;
            }
            match self.publish(module, watched).await {
                Ok(true) => {
                    tracing::info!(module = %name, endpoint = %self.endpoint, "webhook configurations published")
                }
                Ok(false) => {}
                Err(error) => {
                    tracing::warn!(module = %name, error = %error, "cannot publish the webhook configurations; retrying");
                    round.failed = true;
                }
            }
        }
        if !self.triggers.is_empty() && self.leaders.speaks_for(None) {
            match self.publish_uninstall(watched).await {
                Ok(true) => tracing::info!("uninstall webhook published"),
                Ok(false) => {}
                Err(error) => {
                    tracing::warn!(error = %error, "cannot publish the uninstall webhook; retrying");
                    round.failed = true;
                }
            }
        }
        if *self.loaded.borrow() && self.leaders.speaks_for(None) {
            for name in self.published_elsewhere(watched, &modules) {
                if let Some(members) = &self.members {
                    match members.serving().await {
                        Ok(serving) if serving.contains(&name) => {
                            round.pending = true;
                            continue;
                        }
                        Ok(_) => {}
                        Err(error) => {
                            tracing::warn!(module = %name, error = %error, "cannot tell which replicas serve webhooks; not withdrawing");
                            round.failed = true;
                            continue;
                        }
                    }
                }
                match self.withdraw(&name, watched).await {
                    Ok(()) => {
                        tracing::info!(module = %name, "webhook configurations withdrawn: no replica serves the module")
                    }
                    Err(error) => {
                        tracing::warn!(module = %name, error = %error, "cannot withdraw the webhook configurations; retrying");
                        round.failed = true;
                    }
                }
            }
        }
        round
    }

    /// The modules whose configurations or conversions point at our
    /// endpoint but which this replica does not serve.
    fn published_elsewhere(
        &self,
        watched: &Watched,
        modules: &BTreeMap<String, Module>,
    ) -> BTreeSet<String> {
        let mut found = BTreeSet::new();
        for informer in [&watched.mutating, &watched.validating] {
            for object in informer.list(None) {
                let Ok(value) = serde_json::from_str::<Value>(&object.json) else {
                    continue;
                };
                let ours = value["webhooks"].as_array().is_some_and(|w| {
                    w.iter()
                        .any(|w| self.endpoint.is_target_of(&w["clientConfig"]))
                });
                if let Some(module) = object.label(WEBHOOKS_OF)
                    && ours
                {
                    found.insert(module.to_string());
                }
            }
        }
        for object in watched.crds.list(None) {
            let Ok(value) = serde_json::from_str::<Value>(&object.json) else {
                continue;
            };
            if let Some(module) = object.label(CONVERTED_BY)
                && self
                    .endpoint
                    .is_target_of(&value["spec"]["conversion"]["webhook"]["clientConfig"])
            {
                found.insert(module.to_string());
            }
        }
        found.retain(|m| !modules.contains_key(m));
        found
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
            || crate::names::plural_of(&kind.kind),
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

    /// A write for `module` may go out: this replica still leads it.
    fn fence(&self, module: &str) -> Result<(), kube::Error> {
        if self.leaders.speaks_for(Some(module)) {
            Ok(())
        } else {
            Err(kube::Error::Service(
                format!("this replica no longer leads module {module}: not publishing").into(),
            ))
        }
    }

    /// Applies what differs of a module's configurations and conversions;
    /// whether anything was written.
    async fn publish(&self, module: &Module, watched: &Watched) -> Result<bool, kube::Error> {
        let name = module.name();
        let plurals = self.plurals(module).await;
        let plural = |k: &Gvk| plurals.get(&key(k)).cloned();
        let params = PatchParams::apply(FIELD_MANAGER).force();
        let webhooks = module.webhooks();
        let object_name = configuration_object_name(name);
        let mut wrote = false;
        for (phase, list, informer) in [
            (Phase::Mutating, &webhooks.mutating, &watched.mutating),
            (Phase::Validating, &webhooks.validating, &watched.validating),
        ] {
            let live = informer
                .get(None, &object_name)
                .and_then(|o| serde_json::from_str::<Value>(&o.json).ok());
            let api = configurations(&self.client, phase);
            if list.is_empty() {
                if live.is_some() {
                    self.fence(name)?;
                    delete_quietly(&api, &object_name).await?;
                    wrote = true;
                }
                continue;
            }
            let object = configuration(name, phase, list, &plural, &self.endpoint, &self.ca);
            if live.is_some_and(|live| contains(&live, &object)) {
                continue;
            }
            self.fence(name)?;
            api.patch(&object_name, &params, &Patch::Apply(&object))
                .await?;
            wrote = true;
        }
        let patch = conversion_patch(name, &self.endpoint, &self.ca);
        for conversion in &webhooks.conversions {
            let mut kind = conversion.kind.clone();
            kind.version = conversion.versions.first().cloned().unwrap_or_default();
            let crd_name = format!("{}.{}", self.plural(&kind).await, kind.group);
            let live = watched
                .crds
                .get(None, &crd_name)
                .and_then(|o| serde_json::from_str::<Value>(&o.json).ok());
            if live.is_some_and(|live| contains(&live, &patch)) {
                continue;
            }
            self.fence(name)?;
            crds(&self.client)
                .patch(&crd_name, &PatchParams::default(), &Patch::Merge(&patch))
                .await?;
            wrote = true;
        }
        Ok(wrote)
    }

    /// Applies the uninstall webhook's configuration if it differs; whether
    /// it was written.
    async fn publish_uninstall(&self, watched: &Watched) -> Result<bool, kube::Error> {
        let object = self.triggers.configuration(&self.endpoint, &self.ca);
        let live = watched
            .validating
            .get(None, crate::webhook::uninstall::CONFIGURATION)
            .and_then(|o| serde_json::from_str::<Value>(&o.json).ok());
        if live.is_some_and(|live| contains(&live, &object)) {
            return Ok(false);
        }
        configurations(&self.client, Phase::Validating)
            .patch(
                crate::webhook::uninstall::CONFIGURATION,
                &PatchParams::apply(FIELD_MANAGER).force(),
                &Patch::Apply(&object),
            )
            .await?;
        Ok(true)
    }

    /// Deletes a module's configurations and turns the conversion of the
    /// CRDs it converted through our endpoint back to `None`.
    async fn withdraw(&self, name: &str, watched: &Watched) -> Result<(), kube::Error> {
        for phase in [Phase::Mutating, Phase::Validating] {
            if !self.leaders.speaks_for(None) {
                return Err(kube::Error::Service("this replica no longer leads".into()));
            }
            delete_quietly(
                &configurations(&self.client, phase),
                &configuration_object_name(name),
            )
            .await?;
        }
        for object in watched.crds.list(None) {
            let Ok(value) = serde_json::from_str::<Value>(&object.json) else {
                continue;
            };
            if object.label(CONVERTED_BY) != Some(name)
                || !self
                    .endpoint
                    .is_target_of(&value["spec"]["conversion"]["webhook"]["clientConfig"])
            {
                continue;
            }
            if !self.leaders.speaks_for(None) {
                return Err(kube::Error::Service("this replica no longer leads".into()));
            }
            match crds(&self.client)
                .patch(
                    object.name(),
                    &PatchParams::default(),
                    &Patch::Merge(&no_conversion_patch()),
                )
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

/// The next change of leadership; never, without a receiver or once its
/// sender is gone.
async fn changed(receiver: &mut Option<watch::Receiver<bool>>) {
    match receiver {
        Some(changes) => changed_or_never(changes).await,
        None => std::future::pending().await,
    }
}

/// The next change; never once the sender is gone.
async fn changed_or_never(receiver: &mut watch::Receiver<bool>) {
    if receiver.changed().await.is_err() {
        std::future::pending::<()>().await;
    }
}

fn key(kind: &Gvk) -> (String, String, String) {
    (kind.group.clone(), kind.version.clone(), kind.kind.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contains_ignores_what_the_server_adds_but_not_what_it_lacks() {
        let desired = json!({"a": 1, "b": {"c": [1, {"d": "x"}]}, "gone": null});
        assert!(contains(
            &json!({"a": 1, "b": {"c": [1, {"d": "x", "e": 2}], "f": 3}, "g": 4}),
            &desired
        ));
        for live in [
            json!({"a": 2, "b": {"c": [1, {"d": "x"}]}}),
            json!({"a": 1, "b": {"c": [1]}}),
            json!({"a": 1, "b": {"c": [1, {"d": "y"}]}}),
            json!({"a": 1, "b": {"c": [1, {"d": "x"}]}, "gone": 5}),
            json!({"b": {"c": [1, {"d": "x"}]}}),
        ] {
            assert!(!contains(&live, &desired), "{live}");
        }
    }

    #[test]
    fn an_endpoint_knows_the_client_configs_that_point_at_it() {
        let service = Endpoint::Service {
            namespace: "rekon-system".into(),
            name: "rekon-webhooks".into(),
            port: 443,
        };
        let ca = CaSource::Bundle("Q0E=".into());
        assert!(service.is_target_of(&client_config(&service, &ca, "/convert/app")));
        let other = Endpoint::Service {
            namespace: "other".into(),
            name: "rekon-webhooks".into(),
            port: 443,
        };
        assert!(!other.is_target_of(&client_config(&service, &ca, "/convert/app")));
        let url = Endpoint::Url("https://10.0.0.7:9443/".into());
        assert!(url.is_target_of(&client_config(&url, &ca, "/validate/app/v")));
        assert!(!url.is_target_of(&client_config(&service, &ca, "/validate/app/v")));
        assert!(!service.is_target_of(&Value::Null));
    }
}
