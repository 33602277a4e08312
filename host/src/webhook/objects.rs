//! The objects a cluster needs to call the webhooks, typed: the
//! Validating/MutatingWebhookConfiguration of a module's webhooks, and the
//! `spec.conversion` patch of the CRDs it converts, and the labels and
//! field manager they carry.

use std::collections::BTreeMap;

use base64::Engine as _;
use k8s_openapi::ByteString;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhook, MutatingWebhookConfiguration, RuleWithOperations, ServiceReference,
    ValidatingWebhook, ValidatingWebhookConfiguration, WebhookClientConfig,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiextensions;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use serde_json::{Value, json};

use crate::contract::{FailurePolicy, Gvk, Webhook};
use crate::runtime::webhooks::operation_name;
use crate::runtime::{DEFAULT_TIMEOUT_SECONDS, Phase, operations};
use crate::webhook::chain::configuration_name;

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

/// Where a webhook at `path` is called: the service or URL of `endpoint`,
/// trusting `ca`'s bundle when it gives one.
pub(crate) fn client_config(endpoint: &Endpoint, ca: &CaSource, path: &str) -> WebhookClientConfig {
    let mut config = match endpoint {
        Endpoint::Service {
            namespace,
            name,
            port,
        } => WebhookClientConfig {
            service: Some(ServiceReference {
                namespace: namespace.clone(),
                name: name.clone(),
                path: Some(path.to_string()),
                port: Some(i32::from(*port)),
            }),
            ..WebhookClientConfig::default()
        },
        Endpoint::Url(url) => WebhookClientConfig {
            url: Some(format!("{}{path}", url.trim_end_matches('/'))),
            ..WebhookClientConfig::default()
        },
    };
    if let CaSource::Bundle(bundle) = ca {
        config.ca_bundle = Some(ByteString(
            base64::engine::general_purpose::STANDARD
                .decode(bundle)
                .unwrap_or_else(|_| bundle.as_bytes().to_vec()),
        ));
    }
    config
}

/// The same client configuration, as a CRD's conversion takes it.
fn conversion_client_config(config: WebhookClientConfig) -> apiextensions::WebhookClientConfig {
    apiextensions::WebhookClientConfig {
        ca_bundle: config.ca_bundle,
        service: config.service.map(|s| apiextensions::ServiceReference {
            namespace: s.namespace,
            name: s.name,
            path: s.path,
            port: s.port,
        }),
        url: config.url,
    }
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

/// The metadata of a configuration object rekon publishes: its name and
/// labels, and the annotation of cert-manager's CA injector when it
/// injects the CA.
pub(crate) fn configuration_metadata(
    name: String,
    labels: &[(&str, &str)],
    ca: &CaSource,
) -> ObjectMeta {
    ObjectMeta {
        name: Some(name),
        labels: Some(
            labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ),
        annotations: match ca {
            CaSource::CertManager(certificate) => Some(BTreeMap::from([(
                "cert-manager.io/inject-ca-from".to_string(),
                certificate.clone(),
            )])),
            CaSource::Bundle(_) => None,
        },
        ..ObjectMeta::default()
    }
}

/// A label selector as a configuration takes it (`{}`: everything).
fn selector(selector: Option<&str>) -> LabelSelector {
    selector
        .and_then(|s| rekon_rules::LabelSelector::parse(s).ok())
        .and_then(|s| serde_json::from_value(s.to_api()).ok())
        .unwrap_or_default()
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
    let webhooks = webhooks.iter().map(|webhook| {
        let rules: Vec<RuleWithOperations> = webhook
            .kinds
            .iter()
            .filter_map(|k| {
                Some(RuleWithOperations {
                    api_groups: Some(vec![k.group.clone()]),
                    api_versions: Some(vec![k.version.clone()]),
                    operations: Some(
                        operations(webhook)
                            .into_iter()
                            .map(|o| operation_name(o).to_string())
                            .collect(),
                    ),
                    resources: Some(resources(&plural(k)?, webhook)),
                    scope: Some("*".to_string()),
                })
            })
            .collect();
        ValidatingWebhook {
            name: configuration_name(module, &webhook.name),
            admission_review_versions: vec!["v1".to_string()],
            side_effects: "None".to_string(),
            match_policy: Some("Equivalent".to_string()),
            failure_policy: Some(
                match webhook.failure_policy {
                    FailurePolicy::Fail => "Fail",
                    FailurePolicy::Ignore => "Ignore",
                }
                .to_string(),
            ),
            timeout_seconds: Some(
                i32::try_from(webhook.timeout_seconds.unwrap_or(DEFAULT_TIMEOUT_SECONDS))
                    .unwrap_or(i32::MAX),
            ),
            client_config: client_config(
                endpoint,
                ca,
                &format!("/{verb}/{module}/{}", webhook.name),
            ),
            rules: Some(rules),
            namespace_selector: Some(selector(webhook.namespace_selector.as_deref())),
            object_selector: Some(selector(webhook.object_selector.as_deref())),
            match_conditions: None,
        }
    });
    let metadata = configuration_metadata(
        configuration_object_name(module),
        &[(MANAGED_BY.0, MANAGED_BY.1), (WEBHOOKS_OF, module)],
        ca,
    );
    let object = match phase {
        Phase::Validating => serde_json::to_value(ValidatingWebhookConfiguration {
            metadata,
            webhooks: Some(webhooks.collect()),
        }),
        Phase::Mutating => serde_json::to_value(MutatingWebhookConfiguration {
            metadata,
            webhooks: Some(
                webhooks
                    .map(|w| MutatingWebhook {
                        name: w.name,
                        admission_review_versions: w.admission_review_versions,
                        side_effects: w.side_effects,
                        match_policy: w.match_policy,
                        failure_policy: w.failure_policy,
                        timeout_seconds: w.timeout_seconds,
                        client_config: w.client_config,
                        rules: w.rules,
                        namespace_selector: w.namespace_selector,
                        object_selector: w.object_selector,
                        match_conditions: w.match_conditions,
                        reinvocation_policy: Some("Never".to_string()),
                    })
                    .collect(),
            ),
        }),
    };
    object.expect("a webhook configuration serialises")
}

/// The `spec.conversion` patch of a CRD converted by `module` (with the
/// label that lets the publisher watch the CRD).
pub fn conversion_patch(module: &str, endpoint: &Endpoint, ca: &CaSource) -> Value {
    let conversion = apiextensions::CustomResourceConversion {
        strategy: "Webhook".to_string(),
        webhook: Some(apiextensions::WebhookConversion {
            conversion_review_versions: vec!["v1".to_string()],
            client_config: Some(conversion_client_config(client_config(
                endpoint,
                ca,
                &format!("/convert/{module}"),
            ))),
        }),
    };
    json!({
        "metadata": {"labels": {CONVERTED_BY: module}},
        "spec": {"conversion": conversion},
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
        let config = |endpoint: &Endpoint, path: &str| {
            serde_json::to_value(client_config(endpoint, &ca, path)).unwrap()
        };
        assert!(service.is_target_of(&config(&service, "/convert/app")));
        let other = Endpoint::Service {
            namespace: "other".into(),
            name: "rekon-webhooks".into(),
            port: 443,
        };
        assert!(!other.is_target_of(&config(&service, "/convert/app")));
        let url = Endpoint::Url("https://10.0.0.7:9443/".into());
        assert!(url.is_target_of(&config(&url, "/validate/app/v")));
        assert!(!url.is_target_of(&config(&service, "/validate/app/v")));
        // The bundle goes as given.
        assert_eq!(config(&url, "/v")["caBundle"], "Q0E=");
        assert!(!service.is_target_of(&Value::Null));
    }
}
