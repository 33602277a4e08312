//! API errors, shaped like `metav1.Status` and worded as the real server words them.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use crate::go::strconv::go_quote;
use crate::machinery::field::{FieldError, aggregate};
use crate::resource::info::ResourceInfo;

/// An API error, shaped like `metav1.Status`.
#[derive(Clone, Debug, PartialEq)]
pub struct Status {
    /// HTTP status code.
    pub code: u16,
    /// Machine-readable reason, such as `NotFound`.
    pub reason: String,
    /// Human-readable message, as the real server words it.
    pub message: String,
    /// `details` (name, group, kind, causes), when the real server sends them.
    pub details: Option<Value>,
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.reason, self.code, self.message)
    }
}

impl std::error::Error for Status {}

impl Status {
    /// A status with the given code, reason and message and no details.
    pub fn new(code: u16, reason: &str, message: impl Into<String>) -> Status {
        Status {
            code,
            reason: reason.into(),
            message: message.into(),
            details: None,
        }
    }

    /// This status as the JSON `metav1.Status` the real server writes.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("kind".into(), json!("Status"));
        m.insert("apiVersion".into(), json!("v1"));
        m.insert("metadata".into(), json!({}));
        m.insert("status".into(), json!("Failure"));
        m.insert("message".into(), json!(self.message));
        if !self.reason.is_empty() {
            m.insert("reason".into(), json!(self.reason));
        }
        if let Some(d) = &self.details {
            m.insert("details".into(), d.clone());
        }
        m.insert("code".into(), json!(self.code));
        Value::Object(m)
    }

    pub(crate) fn details_for(res: &ResourceInfo, name: &str) -> Value {
        let mut d = Map::new();
        d.insert("name".into(), json!(name));
        if !res.group.is_empty() {
            d.insert("group".into(), json!(res.group));
        }
        d.insert("kind".into(), json!(res.plural));
        Value::Object(d)
    }

    /// 404 NotFound for `name` of `res`.
    pub fn not_found(res: &ResourceInfo, name: &str) -> Status {
        Status {
            code: 404,
            reason: "NotFound".into(),
            message: format!("{} \"{}\" not found", res.qualified_plural(), name),
            details: Some(Status::details_for(res, name)),
        }
    }

    /// 404 for a resource the server does not serve.
    pub fn resource_not_found() -> Status {
        Status {
            code: 404,
            reason: "NotFound".into(),
            message: "the server could not find the requested resource".into(),
            details: Some(json!({})),
        }
    }

    /// 409 AlreadyExists.
    pub fn already_exists(res: &ResourceInfo, name: &str) -> Status {
        Status {
            code: 409,
            reason: "AlreadyExists".into(),
            message: format!("{} \"{}\" already exists", res.qualified_plural(), name),
            details: Some(Status::details_for(res, name)),
        }
    }

    /// 409 Conflict on a stale resourceVersion.
    pub fn conflict(res: &ResourceInfo, name: &str) -> Status {
        Status {
            code: 409,
            reason: "Conflict".into(),
            message: format!(
                "Operation cannot be fulfilled on {} \"{}\": the object has been modified; please apply your changes to the latest version and try again",
                res.qualified_plural(),
                name
            ),
            details: Some(Status::details_for(res, name)),
        }
    }

    /// 403 Forbidden of `name` of `res`, for the reason given
    /// (`NewForbidden`).
    pub fn forbidden(res: &ResourceInfo, name: &str, why: &str) -> Status {
        Status {
            code: 403,
            reason: "Forbidden".into(),
            message: format!("{} \"{name}\" is forbidden: {why}", res.qualified_plural()),
            details: Some(Status::details_for(res, name)),
        }
    }

    /// 409 Conflict of a write, for the reason given (`NewConflict`).
    pub fn conflict_because(res: &ResourceInfo, name: &str, why: &str) -> Status {
        Status {
            code: 409,
            reason: "Conflict".into(),
            message: format!(
                "Operation cannot be fulfilled on {} \"{name}\": {why}",
                res.qualified_plural()
            ),
            details: Some(Status::details_for(res, name)),
        }
    }

    /// 409 Conflict of a replace naming another uid than the stored
    /// object's: the storage's precondition, in its words (the object's
    /// etcd key, its uid and the one sent).
    pub fn uid_precondition_failed(
        res: &ResourceInfo,
        namespace: &str,
        name: &str,
        sent: &str,
        stored: &str,
    ) -> Status {
        Status::storage_precondition_failed(res, namespace, name, "UID", sent, stored)
    }

    /// 409 Conflict of a write whose storage precondition (`what`: `UID`
    /// or `ResourceVersion`) does not hold, in the storage's words (the
    /// object's etcd key, the value stored and the one sent).
    pub fn storage_precondition_failed(
        res: &ResourceInfo,
        namespace: &str,
        name: &str,
        what: &str,
        sent: &str,
        stored: &str,
    ) -> Status {
        // Built-in kinds are kept under their resource, custom resources
        // under their group too; Services under `services/specs`.
        let key = match (res.group.as_str(), res.plural.as_str()) {
            ("", "services") => "services/specs".to_string(),
            _ if res.custom.is_some() => format!("{}/{}", res.group, res.plural),
            _ => res.plural.clone(),
        };
        let key = if namespace.is_empty() {
            format!("/registry/{key}/{name}")
        } else {
            format!("/registry/{key}/{namespace}/{name}")
        };
        Status {
            code: 409,
            reason: "Conflict".into(),
            message: format!(
                "Operation cannot be fulfilled on {} \"{name}\": StorageError: invalid object, Code: 4, Key: {key}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: {what} in precondition: {sent}, {what} in object meta: {stored}",
                res.qualified_plural()
            ),
            details: Some(Status::details_for(res, name)),
        }
    }

    /// 409 Conflict of a delete whose precondition (`uid` or
    /// `resourceVersion`, `what` naming it `UID` or `ResourceVersion`)
    /// does not hold, as `rest.BeforeDelete` words it: on the kind.
    pub fn precondition_failed(
        res: &ResourceInfo,
        name: &str,
        what: &str,
        wanted: &str,
        actual: &str,
    ) -> Status {
        let qualified = if res.group.is_empty() {
            res.kind.clone()
        } else {
            format!("{}.{}", res.kind, res.group)
        };
        let why = if what == "UID" {
            "The object might have been deleted and then recreated"
        } else {
            "The object might have been modified"
        };
        let mut details = Map::new();
        details.insert("name".into(), json!(name));
        if !res.group.is_empty() {
            details.insert("group".into(), json!(res.group));
        }
        details.insert("kind".into(), json!(res.kind));
        Status {
            code: 409,
            reason: "Conflict".into(),
            message: format!(
                "Operation cannot be fulfilled on {qualified} \"{name}\": the {what} in the precondition ({wanted}) does not match the {what} in record ({actual}). {why}"
            ),
            details: Some(Value::Object(details)),
        }
    }

    /// The 500 of a create that gives a resourceVersion (storage's
    /// `ErrResourceVersionSetOnCreate`, a plain error: no reason).
    pub fn version_set_on_create() -> Status {
        Status::new(
            500,
            "",
            "resourceVersion should not be set on objects to be created",
        )
    }

    /// 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> Status {
        Status::new(400, "BadRequest", message)
    }

    /// 400 BadRequest of a body the decoder cannot read into its kind
    /// (`Kind in version "v1" cannot be handled as a Kind: why`).
    pub(crate) fn cannot_handle(kind: &str, version: &str, why: &str) -> Status {
        Status::bad_request(format!(
            "{kind} in version \"{version}\" cannot be handled as a {kind}: {why}"
        ))
    }

    /// 422 Invalid with one cause.
    pub fn invalid(
        res: &ResourceInfo,
        name: &str,
        field: &str,
        cause_reason: &str,
        detail: &str,
    ) -> Status {
        Status::invalid_causes(res, name, &[(field, cause_reason, detail)])
    }

    /// 422 Invalid with several causes `(field, reason, message)`, as
    /// `apierrors.NewInvalid` words it: the kind qualified by its group,
    /// each message once in the aggregate.
    pub fn invalid_causes(res: &ResourceInfo, name: &str, causes: &[(&str, &str, &str)]) -> Status {
        let mut seen = HashSet::new();
        let msgs: Vec<String> = causes
            .iter()
            .map(|(f, _, m)| format!("{f}: {m}"))
            .filter(|m| seen.insert(m.clone()))
            .collect();
        let joined = if msgs.len() == 1 {
            msgs[0].clone()
        } else {
            format!("[{}]", msgs.join(", "))
        };
        let mut d = Map::new();
        d.insert("name".into(), json!(name));
        if !res.group.is_empty() {
            d.insert("group".into(), json!(res.group));
        }
        d.insert("kind".into(), json!(res.kind));
        d.insert(
            "causes".into(),
            Value::Array(
                causes
                    .iter()
                    .map(|(f, r, m)| json!({"reason": r, "message": m, "field": f}))
                    .collect(),
            ),
        );
        let qualified = if res.group.is_empty() {
            res.kind.clone()
        } else {
            format!("{}.{}", res.kind, res.group)
        };
        Status {
            code: 422,
            reason: "Invalid".into(),
            message: format!("{qualified} {} is invalid: {joined}", go_quote(name)),
            details: Some(Value::Object(d)),
        }
    }

    /// 410 Expired for a watch or list from a version older than the history.
    pub fn expired(message: impl Into<String>) -> Status {
        Status::new(410, "Expired", message)
    }

    /// A 500 without a reason: an error the storage returns that is not a
    /// Status (`ErrorToAPIStatus` of a plain error).
    pub fn unknown(message: impl Into<String>) -> Status {
        Status {
            code: 500,
            reason: String::new(),
            message: message.into(),
            details: None,
        }
    }

    /// 500 InternalError.
    pub fn internal(message: impl Into<String>) -> Status {
        // `NewInternalError`: the error is the one cause too.
        let message = message.into();
        Status {
            code: 500,
            reason: "InternalError".into(),
            details: Some(serde_json::json!({"causes": [{"message": message}]})),
            message: format!("Internal error occurred: {message}"),
        }
    }

    /// 429 TooManyRequests, as sent with a `Retry-After` header.
    pub fn too_many_requests(retry_after_seconds: u64) -> Status {
        Status {
            code: 429,
            reason: "TooManyRequests".into(),
            message: "Too many requests, please try again later.".into(),
            details: Some(json!({"retryAfterSeconds": retry_after_seconds})),
        }
    }

    /// 415 for a strategic merge patch on a custom resource.
    pub fn unsupported_patch() -> Status {
        Status::new(
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
        )
    }

    pub(crate) fn json_patch_failed() -> Status {
        Status {
            code: 422,
            reason: "Invalid".into(),
            message: "the server rejected our request due to an error in our request".into(),
            details: Some(json!({})),
        }
    }
}

impl From<rekon_rules::SelectorError> for Status {
    /// A malformed label selector: the 400 the real server answers.
    fn from(error: rekon_rules::SelectorError) -> Status {
        Status::bad_request(error.0)
    }
}

impl Status {
    /// The `422 Invalid` Status of `errors` about the object `name` of
    /// `group`/`kind` (`apierrors.NewInvalid`).
    pub fn from_field_errors(group: &str, kind: &str, name: &str, errors: &[FieldError]) -> Status {
        let qualified = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        let message = if errors.is_empty() {
            format!("{qualified} {} is invalid", go_quote(name))
        } else {
            format!(
                "{qualified} {} is invalid: {}",
                go_quote(name),
                aggregate(errors)
            )
        };
        let causes: Vec<Value> = errors
            .iter()
            .map(|e| json!({"reason": e.kind.reason(), "message": e.body(), "field": e.field.to_string()}))
            .collect();
        let mut details = Map::new();
        details.insert("name".into(), json!(name));
        if !group.is_empty() {
            details.insert("group".into(), json!(group));
        }
        details.insert("kind".into(), json!(kind));
        details.insert("causes".into(), Value::Array(causes));
        Status {
            code: 422,
            reason: "Invalid".into(),
            message,
            details: Some(Value::Object(details)),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::Status;
    use crate::machinery::field::{FieldError, Path};

    #[test]
    fn errors_render_as_the_real_server_renders_them() {
        let size = Path::new(["spec", "size"]);
        let errors = vec![
            FieldError::not_supported(&size, json!("huge"), &["small".into(), "medium".into()]),
            FieldError::required(&Path::new(["spec", "image"]), ""),
            FieldError::too_many(&Path::new(["spec", "tags"]), 4, 3),
            FieldError::invalid(&Path::none(), Value::Null, "some rules were not checked"),
            FieldError::too_long(&Path::new(["spec", "name"]), 1),
        ];
        let status = Status::from_field_errors("fid.example.org", "Widget", "w", &errors);
        assert_eq!(status.code, 422);
        assert_eq!(
            status.message,
            "Widget.fid.example.org \"w\" is invalid: [spec.size: Unsupported value: \"huge\": supported values: \"small\", \"medium\", \
             spec.image: Required value, spec.tags: Too many: 4: must have at most 3 items, \
             <nil>: Invalid value: null: some rules were not checked, spec.name: Too long: may not be more than 1 byte]"
        );
        let causes = &status.details.as_ref().unwrap()["causes"];
        assert_eq!(causes[0]["reason"], "FieldValueNotSupported");
        assert_eq!(causes[3]["field"], "<nil>");
        // One error: no brackets; repeats are said once in the message.
        let twice = vec![errors[1].clone(), errors[1].clone()];
        let status = Status::from_field_errors("", "ConfigMap", "c", &twice);
        assert_eq!(
            status.message,
            "ConfigMap \"c\" is invalid: spec.image: Required value"
        );
        assert_eq!(
            status.details.unwrap()["causes"].as_array().unwrap().len(),
            2
        );
        assert_eq!(
            Path::new(["spec"]).key("a.b").index(2).to_string(),
            "spec[a.b][2]"
        );
    }
}
