//! PodDisruptionBudget (policy/v1): no defaults; a new one's status is all
//! zeros. The checks of `ValidatePodDisruptionBudgetSpec`: one bound at
//! most, each a non-negative integer or a percentage up to 100%, the
//! selector, the unhealthy pod eviction policy. Its names only need to be
//! path segments (the kind has no name rule of its own).

use serde_json::{Value, json};

use crate::apis::core::pod::{NEGATIVE, nonnegative};
use crate::apis::shape::{drop_empty_in_selector, spec_mut};
use crate::apis::strategy::Rules;
use crate::go::json::encode::{go_json, go_struct_json};
use crate::machinery::conditions::validate_conditions;
use crate::machinery::field::{ErrorList, ErrorType, FieldError, Path, error_with_written_value};
use crate::machinery::labels::validate_label_selector;
use crate::machinery::names::name_is_path_segment;

pub(crate) static RULES: Rules = Rules {
    name: name_is_path_segment,
    default: |budget| {
        if let Some(spec) = spec_mut(budget) {
            drop_empty_in_selector(spec.get_mut("selector"));
        }
    },
    validate,
    validate_update: |new, _| validate(new),
    validate_status: Some(validate_status),
};

/// What a new budget's status is: nothing counted yet.
pub(crate) fn prepare_create(budget: &mut Value) {
    if let Some(map) = budget.as_object_mut() {
        map.insert(
            "status".into(),
            json!({"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}),
        );
    }
}

fn validate(budget: &Value) -> ErrorList {
    let empty = json!({});
    let spec = budget.get("spec").unwrap_or(&empty);
    let path = Path::new(["spec"]);
    let set = |key: &str| spec.get(key).filter(|v| !v.is_null());
    let mut errors = ErrorList::new();
    if set("minAvailable").is_some() && set("maxUnavailable").is_some() {
        errors.push(error_with_written_value(
            ErrorType::Invalid,
            &path,
            &internal_spec(spec),
            "minAvailable and maxUnavailable cannot be both set",
        ));
    }
    for key in ["minAvailable", "maxUnavailable"] {
        if let Some(bound) = set(key) {
            errors.extend(validate_bound(bound, &path.child(key)));
        }
    }
    errors.extend(validate_label_selector(
        set("selector"),
        &path.child("selector"),
    ));
    if let Some(policy) = set("unhealthyPodEvictionPolicy").and_then(Value::as_str)
        && !matches!(policy, "IfHealthyBudget" | "AlwaysAllow")
    {
        errors.push(FieldError::not_supported(
            &path.child("unhealthyPodEvictionPolicy"),
            policy,
            &["AlwaysAllow".into(), "IfHealthyBudget".into()],
        ));
    }
    errors
}

/// The spec as Go writes the internal struct (no JSON tags: its fields'
/// Go names, in their order; the selector with its own tags).
fn internal_spec(spec: &Value) -> String {
    let field = |key: &str| spec.get(key).cloned().unwrap_or(Value::Null);
    let selector = match spec.get("selector") {
        Some(selector) if !selector.is_null() => {
            go_struct_json(selector, &["matchLabels", "matchExpressions"])
        }
        _ => "null".to_string(),
    };
    format!(
        "{{\"MinAvailable\":{},\"Selector\":{selector},\"MaxUnavailable\":{},\"UnhealthyPodEvictionPolicy\":{}}}",
        go_json(&field("minAvailable")),
        go_json(&field("maxUnavailable")),
        go_json(&field("unhealthyPodEvictionPolicy")),
    )
}

/// `ValidatePositiveIntOrPercent` and `IsNotMoreThan100Percent`.
fn validate_bound(bound: &Value, path: &Path) -> ErrorList {
    match bound {
        Value::String(text) => {
            let digits = text
                .strip_suffix('%')
                .filter(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
            match digits.map(|d| d.parse::<u64>().unwrap_or(u64::MAX)) {
                None => vec![FieldError::invalid(
                    path,
                    text.as_str(),
                    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
                )],
                Some(percent) if percent > 100 => vec![FieldError::invalid(
                    path,
                    text.as_str(),
                    "must not be greater than 100%",
                )],
                Some(_) => ErrorList::new(),
            }
        }
        other => match other.as_i64() {
            Some(number) if number < 0 => vec![FieldError::invalid(path, number, NEGATIVE)],
            _ => ErrorList::new(),
        },
    }
}

/// `ValidatePodDisruptionBudgetStatusUpdate` (policy/v1): its conditions,
/// and no negative counts.
fn validate_status(new: &Value, _old: &Value) -> ErrorList {
    let empty = json!({});
    let status = new.get("status").unwrap_or(&empty);
    let path = Path::new(["status"]);
    let mut errors = validate_conditions(status.get("conditions"), &path.child("conditions"));
    for key in [
        "disruptionsAllowed",
        "currentHealthy",
        "desiredHealthy",
        "expectedPods",
    ] {
        errors.extend(nonnegative(status, key, &path));
    }
    errors
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::internal_spec;

    /// The spec shows in a refusal as Go writes the internal struct.
    #[test]
    fn the_spec_is_written_as_the_internal_struct() {
        let spec = json!({"maxUnavailable": 1, "minAvailable": "50%",
            "selector": {"matchExpressions": [{"values": ["a"], "operator": "In", "key": "k"}],
                "matchLabels": {"b": "2", "a": "1"}}});
        assert_eq!(
            internal_spec(&spec),
            r#"{"MinAvailable":"50%","Selector":{"matchLabels":{"a":"1","b":"2"},"matchExpressions":[{"key":"k","operator":"In","values":["a"]}]},"MaxUnavailable":1,"UnhealthyPodEvictionPolicy":null}"#
        );
    }
}
