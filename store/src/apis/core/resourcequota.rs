//! ResourceQuota (v1): quantities that decode (else `400`), rounded up to
//! milli-units and served canonical (`SetDefaults_ResourceList`), resource
//! names for quota, whole numbers for counted resources, scopes, and scopes
//! that never change (`ValidateResourceQuota`, `ValidateResourceQuotaUpdate`,
//! `ValidateResourceQuotaStatusUpdate`), and a `scopeSelector`'s
//! expressions (`validateScopedResourceSelectorRequirement`).

use serde_json::{Value, json};

use super::resources::{
    default_list, is_quota_standard, list, list_decode_error, quantity, quota_name_errors,
    value_errors,
};
use crate::apis::strategy::Rules;
use crate::machinery::field::{BadValue, ErrorList, FieldError, Path};
use crate::machinery::names::name_is_dns_subdomain;

pub(crate) static RULES: Rules = Rules {
    name: name_is_dns_subdomain,
    default,
    validate,
    validate_update,
    validate_status: Some(validate_status),
};

/// The resource lists of a quota, with Go's names for them in decoding errors.
const LISTS: [(&str, &str); 3] = [
    ("/spec/hard", "ResourceQuotaSpec.spec.hard"),
    ("/status/hard", "ResourceQuotaStatus.status.hard"),
    ("/status/used", "ResourceQuotaStatus.status.used"),
];

/// Why the real server cannot decode this quota, if it cannot.
pub(crate) fn decode(obj: &Value) -> Option<String> {
    LISTS
        .iter()
        .find_map(|(pointer, field)| list_decode_error(obj, pointer, field))
}

fn default(obj: &mut Value) {
    for (pointer, _) in LISTS {
        default_list(obj, pointer);
    }
}

/// `PrepareForCreate`: a new quota's status is empty.
pub(crate) fn prepare_create(obj: &mut Value) {
    if let Some(quota) = obj.as_object_mut() {
        quota.insert("status".into(), json!({}));
    }
}

/// The names and values of the list at `pointer`.
fn list_errors(obj: &Value, pointer: &str, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    for (name, value) in list(obj, pointer) {
        let at = path.key(name);
        errors.extend(quota_name_errors(name, &at));
        errors.extend(value_errors(name, &quantity(value), &at));
    }
    errors
}

/// `IsStandardResourceQuotaScope`.
const SCOPES: &[&str] = &[
    "Terminating",
    "NotTerminating",
    "BestEffort",
    "NotBestEffort",
    "PriorityClass",
    "VolumeAttributesClass",
    "CrossNamespacePodAffinity",
];

/// `IsResourceQuotaScopeValidForResource`.
fn scope_fits(scope: &str, resource: &str) -> bool {
    let pod_count = resource == "pods";
    let pod_compute = [
        "cpu",
        "memory",
        "limits.cpu",
        "limits.memory",
        "requests.cpu",
        "requests.memory",
    ]
    .contains(&resource);
    match scope {
        "Terminating"
        | "NotTerminating"
        | "NotBestEffort"
        | "PriorityClass"
        | "CrossNamespacePodAffinity" => pod_count || pod_compute,
        "BestEffort" => pod_count,
        "VolumeAttributesClass" => {
            ["persistentvolumeclaims", "requests.storage"].contains(&resource)
        }
        _ => true,
    }
}

fn scopes(obj: &Value) -> Vec<Value> {
    obj.pointer("/spec/scopes")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// Scopes that cannot be used together.
const CONFLICTING: [(&str, &str); 2] = [
    ("BestEffort", "NotBestEffort"),
    ("Terminating", "NotTerminating"),
];

/// The names of the hard limits, sorted (as Go walks them).
fn hard_names(obj: &Value) -> Vec<&String> {
    let mut hard: Vec<&String> = list(obj, "/spec/hard")
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    hard.sort();
    hard
}

/// How many of the standard hard limits in `hard` `scope` does not apply
/// to (an error each).
fn misfits(scope: &str, hard: &[&String]) -> usize {
    hard.iter()
        .filter(|name| is_quota_standard(name) && !scope_fits(scope, name))
        .count()
}

/// `ValidateResourceQuotaSpec`: the hard limits and the scopes.
fn validate_spec(obj: &Value) -> ErrorList {
    let mut errors = list_errors(obj, "/spec/hard", &Path::new(["spec", "hard"]));
    let scopes = scopes(obj);
    if scopes.is_empty() {
        return errors;
    }
    let path = Path::new(["spec", "scopes"]);
    let hard = hard_names(obj);
    for scope in scopes.iter().map(|s| s.as_str().unwrap_or_default()) {
        if !SCOPES.contains(&scope) {
            errors.push(FieldError::invalid(
                &path,
                json!(scopes),
                "unsupported scope",
            ));
        }
        for _ in 0..misfits(scope, &hard) {
            errors.push(FieldError::invalid(
                &path,
                json!(scopes),
                "unsupported scope applied to resource",
            ));
        }
    }
    let has = |s: &str| scopes.iter().any(|v| v == s);
    for (a, b) in CONFLICTING {
        if has(a) && has(b) {
            errors.push(FieldError::invalid(
                &path,
                json!(scopes),
                "conflicting scopes",
            ));
        }
    }
    errors
}

/// The internal Go type of a scope selector, as a field error prints it
/// (its JSON, with Go's field names).
fn scope_selector_struct(selector: &Value) -> String {
    let expressions: Vec<String> = selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|e| {
            let text = |k: &str| json!(e.get(k).and_then(Value::as_str).unwrap_or_default());
            format!(
                "{{\"ScopeName\":{},\"Operator\":{},\"Values\":{}}}",
                text("scopeName"),
                text("operator"),
                e.get("values")
                    .filter(|v| v.is_array())
                    .unwrap_or(&Value::Null)
            )
        })
        .collect();
    if selector.get("matchExpressions").is_none_or(Value::is_null) {
        return "{\"MatchExpressions\":null}".into();
    }
    format!("{{\"MatchExpressions\":[{}]}}", expressions.join(","))
}

/// `validateScopedResourceSelectorRequirement`: each expression's scope,
/// that it applies to the hard limits, its operator and values.
fn validate_scope_selector(obj: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let Some(selector) = obj.pointer("/spec/scopeSelector").filter(|s| !s.is_null()) else {
        return errors;
    };
    let path = Path::new(["spec", "scopeSelector", "matchExpressions"]);
    let hard = hard_names(obj);
    let expressions = selector.get("matchExpressions").and_then(Value::as_array);
    let mut seen: Vec<&str> = Vec::new();
    for expression in expressions.into_iter().flatten() {
        let field = |k: &str| {
            expression
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
        };
        let (scope, operator) = (field("scopeName"), field("operator"));
        let values = expression
            .get("values")
            .and_then(Value::as_array)
            .filter(|v| !v.is_empty());
        if !SCOPES.contains(&scope) {
            errors.push(FieldError::invalid(
                &path.child("scopeName"),
                scope,
                "unsupported scope",
            ));
        }
        for _ in 0..misfits(scope, &hard) {
            errors.push(FieldError::invalid(
                &path,
                BadValue::Struct(scope_selector_struct(selector)),
                "unsupported scope applied to resource",
            ));
        }
        if matches!(
            scope,
            "BestEffort"
                | "NotBestEffort"
                | "Terminating"
                | "NotTerminating"
                | "CrossNamespacePodAffinity"
        ) && operator != "Exists"
        {
            errors.push(FieldError::invalid(
                &path.child("operator"),
                operator,
                "must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
            ));
        }
        match operator {
            "In" | "NotIn" if values.is_none() => errors.push(FieldError::required(
                &path.child("values"),
                "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
            )),
            "In" | "NotIn" => {}
            "Exists" | "DoesNotExist" => {
                if let Some(values) = values {
                    errors.push(FieldError::invalid(
                        &path.child("values"),
                        json!(values),
                        "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
                    ));
                }
            }
            _ => errors.push(FieldError::invalid(
                &path.child("operator"),
                operator,
                "not a valid selector operator",
            )),
        }
        seen.push(scope);
    }
    for (a, b) in CONFLICTING {
        if seen.contains(&a) && seen.contains(&b) {
            // (`spec.scopes`, as Go's validation names it: null when empty.)
            let scopes = scopes(obj);
            errors.push(FieldError::invalid(
                &path,
                if scopes.is_empty() {
                    Value::Null
                } else {
                    json!(scopes)
                },
                "conflicting scopes",
            ));
        }
    }
    errors
}

fn validate_status_lists(obj: &Value) -> ErrorList {
    let mut errors = list_errors(obj, "/status/hard", &Path::new(["status", "hard"]));
    errors.extend(list_errors(
        obj,
        "/status/used",
        &Path::new(["status", "used"]),
    ));
    errors
}

/// `WarningsOnCreate`: a request above its limit (`requests.cpu` or `cpu`
/// against `limits.cpu`, and so on).
pub(crate) fn warnings(obj: &Value) -> Vec<String> {
    let hard = |name: &str| {
        obj.pointer("/spec/hard")
            .and_then(|h| h.get(name))
            .map(quantity)
    };
    let mut warnings = Vec::new();
    for resource in ["cpu", "memory", "storage", "ephemeral-storage"] {
        let mut request_name = format!("requests.{resource}");
        let mut request = hard(&request_name);
        if request.is_none() && (resource == "cpu" || resource == "memory") {
            request = hard(resource);
            request_name = resource.to_string();
        }
        let limit_name = format!("limits.{resource}");
        if let (Some(request), Some(limit)) = (request, hard(&limit_name))
            && request > limit
        {
            warnings.push(format!(
                "ResourceQuota {request_name} ({request}) should be less than {limit_name} ({limit})"
            ));
        }
    }
    warnings
}

fn validate(obj: &Value) -> ErrorList {
    let mut errors = validate_spec(obj);
    errors.extend(validate_scope_selector(obj));
    errors.extend(validate_status_lists(obj));
    errors
}

fn validate_update(new: &Value, old: &Value) -> ErrorList {
    let mut errors = validate_spec(new);
    errors.extend(validate_scope_selector(new));
    let set = |o: &Value| {
        let mut s: Vec<String> = scopes(o)
            .iter()
            .map(|v| v.as_str().unwrap_or_default().to_string())
            .collect();
        s.sort();
        s.dedup();
        s
    };
    if set(new) != set(old) {
        errors.push(FieldError::invalid(
            &Path::new(["spec", "scopes"]),
            json!(scopes(new)),
            "field is immutable",
        ));
    }
    errors
}

fn validate_status(new: &Value, _old: &Value) -> ErrorList {
    validate_status_lists(new)
}
