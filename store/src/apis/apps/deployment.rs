//! Deployment (apps/v1): defaults (`SetDefaults_Deployment`: one replica,
//! a 25%/25% rolling update, 10 revisions kept, 600 s to progress, and the
//! template's), its checks (`ValidateDeploymentSpec`) and its immutable
//! selector (`ValidateDeploymentUpdate`).

use serde_json::{Value, json};

use super::{
    default_rolling_update, int_or_percent, selector_immutable, start_status,
    validate_int_or_percent, validate_replica_template, validate_required_selector,
};
use crate::apis::core::pod::{default_template, nonnegative, object_at, or_pointer, spec_of};
use crate::apis::strategy::Rules;
use crate::go::json::encode::{go_json, go_struct_json};
use crate::machinery::field::{ErrorList, ErrorType, FieldError, Path, error_with_written_value};
use crate::machinery::names::name_is_dns_subdomain;

pub(crate) static RULES: Rules = Rules {
    name: name_is_dns_subdomain,
    default,
    validate,
    validate_update,
    validate_status: Some(validate_status),
};

/// `ValidateDeploymentStatusUpdate`.
fn validate_status(new: &Value, old: &Value) -> ErrorList {
    super::validate_status(
        new,
        old,
        &super::StatusRules {
            counts: &[
                "observedGeneration",
                "replicas",
                "updatedReplicas",
                "readyReplicas",
                "availableReplicas",
                "unavailableReplicas",
                "terminatingReplicas",
                "collisionCount",
            ],
            within_replicas: &["updatedReplicas", "readyReplicas", "availableReplicas"],
            available_within_ready: Some("cannot be greater than readyReplicas"),
            collisions: true,
        },
    )
}

fn default(deployment: &mut Value) {
    let Some(spec) = spec_of(deployment) else {
        return;
    };
    or_pointer(spec, "replicas", json!(1));
    if let Some(strategy) = object_at(spec, "strategy") {
        default_rolling_update(strategy, json!("25%"), json!("25%"));
    }
    or_pointer(spec, "revisionHistoryLimit", json!(10));
    or_pointer(spec, "progressDeadlineSeconds", json!(600));
    default_template(spec.entry("template").or_insert_with(|| json!({})));
}

/// What a new Deployment gets: an empty status.
pub(crate) fn prepare_create(deployment: &mut Value) {
    start_status(deployment, json!({}));
}

fn validate(deployment: &Value) -> ErrorList {
    let empty = json!({});
    let spec = deployment.get("spec").unwrap_or(&empty);
    let path = Path::new(["spec"]);
    let mut errors = nonnegative(spec, "replicas", &path);
    errors.extend(validate_required_selector(spec, &path, "deployment"));
    errors.extend(validate_replica_template(spec, &path, "Deployment"));
    errors.extend(validate_strategy(
        spec.get("strategy").unwrap_or(&empty),
        &path.child("strategy"),
    ));
    errors.extend(nonnegative(spec, "minReadySeconds", &path));
    errors.extend(nonnegative(spec, "revisionHistoryLimit", &path));
    if let Some(deadline) = spec.get("progressDeadlineSeconds").and_then(Value::as_i64) {
        errors.extend(nonnegative(spec, "progressDeadlineSeconds", &path));
        let ready = spec
            .get("minReadySeconds")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if deadline <= ready {
            errors.push(FieldError::invalid(
                &path.child("progressDeadlineSeconds"),
                deadline,
                "must be greater than minReadySeconds",
            ));
        }
    }
    errors
}

/// `ValidateDeploymentStrategy`.
fn validate_strategy(strategy: &Value, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let rolling = strategy.get("rollingUpdate").filter(|r| !r.is_null());
    match strategy
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
    {
        "Recreate" => {
            if rolling.is_some() {
                errors.push(FieldError::forbidden(
                    &path.child("rollingUpdate"),
                    "may not be specified when strategy `type` is 'Recreate'",
                ));
            }
        }
        "RollingUpdate" => match rolling {
            None => errors.push(FieldError::required(
                &path.child("rollingUpdate"),
                "this should be defaulted and never be nil",
            )),
            Some(rolling) => {
                let at = path.child("rollingUpdate");
                let (unavailable, surge) = (rolling.get("maxUnavailable"), rolling.get("maxSurge"));
                errors.extend(validate_int_or_percent(
                    unavailable,
                    &at.child("maxUnavailable"),
                    false,
                ));
                errors.extend(validate_int_or_percent(surge, &at.child("maxSurge"), false));
                if int_or_percent(unavailable) == 0 && int_or_percent(surge) == 0 {
                    errors.push(FieldError::invalid(
                        &at.child("maxUnavailable"),
                        unavailable.cloned().unwrap_or(json!(0)),
                        "may not be 0 when `maxSurge` is 0",
                    ));
                }
                errors.extend(
                    validate_int_or_percent(unavailable, &at.child("maxUnavailable"), true)
                        .into_iter()
                        .filter(|e| e.detail == "must not be greater than 100%"),
                );
            }
        },
        _ => errors.push(error_with_written_value(
            ErrorType::NotSupported,
            path,
            &internal_strategy(strategy),
            "supported values: \"Recreate\", \"RollingUpdate\"",
        )),
    }
    errors
}

/// The internal `DeploymentStrategy` as Go's JSON writes it (no tags:
/// Go's field names).
fn internal_strategy(strategy: &Value) -> String {
    let kind = strategy.get("type").cloned().unwrap_or(json!(""));
    let rolling = match strategy.get("rollingUpdate").filter(|r| !r.is_null()) {
        None => "null".to_string(),
        Some(r) => format!(
            "{{\"MaxUnavailable\":{},\"MaxSurge\":{}}}",
            go_struct_json(r.get("maxUnavailable").unwrap_or(&json!(0)), &[]),
            go_struct_json(r.get("maxSurge").unwrap_or(&json!(0)), &[]),
        ),
    };
    format!(
        "{{\"Type\":{},\"RollingUpdate\":{rolling}}}",
        go_json(&kind)
    )
}

fn validate_update(new: &Value, old: &Value) -> ErrorList {
    let mut errors = validate(new);
    errors.extend(selector_immutable(new, old));
    errors
}

/// Whether the annotations changed: its strategy's `PrepareForUpdate`
/// moves the generation then too.
pub(crate) fn annotations_moved(new: &Value, old: &Value) -> bool {
    new.pointer("/metadata/annotations") != old.pointer("/metadata/annotations")
}
