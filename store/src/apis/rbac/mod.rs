//! The RBAC group (`pkg/apis/rbac`): roles and their bindings, whose names
//! only need to be path segments (`ValidateRBACName`: `system:foo` is a
//! name), and the checks they share: a policy rule (`ValidatePolicyRule`)
//! and a binding's subject (`ValidateRoleBindingSubject`, with the
//! defaulted `apiGroup` of `SetDefaults_Subject`).

pub(crate) mod role;
pub(crate) mod rolebinding;

use serde_json::{Map, Value};

use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::names::name_is_dns_subdomain;

/// The group of roles and bindings, the only one a `roleRef` may name.
const GROUP: &str = "rbac.authorization.k8s.io";

/// A list of strings of `map` at `key` (none when absent or not a list).
fn strings<'a>(map: &'a Value, key: &str) -> Vec<&'a Value> {
    map.get(key)
        .and_then(Value::as_array)
        .map(|items| items.iter().collect())
        .unwrap_or_default()
}

/// `ValidatePolicyRule`: verbs always; URLs only in cluster roles and never
/// with resources; otherwise groups and resources.
fn validate_policy_rule(rule: &Value, namespaced: bool, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    if strings(rule, "verbs").is_empty() {
        errors.push(FieldError::required(
            &path.child("verbs"),
            "verbs must contain at least one value",
        ));
    }
    let urls = strings(rule, "nonResourceURLs");
    if !urls.is_empty() {
        let value = Value::Array(urls.into_iter().cloned().collect());
        if namespaced {
            errors.push(FieldError::invalid(
                &path.child("nonResourceURLs"),
                value.clone(),
                "namespaced rules cannot apply to non-resource URLs",
            ));
        }
        if ["apiGroups", "resources", "resourceNames"]
            .iter()
            .any(|key| !strings(rule, key).is_empty())
        {
            errors.push(FieldError::invalid(
                &path.child("nonResourceURLs"),
                value,
                "rules cannot apply to both regular resources and non-resource URLs",
            ));
        }
        return errors;
    }
    if strings(rule, "apiGroups").is_empty() {
        errors.push(FieldError::required(
            &path.child("apiGroups"),
            "resource rules must supply at least one api group",
        ));
    }
    if strings(rule, "resources").is_empty() {
        errors.push(FieldError::required(
            &path.child("resources"),
            "resource rules must supply at least one resource",
        ));
    }
    errors
}

/// `ValidatePolicyRule` of each of `obj`'s rules.
fn validate_rules(obj: &Value, namespaced: bool) -> ErrorList {
    strings(obj, "rules")
        .into_iter()
        .enumerate()
        .flat_map(|(i, rule)| {
            validate_policy_rule(rule, namespaced, &Path::new(["rules"]).index(i))
        })
        .collect()
}

/// `SetDefaults_Subject`: users and groups are of the RBAC group; an empty
/// group is not written (`omitempty`).
fn default_subject(subject: &mut Map<String, Value>) {
    // `name` and `kind` are always written.
    for key in ["kind", "name"] {
        if subject.get(key).is_none_or(Value::is_null) {
            subject.insert(key.into(), "".into());
        }
    }
    let empty = subject
        .get("apiGroup")
        .is_none_or(|g| g.is_null() || g.as_str() == Some(""));
    if !empty {
        return;
    }
    match subject.get("kind").and_then(Value::as_str) {
        Some("User" | "Group") => {
            subject.insert("apiGroup".into(), GROUP.into());
        }
        _ => {
            subject.remove("apiGroup");
        }
    }
}

/// `ValidateRoleBindingSubject`: a name, and per kind its group (and a
/// service account's name and, outside a namespace, its namespace).
fn validate_subject(subject: &Value, namespaced: bool, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let text = |key: &str| subject.get(key).and_then(Value::as_str).unwrap_or_default();
    let (name, group) = (text("name"), text("apiGroup"));
    if name.is_empty() {
        errors.push(FieldError::required(&path.child("name"), ""));
    }
    match text("kind") {
        "ServiceAccount" => {
            if !name.is_empty() {
                for message in name_is_dns_subdomain(name, false) {
                    errors.push(FieldError::invalid(&path.child("name"), name, message));
                }
            }
            if !group.is_empty() {
                errors.push(FieldError::not_supported(
                    &path.child("apiGroup"),
                    group,
                    &[String::new()],
                ));
            }
            if !namespaced && text("namespace").is_empty() {
                errors.push(FieldError::required(&path.child("namespace"), ""));
            }
        }
        "User" | "Group" => {
            if group != GROUP {
                errors.push(FieldError::not_supported(
                    &path.child("apiGroup"),
                    group,
                    &[GROUP.to_string()],
                ));
            }
        }
        other => errors.push(FieldError::not_supported(
            &path.child("kind"),
            other,
            &["ServiceAccount".into(), "User".into(), "Group".into()],
        )),
    }
    errors
}
