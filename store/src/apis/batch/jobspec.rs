//! `validateJobSpec`, which a Job and a CronJob's job template share:
//! counts, completion mode, the pod failure and replacement policies, the
//! template and the restart policies a Job's pods may have.

use serde_json::{Value, json};

use crate::apis::core::pod::{nonnegative, validate_template};
use crate::machinery::field::{BadValue, ErrorList, FieldError, Path};
use crate::machinery::names::is_qualified_name;

/// `validateJobSpec`: counts, completion mode, policies, the template and
/// its restart policy (a Job's pods never restart always).
pub(crate) fn validate_job_spec(spec: &Value, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    for key in [
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
        "backoffLimitPerIndex",
        "maxFailedIndexes",
    ] {
        errors.extend(nonnegative(spec, key, path));
    }
    let set = |key: &str| spec.get(key).is_some_and(|v| !v.is_null());
    if set("maxFailedIndexes") && !set("backoffLimitPerIndex") {
        errors.push(FieldError::required(
            &path.child("backoffLimitPerIndex"),
            "when maxFailedIndexes is specified",
        ));
    }
    let mode = spec.get("completionMode").and_then(Value::as_str);
    if let Some(mode) = mode {
        if mode != "NonIndexed" && mode != "Indexed" {
            errors.push(FieldError::not_supported(
                &path.child("completionMode"),
                mode,
                &["NonIndexed".to_string(), "Indexed".to_string()],
            ));
        }
        if mode == "Indexed" {
            if !set("completions") {
                errors.push(FieldError::required(
                    &path.child("completions"),
                    "when completion mode is Indexed",
                ));
            }
            if let Some(parallelism) = spec.get("parallelism").and_then(Value::as_i64)
                && parallelism > 100_000
            {
                errors.push(FieldError::invalid(
                    &path.child("parallelism"),
                    parallelism,
                    "must be less than or equal to 100000 when completion mode is Indexed",
                ));
            }
        }
    }
    if mode.is_none_or(|m| m == "NonIndexed") {
        for key in ["backoffLimitPerIndex", "maxFailedIndexes"] {
            if let Some(value) = spec.get(key).and_then(Value::as_i64) {
                errors.push(FieldError::invalid(
                    &path.child(key),
                    value,
                    "requires indexed completion mode",
                ));
            }
        }
    }
    let failure_policy = set("podFailurePolicy");
    if let Some(policy) = spec.get("podFailurePolicy").filter(|p| !p.is_null()) {
        errors.extend(validate_failure_policy(
            spec,
            policy,
            &path.child("podFailurePolicy"),
        ));
    }
    if let Some(policy) = spec.get("podReplacementPolicy").and_then(Value::as_str) {
        if failure_policy {
            if policy != "Failed" {
                errors.push(FieldError::not_supported(
                    &path.child("podReplacementPolicy"),
                    policy,
                    &["Failed".to_string()],
                ));
            }
        } else if policy != "Failed" && policy != "TerminatingOrFailed" {
            errors.push(FieldError::not_supported(
                &path.child("podReplacementPolicy"),
                policy,
                &["Failed".to_string(), "TerminatingOrFailed".to_string()],
            ));
        }
    }
    let empty = json!({});
    let template = spec.get("template").unwrap_or(&empty);
    errors.extend(validate_template(template, &path.child("template")));
    let restart_path = path.child("template").child("spec").child("restartPolicy");
    let restart = template
        .pointer("/spec/restartPolicy")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match restart {
        "Always" | "" => errors.push(FieldError::required(
            &restart_path,
            "valid values: \"OnFailure\", \"Never\"",
        )),
        "OnFailure" | "Never" => {
            if failure_policy && restart != "Never" {
                errors.push(FieldError::invalid(
                    &restart_path,
                    restart,
                    "only \"Never\" is supported when podFailurePolicy is specified",
                ));
            }
        }
        other => errors.push(FieldError::not_supported(
            &restart_path,
            other,
            &["OnFailure".to_string(), "Never".to_string()],
        )),
    }
    errors
}

/// `validatePodFailurePolicy`: each rule's action, and exit codes or pod
/// conditions (one of them).
fn validate_failure_policy(spec: &Value, policy: &Value, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let containers: Vec<&str> = ["containers", "initContainers"]
        .iter()
        .flat_map(|key| {
            spec.pointer(&format!("/template/spec/{key}"))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        })
        .filter_map(|c| c.get("name").and_then(Value::as_str))
        .collect();
    let rules = policy.get("rules").and_then(Value::as_array);
    for (i, rule) in rules.into_iter().flatten().enumerate() {
        let at = path.child("rules").index(i);
        let action = rule
            .get("action")
            .and_then(Value::as_str)
            .unwrap_or_default();
        match action {
            "" => errors.push(FieldError::required(
                &at.child("action"),
                "valid values: [\"Count\" \"FailIndex\" \"FailJob\" \"Ignore\"]",
            )),
            "FailIndex" => {
                if spec.get("backoffLimitPerIndex").is_none_or(Value::is_null) {
                    errors.push(FieldError::invalid(
                        &at.child("action"),
                        action,
                        "requires the backoffLimitPerIndex to be set",
                    ));
                }
            }
            "Count" | "FailJob" | "Ignore" => {}
            other => errors.push(FieldError::not_supported(
                &at.child("action"),
                other,
                &["Count", "FailIndex", "FailJob", "Ignore"].map(str::to_string),
            )),
        }
        let exit_codes = rule.get("onExitCodes").filter(|e| !e.is_null());
        let conditions = rule
            .get("onPodConditions")
            .and_then(Value::as_array)
            .filter(|c| !c.is_empty());
        if let Some(exit_codes) = exit_codes {
            errors.extend(validate_exit_codes(
                exit_codes,
                &containers,
                &at.child("onExitCodes"),
            ));
        }
        for (j, pattern) in conditions.into_iter().flatten().enumerate() {
            let pattern_path = at.child("onPodConditions").index(j);
            let kind = pattern
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or_default();
            for message in is_qualified_name(kind) {
                errors.push(FieldError::invalid(
                    &pattern_path.child("type"),
                    kind,
                    message,
                ));
            }
            match pattern
                .get("status")
                .and_then(Value::as_str)
                .unwrap_or_default()
            {
                "" => errors.push(FieldError::required(
                    &pattern_path.child("status"),
                    "valid values: [\"False\" \"True\" \"Unknown\"]",
                )),
                "False" | "True" | "Unknown" => {}
                other => errors.push(FieldError::not_supported(
                    &pattern_path.child("status"),
                    other,
                    &["False", "True", "Unknown"].map(str::to_string),
                )),
            }
        }
        match (exit_codes.is_some(), conditions.is_some()) {
            (true, true) => errors.push(FieldError::invalid(
                &at,
                BadValue::Omit,
                "specifying both OnExitCodes and OnPodConditions is not supported",
            )),
            (false, false) => errors.push(FieldError::invalid(
                &at,
                BadValue::Omit,
                "specifying one of OnExitCodes and OnPodConditions is required",
            )),
            _ => {}
        }
    }
    errors
}

/// `validatePodFailurePolicyRuleOnExitCodes`.
fn validate_exit_codes(exit_codes: &Value, containers: &[&str], path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let operator = exit_codes
        .get("operator")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match operator {
        "" => errors.push(FieldError::required(
            &path.child("operator"),
            "valid values: [\"In\" \"NotIn\"]",
        )),
        "In" | "NotIn" => {}
        other => errors.push(FieldError::not_supported(
            &path.child("operator"),
            other,
            &["In", "NotIn"].map(str::to_string),
        )),
    }
    if let Some(name) = exit_codes.get("containerName").and_then(Value::as_str)
        && !containers.contains(&name)
    {
        errors.push(FieldError::invalid(
            &path.child("containerName"),
            name,
            "must be one of the container or initContainer names in the pod template",
        ));
    }
    let values_path = path.child("values");
    let values = exit_codes.get("values").cloned().unwrap_or(Value::Null);
    let codes: Vec<i64> = values
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_i64)
        .collect();
    if codes.is_empty() {
        errors.push(FieldError::invalid(
            &values_path,
            values.clone(),
            "at least one value is required",
        ));
    }
    let mut seen = Vec::new();
    for (j, code) in codes.iter().enumerate() {
        if operator == "In" && *code == 0 {
            errors.push(FieldError::invalid(
                &values_path.index(j),
                *code,
                "must not be 0 for the In operator",
            ));
        }
        if seen.contains(code) {
            errors.push(FieldError::duplicate(&values_path.index(j), *code));
        } else {
            seen.push(*code);
        }
    }
    if codes.windows(2).any(|w| w[0] > w[1]) {
        errors.push(FieldError::invalid(&values_path, values, "must be ordered"));
    }
    errors
}
