//! `{{name}}`: reconciles `{{kind}}` (`{{group}}/{{version}}`), a rekon module in
//! Rust, built into a WebAssembly component (`make build`).
//!
//! - [`{{kind}}Spec`] and [`{{kind}}Status`] are the resource: the CRD is
//!   generated from them (`#[derive(CustomResource)]`) and shipped inside
//!   the component ([`Reconciler::crds`]): `rekon dev` installs it.
//! - [`{{kind}}Reconciler::reconcile`] is called, with a fresh instance, for
//!   every {{kind}} that needs attention. It reaches the cluster only through
//!   the host ([`rekon_sdk::api`]): reads come from the host's cache, writes
//!   go to the API server.{{#webhook}}
//! - [`Webhook`]: `default` fills in `spec.message`,
//!   `validate_*` refuses one longer than 100 characters.{{/webhook}}

use rekon_sdk::crd::CustomResource;
use rekon_sdk::prelude::*;
use rekon_sdk::schemars::{self, JsonSchema};
use rekon_sdk::serde_json;{{#webhook}}
use rekon_sdk::webhook::{
    AdmissionRequest, Denied, Validation, Warnings, Webhook, WebhookSpec, Webhooks,
};{{/webhook}}
use serde::{Deserialize, Serialize};

/// What a {{kind}} asks for.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, CustomResource)]
#[serde(rename_all = "camelCase")]
#[resource(
    group = "{{group}}",
    version = "{{version}}",
    kind = "{{kind}}",{{#namespaced}}
    namespaced,{{/namespaced}}
    status = "{{kind}}Status",
    printcolumn(name = "Message", type = "string", json_path = ".spec.message"),
    printcolumn(name = "Age", type = "date", json_path = ".metadata.creationTimestamp")
)]
pub struct {{kind}}Spec {
    /// What the {{kind}} says.
    #[serde(default = "hello")]
    pub message: String,
}

fn hello() -> String {
    "hello".to_string()
}

/// What the reconciler saw last.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct {{kind}}Status {
    /// The generation this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// `Ready`: `True` once the {{kind}} is reconciled.
    #[serde(default)]
    pub conditions: Vec<Condition>,
}

/// The `{{kind}}` reconciler.
pub struct {{kind}}Reconciler;

#[rekon_sdk::reconciler{{#webhook}}(webhook){{/webhook}}]
impl Reconciler for {{kind}}Reconciler {
    fn manifest() -> Manifest {
        Manifest::new("{{name}}", {{kind}}Spec::gvk())
            .version(env!("CARGO_PKG_VERSION")){{owns_rust}}
            // Spec changes only: the status this module writes wakes nothing.
            .generation_changed()
    }

    fn crds() -> Vec<Value> {
        vec![{{kind}}Spec::crd()]
    }

    fn reconcile(req: Request) -> Result<Action, Error> {
        let Some(object) = req.json()? else {
            // Gone: owned objects go with it (their owner references).
            return Ok(Action::Done);
        };
        if api::is_deleting(&object) {
            return Ok(Action::Done);
        }
        let spec: {{kind}}Spec = serde_json::from_value(object["spec"].clone())
            .map_err(|e| Error::permanent(format!("invalid spec: {e}")))?;
{{#configmap}}
        // The owned ConfigMap holds the message (server-side apply, with a
        // controller owner reference: deleting the {{kind}} deletes it).
        let owner = api::controller_ref_to(&object)
            .ok_or_else(|| Error::permanent("the {{kind}} has no metadata.uid"))?;
        api::apply_value(
            &json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {
                    "name": req.name(),
                    "namespace": req.target.namespace.as_deref().unwrap_or("default"),
                    "ownerReferences": [serde_json::to_value(owner)?],
                },
                "data": {"message": spec.message},
            }),
            true,
        )?;
{{/configmap}}
        let current: {{kind}}Status =
            serde_json::from_value(object["status"].clone()).unwrap_or_default();
        let generation = object.pointer("/metadata/generation").and_then(Value::as_i64);
        let says = format!("says {:?}", spec.message);
        let mut status = current.clone();
        status.observed_generation = generation;
        set_condition(
            &mut status.conditions,
            Condition::new("Ready", true, "Reconciled", &says).observed_generation(generation),
        );
        if status != current {
            api::patch_status_dyn(&req.target, &json!({ "status": status }))?;
            api::event(&req.target, EventType::Normal, "Reconciled", &says);
        }
        Ok(Action::Done)
    }
}
{{#webhook}}

impl Webhook for {{kind}}Reconciler {
    fn webhooks() -> Webhooks {
        Webhooks::new()
            .validating(WebhookSpec::new("validate", {{kind}}Spec::gvk()))
            .mutating(WebhookSpec::new("default", {{kind}}Spec::gvk()))
    }

    fn validate_create(request: &AdmissionRequest) -> Validation {
        check(request)
    }

    fn validate_update(request: &AdmissionRequest) -> Validation {
        check(request)
    }

    fn default(_request: &AdmissionRequest, object: &mut Value) -> Result<Warnings, Denied> {
        if object.pointer("/spec/message").is_none() {
            object["spec"]["message"] = json!("hello");
        }
        Ok(Vec::new())
    }
}

/// Refuses a message longer than 100 characters.
fn check(request: &AdmissionRequest) -> Validation {
    let message = request
        .object
        .as_ref()
        .and_then(|o| o.pointer("/spec/message"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    if message.chars().count() > 100 {
        return Err(Denied::invalid("spec.message: at most 100 characters"));
    }
    Ok(Vec::new())
}
{{/webhook}}
