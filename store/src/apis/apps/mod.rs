//! The apps group (`pkg/apis/apps`): one file per kind, and the checks
//! its kinds share (a strict selector, a template restarting always,
//! int-or-percent bounds).

pub(crate) mod daemonset;
pub(crate) mod deployment;
pub(crate) mod replicaset;
pub(crate) mod statefulset;

use serde_json::{Map, Value, json};

use super::core::pod::{NEGATIVE, object_at, or_default, or_pointer, validate_template};
use crate::go::json::encode::go_struct_json;
use crate::machinery::field::error_with_written_value;
use crate::machinery::field::{ErrorList, ErrorType, FieldError, Path};
use crate::machinery::labels::Selector;
use crate::machinery::labels::{selector_kind, selector_matches, validate_label_selector};

/// A rolling update strategy's defaults: the type when unset, and for a
/// rolling update its bounds.
fn default_rolling_update(strategy: &mut Map<String, Value>, unavailable: Value, surge: Value) {
    or_default(strategy, "type", json!("RollingUpdate"));
    if strategy.get("type") == Some(&json!("RollingUpdate"))
        && let Some(rolling) = object_at(strategy, "rollingUpdate")
    {
        or_pointer(rolling, "maxUnavailable", unavailable);
        or_pointer(rolling, "maxSurge", surge);
    }
}

/// Sets the status a new object starts with.
pub(crate) fn start_status(object: &mut Value, status: Value) {
    if let Some(map) = object.as_object_mut() {
        map.insert("status".into(), status);
    }
}

/// What a workload's status may hold (`Validate<Kind>Status`).
struct StatusRules {
    /// Counts that may not be negative.
    counts: &'static [&'static str],
    /// Counts that may not exceed `replicas`.
    within_replicas: &'static [&'static str],
    /// The words for `availableReplicas` above `readyReplicas`, when checked.
    available_within_ready: Option<&'static str>,
    /// Whether `collisionCount` may not go down.
    collisions: bool,
}

/// `ValidateReplicaSetStatus`, `ValidateReplicationControllerStatus`:
/// `counts` never negative, none of the pods' counts above `replicas`, no
/// more available than ready.
pub(crate) fn validate_replica_status(
    new: &Value,
    old: &Value,
    counts: &'static [&'static str],
) -> ErrorList {
    validate_status(
        new,
        old,
        &StatusRules {
            counts,
            within_replicas: &["fullyLabeledReplicas", "readyReplicas", "availableReplicas"],
            available_within_ready: Some("cannot be greater than readyReplicas"),
            collisions: false,
        },
    )
}

/// The checks of a write to a workload's status.
fn validate_status(new: &Value, old: &Value, rules: &StatusRules) -> ErrorList {
    let empty = json!({});
    let status = new.get("status").unwrap_or(&empty);
    let path = Path::new(["status"]);
    let mut errors = ErrorList::new();
    for count in rules.counts {
        errors.extend(super::core::pod::nonnegative(status, count, &path));
    }
    let count = |key: &str| status.get(key).and_then(Value::as_i64).unwrap_or(0);
    for key in rules.within_replicas {
        if count(key) > count("replicas") {
            errors.push(FieldError::invalid(
                &path.child(key),
                count(key),
                "cannot be greater than status.replicas",
            ));
        }
    }
    if let Some(words) = rules.available_within_ready
        && count("availableReplicas") > count("readyReplicas")
    {
        errors.push(FieldError::invalid(
            &path.child("availableReplicas"),
            count("availableReplicas"),
            words,
        ));
    }
    let collisions = |o: &Value| o.pointer("/status/collisionCount").and_then(Value::as_i64);
    if rules.collisions
        && let Some(before) = collisions(old)
        && collisions(new).is_none_or(|now| now < before)
    {
        errors.push(FieldError::invalid(
            &path.child("collisionCount"),
            collisions(new).unwrap_or(0),
            "cannot be decremented",
        ));
    }
    errors
}

/// A label selector as Go writes it in a message (`matchLabels` first).
pub(crate) fn selector_text(selector: &Value) -> String {
    go_struct_json(selector, &["matchLabels", "matchExpressions"])
}

/// The selector checks of Deployments, ReplicaSets and StatefulSets:
/// required, valid, not empty (`empty selector is invalid for <kind>`).
fn validate_required_selector(spec: &Value, path: &Path, kind: &str) -> ErrorList {
    let mut errors = ErrorList::new();
    let at = path.child("selector");
    match spec.get("selector").filter(|s| !s.is_null()) {
        None => errors.push(FieldError::required(&at, "")),
        Some(selector) => {
            errors.extend(validate_label_selector(Some(selector), &at));
            if selector_kind(Some(selector)) == Selector::Everything {
                errors.push(error_with_written_value(
                    ErrorType::Invalid,
                    &at,
                    &selector_text(selector),
                    &format!("empty selector is invalid for {kind}"),
                ));
            }
        }
    }
    errors
}

/// `selector` does not match the template's labels (none selects
/// nothing; an empty one everything).
fn template_mismatch(spec: &Value, path: &Path) -> Option<FieldError> {
    let selector = spec.get("selector");
    let labels = spec
        .pointer("/template/metadata/labels")
        .filter(|l| !l.is_null());
    let matches = match selector_kind(selector) {
        Selector::Everything | Selector::Invalid => true,
        Selector::Nothing => false,
        Selector::Some => selector_matches(selector, labels),
    };
    (!matches).then(|| {
        FieldError::invalid(
            &path.child("template").child("metadata").child("labels"),
            labels.cloned().unwrap_or(Value::Null),
            "`selector` does not match template `labels`",
        )
    })
}

/// `ValidatePodTemplateSpecForReplicaSet` (Deployments and ReplicaSets),
/// after the selector's `invalid label selector` when it does not convert.
fn validate_replica_template(spec: &Value, path: &Path, kind: &str) -> ErrorList {
    let mut errors = ErrorList::new();
    let selector = spec.get("selector");
    if selector_kind(selector) == Selector::Invalid {
        errors.push(error_with_written_value(
            ErrorType::Invalid,
            &path.child("selector"),
            &selector_text(selector.unwrap_or(&Value::Null)),
            "invalid label selector",
        ));
        return errors;
    }
    errors.extend(template_mismatch(spec, path));
    let empty = Value::Object(Default::default());
    let template = spec.get("template").unwrap_or(&empty);
    let template_path = path.child("template");
    errors.extend(validate_template(template, &template_path));
    errors.extend(restarts_always(template, &template_path, kind));
    errors
}

/// A workload's pods restart always and have no active deadline.
pub(crate) fn restarts_always(template: &Value, path: &Path, kind: &str) -> ErrorList {
    let mut errors = ErrorList::new();
    let spec = path.child("spec");
    let policy = template
        .pointer("/spec/restartPolicy")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if policy != "Always" {
        errors.push(FieldError::not_supported(
            &spec.child("restartPolicy"),
            policy,
            &["Always".to_string()],
        ));
    }
    if template
        .pointer("/spec/activeDeadlineSeconds")
        .is_some_and(|v| !v.is_null())
    {
        errors.push(FieldError::forbidden(
            &spec.child("activeDeadlineSeconds"),
            format!("activeDeadlineSeconds in {kind} is not Supported"),
        ));
    }
    errors
}

/// An int-or-percent's value: the number, or the percent's number; 0 for
/// a string that is not a percent (`getIntOrPercentValue`).
fn int_or_percent(value: Option<&Value>) -> i64 {
    match value {
        Some(Value::Number(n)) => n.as_i64().unwrap_or(0),
        Some(Value::String(s)) => match percent(s) {
            Some(p) => p,
            None => s.parse().unwrap_or(0),
        },
        _ => 0,
    }
}

/// The number of a valid percent (`[0-9]+%`).
fn percent(text: &str) -> Option<i64> {
    let digits = text.strip_suffix('%')?;
    (!digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit()))
        .then(|| digits.parse().unwrap_or(i64::MAX))
}

/// `ValidatePositiveIntOrPercent` and `IsNotMoreThan100Percent`.
fn validate_int_or_percent(value: Option<&Value>, path: &Path, at_most_100: bool) -> ErrorList {
    let mut errors = ErrorList::new();
    match value {
        Some(Value::String(s)) => match percent(s) {
            None => errors.push(FieldError::invalid(
                path,
                s.as_str(),
                "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
            )),
            Some(p) if at_most_100 && p > 100 => errors.push(FieldError::invalid(
                path,
                s.as_str(),
                "must not be greater than 100%",
            )),
            Some(_) => {}
        },
        Some(Value::Number(n)) => {
            let n = n.as_i64().unwrap_or(0);
            if n < 0 {
                errors.push(FieldError::invalid(path, n, NEGATIVE));
            }
        }
        _ => {}
    }
    errors
}

/// The selector cannot change (`ValidateImmutableField` of a selector).
fn selector_immutable(new: &Value, old: &Value) -> ErrorList {
    let (n, o) = (new.pointer("/spec/selector"), old.pointer("/spec/selector"));
    if n.filter(|v| !v.is_null()) == o.filter(|v| !v.is_null()) {
        return ErrorList::new();
    }
    vec![error_with_written_value(
        ErrorType::Invalid,
        &Path::new(["spec", "selector"]),
        &n.map_or("null".to_string(), selector_text),
        "field is immutable",
    )]
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::template_mismatch;
    use crate::machinery::field::Path;

    /// `LabelSelectorAsSelector`: no selector selects nothing, an empty
    /// one everything, requirements what meets them all.
    #[test]
    fn a_selector_matches_the_template_as_the_real_server_reads_it() {
        let path = Path::new(["spec"]);
        let labels = json!({"app": "web", "tier": "front"});
        for (selector, matches) in [
            (json!(null), false),
            (json!({}), true),
            (json!({"matchLabels": {"app": "web"}}), true),
            (json!({"matchLabels": {"app": "api"}}), false),
            (
                json!({"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "api"]}]}),
                true,
            ),
            (
                json!({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]}),
                false,
            ),
            (
                json!({"matchExpressions": [{"key": "tier", "operator": "Exists"}, {"key": "old", "operator": "DoesNotExist"}]}),
                true,
            ),
            // A selector that does not convert is refused on its own.
            (
                json!({"matchExpressions": [{"key": "app", "operator": "Equals", "values": ["web"]}]}),
                true,
            ),
        ] {
            let spec = json!({"selector": selector, "template": {"metadata": {"labels": labels}}});
            assert_eq!(
                template_mismatch(&spec, &path).is_none(),
                matches,
                "{selector}"
            );
        }
    }
}
