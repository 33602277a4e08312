//! RoleBinding and ClusterRoleBinding (rbac.authorization.k8s.io/v1): the
//! `roleRef` (its group defaulted, the kinds it may name, immutable) and
//! the subjects (`ValidateRoleBinding`, `ValidateClusterRoleBinding` and
//! their updates).

use serde_json::{Value, json};

use super::{GROUP, default_subject, validate_subject};
use crate::apis::shape::drop_empty;
use crate::apis::strategy::Rules;
use crate::go::json::encode::go_json;
use crate::machinery::field::{ErrorList, ErrorType, FieldError, Path, error_with_written_value};
use crate::machinery::names::{is_path_segment_name, name_is_path_segment};
use crate::machinery::object::text_at;

/// A RoleBinding's rules.
pub(crate) static ROLE_BINDING: Rules = Rules {
    name: name_is_path_segment,
    default,
    validate: |new| validate(new, true),
    validate_update: |new, old| validate_update(new, old, true),
    validate_status: None,
};

/// A ClusterRoleBinding's rules.
pub(crate) static CLUSTER_ROLE_BINDING: Rules = Rules {
    name: name_is_path_segment,
    default,
    validate: |new| validate(new, false),
    validate_update: |new, old| validate_update(new, old, false),
    validate_status: None,
};

/// `SetDefaults_RoleBinding` and `SetDefaults_Subject`: the RBAC group in
/// `roleRef` and in user and group subjects; `roleRef`'s fields are always
/// written.
fn default(binding: &mut Value) {
    let Some(map) = binding.as_object_mut() else {
        return;
    };
    let role_ref = map.entry("roleRef").or_insert_with(|| json!({}));
    if role_ref.is_null() {
        *role_ref = json!({});
    }
    if let Some(role_ref) = role_ref.as_object_mut() {
        for key in ["apiGroup", "kind", "name"] {
            if role_ref.get(key).is_none_or(Value::is_null) {
                role_ref.insert(key.into(), "".into());
            }
        }
        if role_ref.get("apiGroup").and_then(Value::as_str) == Some("") {
            role_ref.insert("apiGroup".into(), GROUP.into());
        }
    }
    drop_empty(map, &["subjects"]);
    let subjects = map.get_mut("subjects").and_then(Value::as_array_mut);
    for subject in subjects.into_iter().flatten() {
        if let Some(subject) = subject.as_object_mut() {
            default_subject(subject);
        }
    }
}

fn validate(binding: &Value, namespaced: bool) -> ErrorList {
    let mut errors = ErrorList::new();
    let group = text_at(binding, "/roleRef/apiGroup");
    if group != GROUP {
        errors.push(FieldError::not_supported(
            &Path::new(["roleRef", "apiGroup"]),
            group,
            &[GROUP.to_string()],
        ));
    }
    let kind = text_at(binding, "/roleRef/kind");
    let kinds: &[&str] = if namespaced {
        &["Role", "ClusterRole"]
    } else {
        &["ClusterRole"]
    };
    if !kinds.contains(&kind) {
        let supported: Vec<String> = kinds.iter().map(|k| k.to_string()).collect();
        errors.push(FieldError::not_supported(
            &Path::new(["roleRef", "kind"]),
            kind,
            &supported,
        ));
    }
    let name = text_at(binding, "/roleRef/name");
    let at = Path::new(["roleRef", "name"]);
    if name.is_empty() {
        errors.push(FieldError::required(&at, ""));
    }
    for message in is_path_segment_name(name)
        .into_iter()
        .filter(|_| !name.is_empty())
    {
        errors.push(FieldError::invalid(&at, name, message));
    }
    let subjects = binding.get("subjects").and_then(Value::as_array);
    for (i, subject) in subjects.into_iter().flatten().enumerate() {
        errors.extend(validate_subject(
            subject,
            namespaced,
            &Path::new(["subjects"]).index(i),
        ));
    }
    errors
}

fn validate_update(new: &Value, old: &Value, namespaced: bool) -> ErrorList {
    let mut errors = validate(new, namespaced);
    let fields = ["/roleRef/apiGroup", "/roleRef/kind", "/roleRef/name"];
    if fields.iter().any(|f| text_at(new, f) != text_at(old, f)) {
        // The internal RoleRef, as Go writes a struct without JSON tags.
        let written = format!(
            "{{\"APIGroup\":{},\"Kind\":{},\"Name\":{}}}",
            go_json(&json!(text_at(new, fields[0]))),
            go_json(&json!(text_at(new, fields[1]))),
            go_json(&json!(text_at(new, fields[2]))),
        );
        errors.push(error_with_written_value(
            ErrorType::Invalid,
            &Path::new(["roleRef"]),
            &written,
            "cannot change roleRef",
        ));
    }
    errors
}
