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

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::{Error, Gvk, Permission};

/// The operations an admission webhook may be called for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operation {
    /// An object is created.
    Create,
    /// An object (or a subresource) is replaced or patched.
    Update,
    /// An object is deleted.
    Delete,
    /// A connect request (exec, attach, port-forward, proxy).
    Connect,
}

/// What the API server does when a webhook cannot answer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FailurePolicy {
    /// Refuse the request (the default, as in Kubernetes).
    #[default]
    Fail,
    /// Let the request through.
    Ignore,
}

/// One admission webhook: what it is called for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookSpec {
    /// Name, unique within the module (`[a-z0-9-]`).
    pub name: String,
    /// The kinds it is called for (`version` may be `*`).
    pub kinds: Vec<Gvk>,
    /// The operations it is called for (empty: create and update).
    pub operations: Vec<Operation>,
    /// Subresources it is also called for (`status`, `scale`, `*`).
    pub sub_resources: Vec<String>,
    /// Only objects in namespaces matching this label selector.
    pub namespace_selector: Option<String>,
    /// Only objects matching this label selector.
    pub object_selector: Option<String>,
    /// What happens when the webhook fails.
    pub failure_policy: FailurePolicy,
    /// How long the API server waits, in seconds (1-30; default 10).
    pub timeout_seconds: Option<u32>,
}

impl WebhookSpec {
    /// A webhook named `name` for `kind`, on create and update, failing closed.
    pub fn new(name: impl Into<String>, kind: Gvk) -> Self {
        WebhookSpec {
            name: name.into(),
            kinds: vec![kind],
            operations: Vec::new(),
            sub_resources: Vec::new(),
            namespace_selector: None,
            object_selector: None,
            failure_policy: FailurePolicy::Fail,
            timeout_seconds: None,
        }
    }

    /// Also called for `kind`.
    #[must_use]
    pub fn kind(mut self, kind: Gvk) -> Self {
        self.kinds.push(kind);
        self
    }

    /// Called for these operations (instead of create and update).
    #[must_use]
    pub fn operations(mut self, operations: impl IntoIterator<Item = Operation>) -> Self {
        self.operations = operations.into_iter().collect();
        self
    }

    /// Also called for this subresource (`status`, `scale`, `*`).
    #[must_use]
    pub fn sub_resource(mut self, sub_resource: impl Into<String>) -> Self {
        self.sub_resources.push(sub_resource.into());
        self
    }

    /// Only for objects in namespaces matching `selector`.
    #[must_use]
    pub fn namespace_selector(mut self, selector: impl Into<String>) -> Self {
        self.namespace_selector = Some(selector.into());
        self
    }

    /// Only for objects matching `selector`.
    #[must_use]
    pub fn object_selector(mut self, selector: impl Into<String>) -> Self {
        self.object_selector = Some(selector.into());
        self
    }

    /// What happens when the webhook fails.
    #[must_use]
    pub fn failure_policy(mut self, policy: FailurePolicy) -> Self {
        self.failure_policy = policy;
        self
    }

    /// How long the API server waits, in seconds (1-30).
    #[must_use]
    pub fn timeout_seconds(mut self, seconds: u32) -> Self {
        self.timeout_seconds = Some(seconds);
        self
    }
}

/// A CustomResourceDefinition whose versions the module converts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConversionSpec {
    /// The CRD's group and kind (`version` is ignored).
    pub kind: Gvk,
    /// Every version the module converts between.
    pub versions: Vec<String>,
}

/// The webhooks a module serves: returned by [`Webhook::webhooks`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Webhooks {
    /// Validating webhooks.
    pub validating: Vec<WebhookSpec>,
    /// Mutating (defaulting) webhooks.
    pub mutating: Vec<WebhookSpec>,
    /// CRDs the module converts.
    pub conversions: Vec<ConversionSpec>,
    /// For a module that only serves webhooks (`#[webhook]`): its name.
    /// A module that also reconciles takes its name from its manifest.
    pub name: String,
    /// For a module that only serves webhooks: its version.
    pub version: String,
    /// For a module that only serves webhooks: what it may read.
    pub permissions: Vec<Permission>,
}

impl Webhooks {
    /// No webhooks yet.
    pub fn new() -> Self {
        Webhooks::default()
    }

    /// For a module that only serves webhooks: its name and version.
    pub fn named(name: impl Into<String>, version: impl Into<String>) -> Self {
        Webhooks {
            name: name.into(),
            version: version.into(),
            ..Webhooks::default()
        }
    }

    /// Adds a validating webhook.
    #[must_use]
    pub fn validating(mut self, webhook: WebhookSpec) -> Self {
        self.validating.push(webhook);
        self
    }

    /// Adds a mutating (defaulting) webhook.
    #[must_use]
    pub fn mutating(mut self, webhook: WebhookSpec) -> Self {
        self.mutating.push(webhook);
        self
    }

    /// Converts the CRD of `kind` between `versions`.
    #[must_use]
    pub fn conversion<S: Into<String>>(
        mut self,
        kind: Gvk,
        versions: impl IntoIterator<Item = S>,
    ) -> Self {
        self.conversions.push(ConversionSpec {
            kind,
            versions: versions.into_iter().map(Into::into).collect(),
        });
        self
    }

    /// For a module that only serves webhooks: grants it `permission`
    /// (reads only: writes are refused during reviews).
    #[must_use]
    pub fn permission(mut self, permission: Permission) -> Self {
        self.permissions.push(permission);
        self
    }
}

/// Who made the request being admitted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserInfo {
    /// The user's name.
    pub username: String,
    /// The user's uid.
    pub uid: String,
    /// The user's groups.
    pub groups: Vec<String>,
    /// Other attributes from the authenticator.
    pub extra: Vec<(String, Vec<String>)>,
}

/// One admission request.
#[derive(Clone, Debug, PartialEq)]
pub struct AdmissionRequest {
    /// The request's uid.
    pub uid: String,
    /// Which of the module's webhooks is called.
    pub webhook: String,
    /// The kind of the object.
    pub kind: Gvk,
    /// The resource (plural name), e.g. `apps`.
    pub resource: String,
    /// The subresource, e.g. `status`; `None` for the object itself.
    pub sub_resource: Option<String>,
    /// The namespace; `None` for cluster-scoped objects.
    pub namespace: Option<String>,
    /// The object's name.
    pub name: String,
    /// The operation.
    pub operation: Operation,
    /// Who asks.
    pub user_info: UserInfo,
    /// The new object (on create and update).
    pub object: Option<Value>,
    /// The object before the request (on update and delete).
    pub old_object: Option<Value>,
    /// Nothing will be persisted: make no side effects.
    pub dry_run: bool,
    /// The operation's options (CreateOptions, UpdateOptions, DeleteOptions).
    pub options: Option<Value>,
}

impl AdmissionRequest {
    fn of(operation: Operation, object: Option<Value>, old_object: Option<Value>) -> Self {
        let any = object.as_ref().or(old_object.as_ref());
        let text = |pointer: &str| {
            any.and_then(|o| o.pointer(pointer))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let kind = any
            .and_then(Gvk::from_object)
            .unwrap_or_else(|| Gvk::new("", "", ""));
        AdmissionRequest {
            uid: "test".to_owned(),
            webhook: String::new(),
            resource: crate::types::plural(&kind.kind),
            kind,
            sub_resource: None,
            namespace: text("/metadata/namespace"),
            name: text("/metadata/name").unwrap_or_default(),
            operation,
            user_info: UserInfo::default(),
            object,
            old_object,
            dry_run: false,
            options: None,
        }
    }

    /// A create of `object` (for tests).
    pub fn create(object: Value) -> Self {
        Self::of(Operation::Create, Some(object), None)
    }

    /// An update from `old` to `new` (for tests).
    pub fn update(old: Value, new: Value) -> Self {
        Self::of(Operation::Update, Some(new), Some(old))
    }

    /// A delete of `old` (for tests).
    pub fn delete(old: Value) -> Self {
        Self::of(Operation::Delete, None, Some(old))
    }

    /// The same request for the webhook `name`.
    #[must_use]
    pub fn for_webhook(mut self, name: impl Into<String>) -> Self {
        self.webhook = name.into();
        self
    }

    /// The new object decoded into `T` (`None` on delete).
    pub fn object_as<T: DeserializeOwned>(&self) -> Result<Option<T>, Error> {
        decode(self.object.as_ref())
    }

    /// The old object decoded into `T` (`None` on create).
    pub fn old_object_as<T: DeserializeOwned>(&self) -> Result<Option<T>, Error> {
        decode(self.old_object.as_ref())
    }
}

fn decode<T: DeserializeOwned>(value: Option<&Value>) -> Result<Option<T>, Error> {
    value
        .map(|v| {
            serde_json::from_value(v.clone())
                .map_err(|e| Error::permanent(format!("the object does not decode: {e}")))
        })
        .transpose()
}

/// A denial: the message kubectl shows, and the HTTP code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Denied {
    /// Why the request is refused.
    pub message: String,
    /// The HTTP status code (403 Forbidden by default).
    pub code: u16,
    /// Warnings shown with the denial.
    pub warnings: Warnings,
}

impl Denied {
    /// Refused with 403 Forbidden.
    pub fn new(message: impl Into<String>) -> Self {
        Denied {
            message: message.into(),
            code: 403,
            warnings: Vec::new(),
        }
    }

    /// Refused with 422 Invalid: the object is not acceptable.
    pub fn invalid(message: impl Into<String>) -> Self {
        Denied {
            code: 422,
            ..Denied::new(message)
        }
    }

    /// The same denial with warnings.
    #[must_use]
    pub fn with_warnings(mut self, warnings: Warnings) -> Self {
        self.warnings = warnings;
        self
    }
}

/// Warnings shown to the user (kubectl prints `Warning: ...`).
pub type Warnings = Vec<String>;

/// What a validation answers: allowed with warnings, or denied.
pub type Validation = Result<Warnings, Denied>;

/// A webhook's answer as it goes back to the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The request may go on.
    pub allowed: bool,
    /// Why not.
    pub message: Option<String>,
    /// The HTTP code of a denial.
    pub code: Option<u16>,
    /// Warnings.
    pub warnings: Warnings,
}

impl From<Validation> for Verdict {
    fn from(validation: Validation) -> Self {
        match validation {
            Ok(warnings) => Verdict {
                allowed: true,
                message: None,
                code: None,
                warnings,
            },
            Err(denied) => Verdict {
                allowed: false,
                message: Some(denied.message),
                code: Some(denied.code),
                warnings: denied.warnings,
            },
        }
    }
}

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
