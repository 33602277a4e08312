//! Admission and conversion webhooks, in the style of kubebuilder's
//! `CustomValidator` and `CustomDefaulter`: implement [`Webhook`] and put
//! `#[rekon_sdk::reconciler(webhook)]` on the [`Reconciler`](crate::Reconciler)
//! impl of the same type (a module that reconciles and serves webhooks), or
//! `#[rekon_sdk::webhook]` on the `Webhook` impl (a module that only serves
//! webhooks).
//!
//! ```
//! use rekon_sdk::prelude::*;
//! use rekon_sdk::webhook::*;
//!
//! struct Apps;
//!
//! impl Webhook for Apps {
//!     fn webhooks() -> Webhooks {
//!         let apps = Gvk::new("demo.rekon.dev", "v1", "App");
//!         Webhooks::new()
//!             .validating(WebhookSpec::new("validate-apps", apps.clone()))
//!             .mutating(WebhookSpec::new("default-apps", apps))
//!     }
//!
//!     fn validate_create(req: &AdmissionRequest) -> Validation {
//!         let image = req.object.as_ref().and_then(|o| o.pointer("/spec/image"));
//!         match image {
//!             Some(Value::String(s)) if !s.is_empty() => Ok(Vec::new()),
//!             _ => Err(Denied::invalid("spec.image is required")),
//!         }
//!     }
//!
//!     fn default(_: &AdmissionRequest, object: &mut Value) -> Result<Warnings, Denied> {
//!         if object.pointer("/spec/replicas").is_none() {
//!             object["spec"]["replicas"] = json!(1);
//!         }
//!         Ok(Vec::new())
//!     }
//! }
//!
//! let bad = AdmissionRequest::create(json!({"spec": {}}));
//! assert!(!validate::<Apps>(&bad).allowed);
//! let (verdict, changed) = mutate::<Apps>(&AdmissionRequest::create(json!({"spec": {}})));
//! assert!(verdict.allowed);
//! assert_eq!(changed.unwrap()["spec"]["replicas"], 1);
//! ```
//!
//! During a review the module may read the cluster (`api::get`,
//! `api::list`...) within its permissions; every write and Event is
//! refused with 403 `Forbidden`.

use serde_json::Value;

mod review;
mod spec;

pub use review::{AdmissionRequest, Denied, UserInfo, Validation, Verdict, Warnings};
pub use spec::{ConversionSpec, FailurePolicy, Operation, WebhookSpec, Webhooks};

/// A module's webhooks: what they are called for, and the answers. Every
/// method but [`webhooks`](Webhook::webhooks) has a default that allows
/// (or, for `convert`, refuses), so implement only what the module serves.
pub trait Webhook {
    /// The webhooks the module serves. Called once when it is loaded.
    fn webhooks() -> Webhooks;

    /// The CustomResourceDefinitions a module of webhooks only
    /// (`#[webhook]`) ships, as [`Reconciler::crds`](crate::Reconciler::crds)
    /// does for a reconciler (`#[reconciler(webhook)]` ships the
    /// reconciler's). None by default.
    fn crds() -> Vec<Value> {
        Vec::new()
    }

    /// Validates a create (kubebuilder's `ValidateCreate`).
    fn validate_create(request: &AdmissionRequest) -> Validation {
        let _ = request;
        Ok(Vec::new())
    }

    /// Validates an update; `request.old_object` is the object before it.
    fn validate_update(request: &AdmissionRequest) -> Validation {
        let _ = request;
        Ok(Vec::new())
    }

    /// Validates a delete; `request.old_object` is the object.
    fn validate_delete(request: &AdmissionRequest) -> Validation {
        let _ = request;
        Ok(Vec::new())
    }

    /// Fills in defaults (kubebuilder's `Default`): change `object` in
    /// place; the host sends the API server the JSON patch.
    fn default(request: &AdmissionRequest, object: &mut Value) -> Result<Warnings, Denied> {
        let _ = (request, object);
        Ok(Vec::new())
    }

    /// Converts one object to `api_version` (`group/version`). The SDK
    /// sets `apiVersion` on the result; keep `metadata` as it is.
    fn convert(object: Value, api_version: &str) -> Result<Value, String> {
        let _ = object;
        Err(format!("this module does not convert to {api_version}"))
    }
}

/// Runs the validation `request.operation` calls for (a connect is allowed).
pub fn validate<W: Webhook>(request: &AdmissionRequest) -> Verdict {
    match request.operation {
        Operation::Create => W::validate_create(request),
        Operation::Update => W::validate_update(request),
        Operation::Delete => W::validate_delete(request),
        Operation::Connect => Ok(Vec::new()),
    }
    .into()
}

/// Runs [`Webhook::default`] on the request's object: the verdict, and the
/// changed object if it changed.
pub fn mutate<W: Webhook>(request: &AdmissionRequest) -> (Verdict, Option<Value>) {
    let Some(original) = &request.object else {
        return (Ok(Vec::new()).into(), None);
    };
    let mut object = original.clone();
    match W::default(request, &mut object) {
        Ok(warnings) => {
            let changed = (object != *original).then_some(object);
            (Ok(warnings).into(), changed)
        }
        Err(denied) => (Err(denied).into(), None),
    }
}

/// Converts every object to `api_version` with [`Webhook::convert`]
/// (objects already there are kept), in order.
pub fn convert<W: Webhook>(objects: Vec<Value>, api_version: &str) -> Result<Vec<Value>, String> {
    objects
        .into_iter()
        .map(|object| {
            if object.get("apiVersion").and_then(Value::as_str) == Some(api_version) {
                return Ok(object);
            }
            let mut converted = W::convert(object, api_version)?;
            if let Some(map) = converted.as_object_mut() {
                map.insert(
                    "apiVersion".to_owned(),
                    Value::String(api_version.to_owned()),
                );
            }
            Ok(converted)
        })
        .collect()
}
