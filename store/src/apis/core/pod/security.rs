//! Security contexts, the pod's (`validatePodSpecSecurityContext`) and a
//! container's (`ValidateSecurityContext`): user and group ids in range,
//! seccomp profiles, proc mounts, the fsGroup change policy.

use serde_json::Value;

use crate::machinery::field::{ErrorList, FieldError, Path};

fn strings(values: &[&str]) -> Vec<String> {
    values.iter().map(|v| v.to_string()).collect()
}

/// `IsValidUserID` / `IsValidGroupID` of the field `key`, when set.
fn id(context: &Value, key: &str, path: &Path) -> ErrorList {
    match context.get(key).and_then(Value::as_i64) {
        Some(value) if !(0..=i64::from(i32::MAX)).contains(&value) => vec![FieldError::invalid(
            &path.child(key),
            value,
            "must be between 0 and 2147483647, inclusive",
        )],
        _ => ErrorList::new(),
    }
}

/// `validateSeccompProfileField`.
fn seccomp(context: &Value, path: &Path) -> ErrorList {
    let Some(profile) = context.get("seccompProfile").filter(|p| p.is_object()) else {
        return ErrorList::new();
    };
    let at = path.child("seccompProfile");
    let mut errors = ErrorList::new();
    let kind = profile
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match kind {
        "Localhost" | "RuntimeDefault" | "Unconfined" => {}
        "" => errors.push(FieldError::required(
            &at.child("type"),
            "type is required when seccompProfile is set",
        )),
        other => errors.push(FieldError::not_supported(
            &at.child("type"),
            other,
            &strings(&["Localhost", "RuntimeDefault", "Unconfined"]),
        )),
    }
    let local = profile.get("localhostProfile").filter(|p| !p.is_null());
    if kind == "Localhost" && local.is_none() {
        errors.push(FieldError::required(
            &at.child("localhostProfile"),
            "must be set when seccomp type is Localhost",
        ));
    }
    errors
}

/// The pod's security context (with the spec's host namespaces).
pub(crate) fn validate_pod_security(spec: &Value, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let Some(context) = spec.get("securityContext").filter(|c| c.is_object()) else {
        return errors;
    };
    let at = path.child("securityContext");
    for key in ["fsGroup", "runAsUser", "runAsGroup"] {
        errors.extend(id(context, key, &at));
    }
    for (i, group) in context
        .get("supplementalGroups")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        if let Some(group) = group.as_i64()
            && !(0..=i64::from(i32::MAX)).contains(&group)
        {
            errors.push(FieldError::invalid(
                &at.child("supplementalGroups").index(i),
                group,
                "must be between 0 and 2147483647, inclusive",
            ));
        }
    }
    if spec.get("shareProcessNamespace") == Some(&Value::Bool(true))
        && spec.get("hostPID") == Some(&Value::Bool(true))
    {
        errors.push(FieldError::invalid(
            &at.child("shareProcessNamespace"),
            Value::Bool(true),
            "ShareProcessNamespace and HostPID cannot both be enabled",
        ));
    }
    if let Some(policy) = context.get("fsGroupChangePolicy").and_then(Value::as_str)
        && policy != "Always"
        && policy != "OnRootMismatch"
    {
        errors.push(FieldError::not_supported(
            &at.child("fsGroupChangePolicy"),
            policy,
            &strings(&["Always", "OnRootMismatch"]),
        ));
    }
    errors.extend(seccomp(context, &at));
    errors
}

/// A container's security context.
pub(crate) fn validate_container_security(container: &Value, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let Some(context) = container.get("securityContext").filter(|c| c.is_object()) else {
        return errors;
    };
    let at = path.child("securityContext");
    for key in ["runAsUser", "runAsGroup"] {
        errors.extend(id(context, key, &at));
    }
    if let Some(mount) = context.get("procMount").and_then(Value::as_str)
        && mount != "Default"
        && mount != "Unmasked"
    {
        errors.push(FieldError::not_supported(
            &at.child("procMount"),
            mount,
            &strings(&["Default", "Unmasked"]),
        ));
    }
    errors.extend(seccomp(context, &at));
    errors
}
