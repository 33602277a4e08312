//! PriorityClass (scheduling.k8s.io/v1): `preemptionPolicy:
//! PreemptLowerPriority` by default (`SetDefaults_PriorityClass`), the
//! `system-` names reserved for the system classes and user values capped
//! (`ValidatePriorityClass`), its value and preemption policy immutable
//! (`ValidatePriorityClassUpdate`), and the system classes
//! (`SystemPriorityClasses` in `pkg/apis/scheduling/v1/helpers.go`), which
//! the registry creates at start (its post-start hook) and refuses to
//! delete (`REST.Delete` in `pkg/registry/scheduling/priorityclass/storage`).

use serde_json::{Value, json};

use crate::apis::strategy::Rules;
use crate::machinery::field::{ErrorList, FieldError, Path, immutable};
use crate::machinery::names::name_is_dns_subdomain;
use crate::meta::status::Status;
use crate::resource::info::ResourceInfo;

pub(crate) static RULES: Rules = Rules {
    name: name_is_dns_subdomain,
    default,
    validate,
    validate_update,
    validate_status: None,
};

/// `HighestUserDefinablePriority`.
const HIGHEST_USER_DEFINABLE: i64 = 1_000_000_000;
/// `SystemCriticalPriority`.
const SYSTEM_CRITICAL: i64 = 2 * HIGHEST_USER_DEFINABLE;

/// The system priority classes: name, value, description.
const SYSTEM: [(&str, i64, &str); 2] = [
    (
        "system-node-critical",
        SYSTEM_CRITICAL + 1000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    (
        "system-cluster-critical",
        SYSTEM_CRITICAL,
        "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
    ),
];

/// The system priority classes as the real server creates them at start.
pub(crate) fn system_classes() -> Vec<Value> {
    SYSTEM
        .iter()
        .map(|(name, value, description)| {
            json!({"metadata": {"name": name}, "value": value, "description": description})
        })
        .collect()
}

/// A DELETE of a system priority class is refused before anything else.
pub(crate) fn refuse_delete(res: &ResourceInfo, name: &str) -> Option<Status> {
    SYSTEM.iter().any(|(system, ..)| *system == name).then(|| {
        Status::forbidden(
            res,
            name,
            "this is a system priority class and cannot be deleted",
        )
    })
}

fn default(class: &mut Value) {
    if let Some(class) = class.as_object_mut()
        && class.get("preemptionPolicy").is_none_or(Value::is_null)
    {
        class.insert("preemptionPolicy".into(), "PreemptLowerPriority".into());
    }
}

fn validate(class: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let name = class
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let value = class.get("value").and_then(Value::as_i64).unwrap_or(0);
    let global = class
        .get("globalDefault")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if name.starts_with("system-") {
        if let Err(why) = known_system_class(name, value, global) {
            errors.push(FieldError::forbidden(
                &Path::new(["metadata", "name"]),
                format!(
                    "priority class names with 'system-' prefix are reserved for system use only. error: {why}"
                ),
            ));
        }
    } else if value > HIGHEST_USER_DEFINABLE {
        errors.push(FieldError::forbidden(
            &Path::new(["value"]),
            format!("maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE}"),
        ));
    }
    if let Some(policy) = class.get("preemptionPolicy").and_then(Value::as_str) {
        let path = Path::new(["preemptionPolicy"]);
        match policy {
            "PreemptLowerPriority" | "Never" => {}
            "" => errors.push(FieldError::required(&path, "")),
            other => errors.push(FieldError::not_supported(
                &path,
                other,
                &["PreemptLowerPriority".into(), "Never".into()],
            )),
        }
    }
    errors
}

/// `IsKnownSystemPriorityClass`.
fn known_system_class(name: &str, value: i64, global: bool) -> Result<(), String> {
    let Some((_, want, _)) = SYSTEM.iter().find(|(system, ..)| *system == name) else {
        return Err(format!("{name} is not a known system priority class"));
    };
    if *want != value {
        return Err(format!("value of {name} PriorityClass must be {want}"));
    }
    if global {
        return Err(format!(
            "globalDefault of {name} PriorityClass must be false"
        ));
    }
    Ok(())
}

fn validate_update(new: &Value, old: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let value = |obj: &Value| obj.get("value").and_then(Value::as_i64).unwrap_or(0);
    if value(new) != value(old) {
        errors.push(FieldError::forbidden(
            &Path::new(["value"]),
            "may not be changed in an update.",
        ));
    }
    errors.extend(immutable(
        new.get("preemptionPolicy"),
        old.get("preemptionPolicy"),
        &Path::new(["preemptionPolicy"]),
    ));
    errors
}
