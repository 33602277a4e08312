//! DaemonSet (apps/v1): defaults (`SetDefaults_DaemonSet`: a rolling
//! update of one unavailable pod and no surge, 10 revisions), the template
//! generation the real server keeps in the
//! `deprecated.daemonset.template.generation` annotation, its checks
//! (`ValidateDaemonSetSpec`) and its immutable selector.

use serde_json::{Value, json};

use super::{
    default_rolling_update, int_or_percent, restarts_always, selector_immutable, selector_text,
    start_status, template_mismatch, validate_int_or_percent,
};
use crate::apis::core::pod::{
    default_template, nonnegative, object_at, or_pointer, spec_of, template_warnings_at,
    validate_template,
};
use crate::apis::strategy::Rules;
use crate::go::json::encode::go_json;
use crate::machinery::field::{ErrorList, ErrorType, FieldError, Path, error_with_written_value};
use crate::machinery::labels::{Selector, selector_kind, validate_label_selector};
use crate::machinery::names::name_is_dns_subdomain;

pub(crate) static RULES: Rules = Rules {
    name: name_is_dns_subdomain,
    default,
    validate,
    validate_update,
    validate_status: Some(validate_status),
};

/// `ValidateDaemonSetStatusUpdate`.
fn validate_status(new: &Value, old: &Value) -> ErrorList {
    super::validate_status(
        new,
        old,
        &super::StatusRules {
            counts: &[
                "currentNumberScheduled",
                "numberMisscheduled",
                "desiredNumberScheduled",
                "numberReady",
                "observedGeneration",
                "updatedNumberScheduled",
                "numberAvailable",
                "numberUnavailable",
                "collisionCount",
            ],
            within_replicas: &[],
            available_within_ready: None,
            collisions: true,
        },
    )
}

/// The annotation v1 keeps the template generation in.
const TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";

fn default(set: &mut Value) {
    let Some(spec) = spec_of(set) else {
        return;
    };
    if let Some(strategy) = object_at(spec, "updateStrategy") {
        default_rolling_update(strategy, json!(1), json!(0));
    }
    or_pointer(spec, "revisionHistoryLimit", json!(10));
    default_template(spec.entry("template").or_insert_with(|| json!({})));
}

fn set_template_generation(set: &mut Value, generation: i64) {
    let Some(metadata) = set.as_object_mut().and_then(|m| object_at(m, "metadata")) else {
        return;
    };
    let annotations = metadata.entry("annotations").or_insert_with(|| json!({}));
    if !annotations.is_object() {
        *annotations = json!({});
    }
    if let Some(annotations) = annotations.as_object_mut() {
        annotations.insert(TEMPLATE_GENERATION.into(), json!(generation.to_string()));
    }
}

fn template_generation(set: &Value) -> i64 {
    set.pointer("/metadata/annotations")
        .and_then(|a| a.get(TEMPLATE_GENERATION))
        .and_then(Value::as_str)
        .and_then(|g| g.parse().ok())
        .unwrap_or(0)
}

/// The new object as v1 writes it: its template generation in the
/// annotation (0 until it is given one).
pub(crate) fn versioned(set: &mut Value) {
    let generation = template_generation(set);
    set_template_generation(set, generation);
}

/// What a new DaemonSet gets: template generation 1 (at least), a status
/// of nothing scheduled.
pub(crate) fn prepare_create(set: &mut Value) {
    let generation = template_generation(set).max(1);
    set_template_generation(set, generation);
    start_status(
        set,
        json!({
            "currentNumberScheduled": 0,
            "desiredNumberScheduled": 0,
            "numberMisscheduled": 0,
            "numberReady": 0,
        }),
    );
}

/// An update keeps the template generation, one more when the template
/// changes.
pub(crate) fn prepare_update(new: &mut Value, old: &Value) {
    let mut generation = template_generation(old);
    if new.pointer("/spec/template") != old.pointer("/spec/template") {
        generation += 1;
    }
    set_template_generation(new, generation);
}

/// The template's warnings, on create and when the template changed.
pub(crate) fn warnings(set: &Value, old: Option<&Value>) -> Vec<String> {
    if old.is_some_and(|o| template_generation(o) == template_generation(set)) {
        return Vec::new();
    }
    template_warnings_at(set, "/spec/template")
}

fn validate(set: &Value) -> ErrorList {
    let empty = json!({});
    let spec = set.get("spec").unwrap_or(&empty);
    let path = Path::new(["spec"]);
    let selector = spec.get("selector").filter(|s| !s.is_null());
    let mut errors = validate_label_selector(selector, &path.child("selector"));
    if selector_kind(selector) != Selector::Invalid {
        errors.extend(template_mismatch(spec, &path));
    }
    if let Some(selector) = selector
        && selector_kind(Some(selector)) == Selector::Everything
    {
        errors.push(error_with_written_value(
            ErrorType::Invalid,
            &path.child("selector"),
            &selector_text(selector),
            "empty selector is invalid for daemonset",
        ));
    }
    let template = spec.get("template").unwrap_or(&empty);
    errors.extend(validate_template(template, &path.child("template")));
    errors.extend(restarts_always(
        template,
        &path.child("template"),
        "DaemonSet",
    ));
    errors.extend(nonnegative(spec, "minReadySeconds", &path));
    errors.extend(validate_strategy(
        spec.get("updateStrategy").unwrap_or(&empty),
        &path.child("updateStrategy"),
    ));
    errors.extend(nonnegative(spec, "revisionHistoryLimit", &path));
    errors
}

/// `ValidateDaemonSetUpdateStrategy`.
fn validate_strategy(strategy: &Value, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let rolling = strategy.get("rollingUpdate").filter(|r| !r.is_null());
    match strategy
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
    {
        "OnDelete" => {}
        "RollingUpdate" => {
            let Some(rolling) = rolling else {
                errors.push(FieldError::required(&path.child("rollingUpdate"), ""));
                return errors;
            };
            let at = path.child("rollingUpdate");
            let (unavailable, surge) = (rolling.get("maxUnavailable"), rolling.get("maxSurge"));
            errors.extend(validate_int_or_percent(
                unavailable,
                &at.child("maxUnavailable"),
                true,
            ));
            errors.extend(validate_int_or_percent(surge, &at.child("maxSurge"), true));
            match (int_or_percent(unavailable) != 0, int_or_percent(surge) != 0) {
                (true, true) => errors.push(FieldError::invalid(
                    &at.child("maxSurge"),
                    surge.cloned().unwrap_or(json!(0)),
                    "may not be set when maxUnavailable is non-zero",
                )),
                (false, false) => errors.push(FieldError::required(
                    &at.child("maxUnavailable"),
                    "cannot be 0 when maxSurge is 0",
                )),
                _ => {}
            }
        }
        other => {
            let rolling = rolling.map_or("null".to_string(), |r| {
                format!(
                    "{{\"MaxUnavailable\":{},\"MaxSurge\":{}}}",
                    go_json(r.get("maxUnavailable").unwrap_or(&json!(0))),
                    go_json(r.get("maxSurge").unwrap_or(&json!(0))),
                )
            });
            errors.push(error_with_written_value(
                ErrorType::NotSupported,
                path,
                &format!(
                    "{{\"Type\":{},\"RollingUpdate\":{rolling}}}",
                    go_json(&json!(other))
                ),
                "supported values: \"RollingUpdate\", \"OnDelete\"",
            ));
        }
    }
    errors
}

fn validate_update(new: &Value, old: &Value) -> ErrorList {
    let mut errors = selector_immutable(new, old);
    errors.extend(validate(new));
    errors
}
