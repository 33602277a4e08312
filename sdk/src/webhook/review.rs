//! One review: the admission request a webhook is called with (who asks,
//! the objects, typed access to them) and what it answers (allowed with
//! warnings, or denied with a message and a code).

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::spec::Operation;
use crate::types::{Error, Gvk};

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
