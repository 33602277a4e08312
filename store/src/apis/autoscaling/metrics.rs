//! The metrics an autoscaler scales on (autoscaling/v2), as
//! `validateMetrics` checks them: each a known type with its own source
//! and no other, the source's metric name, target and reference, and
//! scaling to zero only on object or external metrics.

use serde_json::{Value, json};

use super::horizontalpodautoscaler::{ApiVersion, SOURCES, int, validate_reference};
use crate::apis::core::resources::container_name_errors;
use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::names::{is_dns1123_label, is_path_segment_name};
use crate::machinery::object::text;
use crate::machinery::quantity::Quantity;

/// `validateMetrics`: each metric; scaling to zero needs an object or an
/// external metric.
pub(super) fn validate_metrics(
    spec: &Value,
    path: &Path,
    min: Option<i64>,
    old_spec: Option<&Value>,
) -> ErrorList {
    let mut errors = ErrorList::new();
    let metrics = spec.get("metrics").and_then(Value::as_array);
    let mut scales_to_zero = false;
    // Object metrics' apiVersions stay allowed when an old one was bad.
    let lax_objects = old_spec
        .and_then(|o| o.get("metrics"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|m| text(m, "type") == "Object")
        .filter_map(|m| m.pointer("/object/describedObject"))
        .any(|r| !validate_reference_version(r).is_empty());
    for (i, metric) in metrics.into_iter().flatten().enumerate() {
        errors.extend(validate_metric(metric, &path.index(i), lax_objects));
        scales_to_zero |= matches!(text(metric, "type"), "Object" | "External");
    }
    if min == Some(0) && !scales_to_zero {
        errors.push(FieldError::forbidden(
            path,
            "must specify at least one Object or External metric to support scaling to zero replicas",
        ));
    }
    errors
}

/// The apiVersion errors of an object metric's reference.
fn validate_reference_version(reference: &Value) -> ErrorList {
    validate_reference(reference, &Path::none(), ApiVersion::AnyGroup)
        .into_iter()
        .filter(|e| e.field.to_string() == "apiVersion")
        .collect()
}

/// `validateMetricSpec`: a known type, its source given, no other source.
fn validate_metric(metric: &Value, path: &Path, lax_objects: bool) -> ErrorList {
    let mut errors = ErrorList::new();
    let kind = text(metric, "type");
    let supported: Vec<String> = {
        let mut names: Vec<String> = SOURCES.iter().map(|(t, _)| t.to_string()).collect();
        names.sort();
        names
    };
    if kind.is_empty() {
        errors.push(FieldError::required(
            &path.child("type"),
            "must specify a metric source type",
        ));
    }
    if !SOURCES.iter().any(|(t, _)| *t == kind) {
        errors.push(FieldError::not_supported(
            &path.child("type"),
            kind,
            &supported,
        ));
    }
    let present: Vec<&str> = [
        "object",
        "external",
        "pods",
        "resource",
        "containerResource",
    ]
    .into_iter()
    .filter(|f| metric.get(*f).is_some_and(|s| !s.is_null()))
    .collect();
    if let Some(first) = present.first() {
        let source = &metric[*first];
        let at = path.child(first);
        errors.extend(match *first {
            "object" => validate_object_source(source, &at, lax_objects),
            "external" => validate_external_source(source, &at),
            "pods" => validate_pods_source(source, &at),
            "resource" => validate_resource_source(source, &at),
            _ => validate_container_resource_source(source, &at),
        });
    }
    let expected = SOURCES.iter().find(|(t, _)| *t == kind).map(|(_, f)| *f);
    match expected {
        Some(field) if !present.contains(&field) => errors.push(FieldError::required(
            &path.child(field),
            "must populate information for the given metric source",
        )),
        Some(_) => {}
        None => errors.push(FieldError::not_supported(
            &path.child("type"),
            kind,
            &supported,
        )),
    }
    if present.len() != 1 {
        let mut others: Vec<&str> = present
            .into_iter()
            .filter(|f| Some(*f) != expected)
            .collect();
        others.sort_unstable();
        for other in others {
            errors.push(FieldError::forbidden(
                &path.child(other),
                "must populate the given metric source only",
            ));
        }
    }
    errors
}

/// `validateMetricIdentifier`.
fn validate_metric_identifier(source: &Value, path: &Path) -> ErrorList {
    let name = source
        .pointer("/metric/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let at = path.child("metric").child("name");
    if name.is_empty() {
        return vec![FieldError::required(&at, "must specify a metric name")];
    }
    is_path_segment_name(name)
        .into_iter()
        .map(|message| FieldError::invalid(&at, name, message))
        .collect()
}

/// A target's field, when set.
fn target_has(source: &Value, key: &str) -> bool {
    source
        .pointer(&format!("/target/{key}"))
        .is_some_and(|v| !v.is_null())
}

/// `validateMetricTarget`.
fn validate_metric_target(source: &Value, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let empty = json!({});
    let target = source.get("target").unwrap_or(&empty);
    let at = path.child("target");
    let kind = text(target, "type");
    if kind.is_empty() {
        errors.push(FieldError::required(
            &at.child("type"),
            "must specify a metric target type",
        ));
    }
    if !matches!(kind, "Utilization" | "Value" | "AverageValue") {
        errors.push(FieldError::invalid(
            &at.child("type"),
            kind,
            "must be either Utilization, Value, or AverageValue",
        ));
    }
    for key in ["value", "averageValue"] {
        let Some(value) = target.get(key).filter(|v| !v.is_null()) else {
            continue;
        };
        let positive = Quantity::from_json(value).is_ok_and(|q| !q.is_zero() && !q.is_negative());
        if !positive {
            errors.push(FieldError::invalid(
                &at.child(key),
                value.clone(),
                "must be positive",
            ));
        }
    }
    if let Some(utilization) = int(target, "averageUtilization").filter(|u| *u < 1) {
        errors.push(FieldError::invalid(
            &at.child("averageUtilization"),
            utilization,
            "must be greater than 0",
        ));
    }
    errors
}

fn validate_object_source(source: &Value, path: &Path, lax: bool) -> ErrorList {
    let empty = json!({});
    let api_version = if lax {
        ApiVersion::Unchecked
    } else {
        ApiVersion::AnyGroup
    };
    let mut errors = validate_reference(
        source.get("describedObject").unwrap_or(&empty),
        &path.child("describedObject"),
        api_version,
    );
    errors.extend(validate_metric_identifier(source, path));
    errors.extend(validate_metric_target(source, path));
    if !target_has(source, "value") && !target_has(source, "averageValue") {
        errors.push(FieldError::required(
            &path.child("target").child("averageValue"),
            "must set either a target value or averageValue",
        ));
    }
    errors
}

fn validate_external_source(source: &Value, path: &Path) -> ErrorList {
    let mut errors = validate_metric_identifier(source, path);
    errors.extend(validate_metric_target(source, path));
    let (value, average) = (
        target_has(source, "value"),
        target_has(source, "averageValue"),
    );
    if !value && !average {
        errors.push(FieldError::required(
            &path.child("target").child("averageValue"),
            "must set either a target value for metric or a per-pod target",
        ));
    }
    if value && average {
        errors.push(FieldError::forbidden(
            &path.child("target").child("value"),
            "may not set both a target value for metric and a per-pod target",
        ));
    }
    errors
}

fn validate_pods_source(source: &Value, path: &Path) -> ErrorList {
    let mut errors = validate_metric_identifier(source, path);
    errors.extend(validate_metric_target(source, path));
    if !target_has(source, "averageValue") {
        errors.push(FieldError::required(
            &path.child("target").child("averageValue"),
            "must specify a positive target averageValue",
        ));
    }
    errors
}

/// A resource's or container resource's target: a raw value or a
/// utilization, not both.
fn validate_utilization_or_value(source: &Value, path: &Path) -> ErrorList {
    let mut errors = validate_metric_target(source, path);
    let (utilization, average) = (
        target_has(source, "averageUtilization"),
        target_has(source, "averageValue"),
    );
    if !utilization && !average {
        errors.push(FieldError::required(
            &path.child("target").child("averageUtilization"),
            "must set either a target raw value or a target utilization",
        ));
    }
    if utilization && average {
        errors.push(FieldError::forbidden(
            &path.child("target").child("averageValue"),
            "may not set both a target raw value and a target utilization",
        ));
    }
    errors
}

fn validate_resource_source(source: &Value, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    if text(source, "name").is_empty() {
        errors.push(FieldError::required(
            &path.child("name"),
            "must specify a resource name",
        ));
    }
    errors.extend(validate_utilization_or_value(source, path));
    errors
}

fn validate_container_resource_source(source: &Value, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let name = text(source, "name");
    if name.is_empty() {
        errors.push(FieldError::required(
            &path.child("name"),
            "must specify a resource name",
        ));
    } else {
        errors.extend(container_name_errors(name, &path.child("name")));
    }
    let container = text(source, "container");
    if container.is_empty() {
        errors.push(FieldError::required(
            &path.child("container"),
            "must specify a container",
        ));
    }
    for message in is_dns1123_label(container)
        .into_iter()
        .filter(|_| !container.is_empty())
    {
        errors.push(FieldError::invalid(
            &path.child("container"),
            container,
            message,
        ));
    }
    errors.extend(validate_utilization_or_value(source, path));
    errors
}
