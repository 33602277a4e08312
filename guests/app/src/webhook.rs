//! The `App` webhooks: defaulting (replicas 1, port 80), validation (an
//! image, 0 to 100 replicas, a port from 1 to 65535) and conversion
//! between `v1` and `v2`.
//!
//! `v2` groups what describes the container: `spec.container.{image,port}`
//! where `v1` has `spec.image` and `spec.port`; `spec.replicas` stays.
//! Converting either way loses nothing.

use rekon_sdk::prelude::{Value, json};
use rekon_sdk::webhook::{
    AdmissionRequest, Denied, Validation, Warnings, Webhook, WebhookSpec, Webhooks,
};

use crate::{AppReconciler, GROUP, app_kind};

/// Most replicas an App may ask for.
pub const MAX_REPLICAS: i64 = 100;

impl Webhook for AppReconciler {
    fn webhooks() -> Webhooks {
        Webhooks::new()
            .mutating(WebhookSpec::new("default-apps", app_kind()))
            .validating(WebhookSpec::new("validate-apps", app_kind()))
            .conversion(app_kind(), ["v1", "v2"])
    }

    fn validate_create(request: &AdmissionRequest) -> Validation {
        validate_spec(request.object.as_ref())
    }

    fn validate_update(request: &AdmissionRequest) -> Validation {
        validate_spec(request.object.as_ref())
    }

    fn default(_: &AdmissionRequest, object: &mut Value) -> Result<Warnings, Denied> {
        let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else {
            return Ok(Vec::new());
        };
        spec.entry("replicas").or_insert(json!(1));
        spec.entry("port").or_insert(json!(80));
        Ok(Vec::new())
    }

    fn convert(object: Value, api_version: &str) -> Result<Value, String> {
        match api_version.strip_prefix(&format!("{GROUP}/")) {
            Some("v2") => Ok(to_v2(object)),
            Some("v1") => Ok(to_v1(object)),
            _ => Err(format!("App has no version {api_version}")),
        }
    }
}

/// Checks an App's spec; every problem is named in one message.
pub fn validate_spec(app: Option<&Value>) -> Validation {
    let spec = app.and_then(|a| a.get("spec"));
    let mut problems = Vec::new();
    match spec.and_then(|s| s.get("image")).and_then(Value::as_str) {
        Some(image) if !image.trim().is_empty() => {}
        _ => problems.push("spec.image is required".to_owned()),
    }
    match spec.and_then(|s| s.get("replicas")) {
        None | Some(Value::Null) => {}
        Some(r) => match r.as_i64() {
            Some(n) if (0..=MAX_REPLICAS).contains(&n) => {}
            _ => problems.push(format!(
                "spec.replicas must be between 0 and {MAX_REPLICAS}, not {r}"
            )),
        },
    }
    match spec.and_then(|s| s.get("port")) {
        None | Some(Value::Null) => {}
        Some(p) => match p.as_i64() {
            Some(n) if (1..=65535).contains(&n) => {}
            _ => problems.push(format!("spec.port must be between 1 and 65535, not {p}")),
        },
    }
    if problems.is_empty() {
        let mut warnings = Vec::new();
        if spec
            .and_then(|s| s.get("image"))
            .and_then(Value::as_str)
            .is_some_and(|i| i.ends_with(":latest"))
        {
            warnings.push("spec.image uses the :latest tag; pin a version".to_owned());
        }
        Ok(warnings)
    } else {
        Err(Denied::invalid(problems.join("; ")))
    }
}

/// A `v1` App as `v2`.
pub fn to_v2(mut app: Value) -> Value {
    if let Some(spec) = app.get_mut("spec").and_then(Value::as_object_mut) {
        let mut container = serde_json::Map::new();
        for field in ["image", "port"] {
            if let Some(value) = spec.remove(field) {
                container.insert(field.to_owned(), value);
            }
        }
        spec.insert("container".to_owned(), Value::Object(container));
    }
    app
}

/// A `v2` App as `v1`.
pub fn to_v1(mut app: Value) -> Value {
    if let Some(spec) = app.get_mut("spec").and_then(Value::as_object_mut)
        && let Some(Value::Object(container)) = spec.remove("container")
    {
        for (field, value) in container {
            spec.insert(field, value);
        }
    }
    app
}
