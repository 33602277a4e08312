//! ValidatingWebhookConfiguration and MutatingWebhookConfiguration
//! (admissionregistration.k8s.io/v1): each webhook's defaults
//! (`SetDefaults_ValidatingWebhook`, `SetDefaults_MutatingWebhook`: the
//! failure and match policies, empty namespace and object selectors, a
//! 10 s timeout, and for a mutating one `reinvocationPolicy: Never`), each
//! rule's `scope: "*"` (`SetDefaults_Rule`) and a service reference's port
//! 443 (`SetDefaults_ServiceReference`), as
//! `pkg/apis/admissionregistration/v1/defaults.go` keeps them.
//!
//! Left out: the configurations' validation.

use serde_json::{Value, json};

use crate::apis::strategy::{Rules, nothing, nothing_on_update};
use crate::machinery::names::name_is_dns_subdomain;

pub(crate) static VALIDATING: Rules = Rules {
    name: name_is_dns_subdomain,
    default: default_validating,
    validate: nothing,
    validate_update: nothing_on_update,
    validate_status: None,
};

pub(crate) static MUTATING: Rules = Rules {
    name: name_is_dns_subdomain,
    default: default_mutating,
    validate: nothing,
    validate_update: nothing_on_update,
    validate_status: None,
};

fn default_validating(config: &mut Value) {
    default_webhooks(config, false);
}

fn default_mutating(config: &mut Value) {
    default_webhooks(config, true);
}

fn default_webhooks(config: &mut Value, mutating: bool) {
    let Some(webhooks) = config.get_mut("webhooks").and_then(Value::as_array_mut) else {
        return;
    };
    for webhook in webhooks.iter_mut().filter_map(Value::as_object_mut) {
        let mut defaults = vec![
            ("failurePolicy", json!("Fail")),
            ("matchPolicy", json!("Equivalent")),
            ("namespaceSelector", json!({})),
            ("objectSelector", json!({})),
            ("timeoutSeconds", json!(10)),
        ];
        if mutating {
            defaults.push(("reinvocationPolicy", json!("Never")));
        }
        for (field, value) in defaults {
            if webhook.get(field).is_none_or(Value::is_null) {
                webhook.insert(field.into(), value);
            }
        }
        let rules = webhook.get_mut("rules").and_then(Value::as_array_mut);
        for rule in rules.into_iter().flatten().filter_map(Value::as_object_mut) {
            if rule.get("scope").is_none_or(Value::is_null) {
                rule.insert("scope".into(), json!("*"));
            }
        }
        let service = webhook
            .get_mut("clientConfig")
            .and_then(|c| c.get_mut("service"))
            .and_then(Value::as_object_mut);
        if let Some(service) = service
            && service.get("port").is_none_or(Value::is_null)
        {
            service.insert("port".into(), json!(443));
        }
    }
}
