//! HorizontalPodAutoscaler (autoscaling/v2): `minReplicas: 1`, the CPU
//! metric at 80% and a behavior's missing rules filled as
//! `SetDefaults_HorizontalPodAutoscaler` fills them, its quantities written
//! as the real server serves them; the checks of
//! `validateHorizontalPodAutoscalerSpec` (replicas, the scale target, the
//! metrics (`metrics.rs`), the scaling rules) with the options the
//! strategy gives (`minReplicas` at least 1 unless it was 0 before; an
//! unchanged target's apiVersion not checked again).

use serde_json::{Map, Value, json};

use super::conversion::to_v2;
use crate::apis::core::pod::nonnegative;
use crate::apis::core::resources::{nonnegative_errors, quantity};
use crate::apis::shape::{drop_empty_in_selector, spec_mut};
use crate::apis::strategy::Rules;
use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::names::{name_is_dns_subdomain, required_path_segment};
use crate::machinery::object::text;
use crate::machinery::quantity::{Quantity, default_quantity};

pub(crate) static RULES: Rules = Rules {
    name: name_is_dns_subdomain,
    default,
    validate: |hpa| validate(hpa, None),
    validate_update: |new, old| validate(new, Some(old)),
    validate_status: Some(validate_status),
};

/// autoscaling/v1: `minReplicas: 1` (its own defaults), then the checks
/// of the autoscaler as v2 holds it (the real server validates its
/// internal version, so the errors name v2's fields).
pub(crate) static V1_RULES: Rules = Rules {
    name: name_is_dns_subdomain,
    default: default_v1,
    validate: |hpa| validate(&to_v2(hpa), None),
    validate_update: |new, old| validate(&to_v2(new), Some(&to_v2(old))),
    validate_status: Some(|new, old| validate_status(&to_v2(new), &to_v2(old))),
};

fn default_v1(hpa: &mut Value) {
    if let Some(spec) = spec_mut(hpa)
        && spec.get("minReplicas").is_none_or(Value::is_null)
    {
        spec.insert("minReplicas".into(), json!(1));
    }
}

/// [`prepare_create`] for autoscaling/v1, whose status always has its
/// replica counts.
pub(crate) fn prepare_create_v1(hpa: &mut Value) {
    if let Some(map) = hpa.as_object_mut() {
        map.insert(
            "status".into(),
            json!({"currentReplicas": 0, "desiredReplicas": 0}),
        );
    }
}

/// The metric sources, as `type` names them and as the field holding each.
pub(super) const SOURCES: [(&str, &str); 5] = [
    ("Object", "object"),
    ("Pods", "pods"),
    ("Resource", "resource"),
    ("External", "external"),
    ("ContainerResource", "containerResource"),
];

/// What a new autoscaler's status is: no replicas wanted, no metrics seen.
pub(crate) fn prepare_create(hpa: &mut Value) {
    if let Some(map) = hpa.as_object_mut() {
        map.insert(
            "status".into(),
            json!({"desiredReplicas": 0, "currentMetrics": null}),
        );
    }
}

/// Why `hpa` does not decode: a metric target's quantity, or a scaling
/// rule's tolerance, that does not parse (a `400`).
pub(crate) fn decode(hpa: &Value) -> Option<String> {
    let metrics = hpa.pointer("/spec/metrics").and_then(Value::as_array);
    let targets = metrics.into_iter().flatten().flat_map(|metric| {
        SOURCES
            .iter()
            .filter_map(|(_, source)| metric.get(*source).and_then(|s| s.get("target")))
    });
    let quantities = targets
        .flat_map(|target| ["value", "averageValue"].map(|key| target.get(key)))
        .chain(
            ["scaleUp", "scaleDown"]
                .map(|rules| hpa.pointer(&format!("/spec/behavior/{rules}/tolerance"))),
        );
    quantities
        .flatten()
        .filter(|q| !q.is_null())
        .find_map(|q| Quantity::from_json(q).err())
        .map(|why| why.to_string())
}

fn default(hpa: &mut Value) {
    let Some(spec) = spec_mut(hpa) else {
        return;
    };
    if spec.get("minReplicas").is_none_or(Value::is_null) {
        spec.insert("minReplicas".into(), json!(1));
    }
    let no_metrics = spec
        .get("metrics")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty);
    if no_metrics {
        spec.insert(
            "metrics".into(),
            json!([{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80}}}]),
        );
    }
    for metric in spec
        .get_mut("metrics")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        for (_, source) in SOURCES {
            let selector = metric
                .get_mut(source)
                .and_then(|s| s.get_mut("metric"))
                .and_then(|m| m.get_mut("selector"));
            drop_empty_in_selector(selector);
            let target = metric.get_mut(source).and_then(|s| s.get_mut("target"));
            if let Some(target) = target.and_then(Value::as_object_mut) {
                for key in ["value", "averageValue"] {
                    default_quantity(target.get_mut(key).filter(|v| !v.is_null()));
                }
            }
        }
    }
    if let Some(behavior) = spec.get_mut("behavior").and_then(Value::as_object_mut) {
        default_rules(
            behavior,
            "scaleUp",
            Some(0),
            &[("Pods", 4), ("Percent", 100)],
        );
        default_rules(behavior, "scaleDown", None, &[("Percent", 100)]);
    }
}

/// `GenerateHPAScaleUpRules` / `GenerateHPAScaleDownRules`: the rules'
/// unset fields from the defaults (policies of 15 seconds).
fn default_rules(
    behavior: &mut Map<String, Value>,
    key: &str,
    window: Option<i64>,
    policies: &[(&str, i64)],
) {
    let rules = behavior.entry(key).or_insert_with(|| json!({}));
    if rules.is_null() {
        *rules = json!({});
    }
    let Some(rules) = rules.as_object_mut() else {
        return;
    };
    let mut set = |field: &str, value: Value| {
        if rules.get(field).is_none_or(Value::is_null) {
            rules.insert(field.into(), value);
        }
    };
    if let Some(window) = window {
        set("stabilizationWindowSeconds", json!(window));
    }
    set("selectPolicy", json!("Max"));
    let policies: Vec<Value> = policies
        .iter()
        .map(|(kind, value)| json!({"type": kind, "value": value, "periodSeconds": 15}))
        .collect();
    set("policies", Value::Array(policies));
    if let Some(tolerance) = rules.get_mut("tolerance").filter(|t| !t.is_null()) {
        default_quantity(Some(tolerance));
    }
}

pub(super) fn int(value: &Value, key: &str) -> Option<i64> {
    value.get(key).and_then(Value::as_i64)
}

fn validate(hpa: &Value, old: Option<&Value>) -> ErrorList {
    let empty = json!({});
    let spec = hpa.get("spec").unwrap_or(&empty);
    let old_spec = old.map(|o| o.get("spec").unwrap_or(&empty));
    let path = Path::new(["spec"]);
    let mut errors = ErrorList::new();
    let min = int(spec, "minReplicas");
    let max = int(spec, "maxReplicas").unwrap_or(0);
    // Scaling to zero stays allowed for an autoscaler that had it.
    let lower = if old_spec.and_then(|o| int(o, "minReplicas")) == Some(0) {
        0
    } else {
        1
    };
    if let Some(min) = min.filter(|m| *m < lower) {
        errors.push(FieldError::invalid(
            &path.child("minReplicas"),
            min,
            format!("must be greater than or equal to {lower}"),
        ));
    }
    if max == 0 {
        errors.push(FieldError::required(
            &path.child("maxReplicas"),
            "must be set and greater than 0",
        ));
    } else if max < 0 {
        errors.push(FieldError::invalid(
            &path.child("maxReplicas"),
            max,
            "must be greater than or equal to 1",
        ));
    }
    if min.is_some_and(|min| max < min) {
        errors.push(FieldError::invalid(
            &path.child("maxReplicas"),
            max,
            "must be greater than or equal to `minReplicas`",
        ));
    }
    let target = spec.get("scaleTargetRef").unwrap_or(&empty);
    // An unchanged target's apiVersion is not checked again; a
    // ReplicationController may be of the core group.
    let same_target = old_spec.is_some_and(|o| {
        let old_target = o.get("scaleTargetRef").unwrap_or(&empty);
        text(old_target, "apiVersion") == text(target, "apiVersion")
            && text(old_target, "kind") == text(target, "kind")
    });
    let api_version = if same_target {
        ApiVersion::Unchecked
    } else if text(target, "kind") == "ReplicationController" {
        ApiVersion::AnyGroup
    } else {
        ApiVersion::Grouped
    };
    errors.extend(validate_reference(
        target,
        &path.child("scaleTargetRef"),
        api_version,
    ));
    errors.extend(super::metrics::validate_metrics(
        spec,
        &path.child("metrics"),
        min,
        old_spec,
    ));
    if let Some(behavior) = spec.get("behavior").filter(|b| !b.is_null()) {
        for key in ["scaleUp", "scaleDown"] {
            if let Some(rules) = behavior.get(key).filter(|r| !r.is_null()) {
                errors.extend(validate_scaling_rules(
                    rules,
                    &path.child("behavior").child(key),
                ));
            }
        }
    }
    errors
}

/// How a reference's `apiVersion` is checked.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum ApiVersion {
    /// Not at all.
    Unchecked,
    /// It parses; the core group is allowed.
    AnyGroup,
    /// It parses and names a group.
    Grouped,
}

/// `ValidateCrossVersionObjectReference`.
pub(super) fn validate_reference(
    reference: &Value,
    path: &Path,
    api_version: ApiVersion,
) -> ErrorList {
    let mut errors = ErrorList::new();
    for key in ["kind", "name"] {
        errors.extend(required_path_segment(
            text(reference, key),
            &path.child(key),
        ));
    }
    let version = text(reference, "apiVersion");
    let why = match (api_version, version.matches('/').count()) {
        (ApiVersion::Unchecked, _) => None,
        (_, 2..) => Some(format!("unexpected GroupVersion string: {version}")),
        (ApiVersion::Grouped, 0) => Some("apiVersion must specify API group".to_string()),
        (ApiVersion::Grouped, _) if version.starts_with('/') => {
            Some("apiVersion must specify API group".to_string())
        }
        _ => None,
    };
    if let Some(why) = why {
        errors.push(FieldError::invalid(&path.child("apiVersion"), version, why));
    }
    errors
}

/// `validateScalingRules` and `validateScalingPolicy`.
fn validate_scaling_rules(rules: &Value, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    if let Some(window) = int(rules, "stabilizationWindowSeconds") {
        let at = path.child("stabilizationWindowSeconds");
        if window < 0 {
            errors.push(FieldError::invalid(
                &at,
                window,
                "must be greater than or equal to zero",
            ));
        }
        if window > 3600 {
            errors.push(FieldError::invalid(
                &at,
                window,
                "must be less than or equal to 3600",
            ));
        }
    }
    if let Some(select) = rules.get("selectPolicy").and_then(Value::as_str)
        && !matches!(select, "Max" | "Min" | "Disabled")
    {
        errors.push(FieldError::not_supported(
            &path.child("selectPolicy"),
            select,
            &["Disabled".into(), "Max".into(), "Min".into()],
        ));
    }
    let policies = rules.get("policies").and_then(Value::as_array);
    if policies.is_none_or(Vec::is_empty) {
        errors.push(FieldError::required(
            &path.child("policies"),
            "must specify at least one Policy",
        ));
    }
    for (i, policy) in policies.into_iter().flatten().enumerate() {
        let at = path.child("policies").index(i);
        let kind = text(policy, "type");
        if !matches!(kind, "Pods" | "Percent") {
            errors.push(FieldError::not_supported(
                &at.child("type"),
                kind,
                &["Percent".into(), "Pods".into()],
            ));
        }
        let value = int(policy, "value").unwrap_or(0);
        if value <= 0 {
            errors.push(FieldError::invalid(
                &at.child("value"),
                value,
                "must be greater than zero",
            ));
        }
        let period = int(policy, "periodSeconds").unwrap_or(0);
        if period <= 0 {
            errors.push(FieldError::invalid(
                &at.child("periodSeconds"),
                period,
                "must be greater than zero",
            ));
        }
        if period > 1800 {
            errors.push(FieldError::invalid(
                &at.child("periodSeconds"),
                period,
                "must be less than or equal to 1800",
            ));
        }
    }
    if let Some(tolerance) = rules.get("tolerance").filter(|t| !t.is_null()) {
        errors.extend(nonnegative_errors(
            &quantity(tolerance),
            &path.child("tolerance"),
        ));
    }
    errors
}

/// `ValidateHorizontalPodAutoscalerStatusUpdate`: replica counts are not
/// negative.
fn validate_status(new: &Value, _old: &Value) -> ErrorList {
    let empty = json!({});
    let status = new.get("status").unwrap_or(&empty);
    ["currentReplicas", "desiredReplicas"]
        .into_iter()
        .flat_map(|key| nonnegative(status, key, &Path::new(["status"])))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::default;

    /// A behavior's rules are filled field by field: a rule's own fields
    /// stay, an empty `policies` list stays (and is refused), scale-down
    /// gets no stabilization window.
    #[test]
    fn behavior_rules_are_filled_field_by_field() {
        let mut hpa = json!({"spec": {"maxReplicas": 3, "behavior": {
            "scaleUp": {"selectPolicy": "Min", "tolerance": "0.05"},
            "scaleDown": {"policies": []}}}});
        default(&mut hpa);
        let behavior = &hpa["spec"]["behavior"];
        assert_eq!(
            behavior["scaleUp"],
            json!({"selectPolicy": "Min", "tolerance": "50m", "stabilizationWindowSeconds": 0,
                "policies": [{"type": "Pods", "value": 4, "periodSeconds": 15},
                    {"type": "Percent", "value": 100, "periodSeconds": 15}]})
        );
        assert_eq!(
            behavior["scaleDown"],
            json!({"policies": [], "selectPolicy": "Max"})
        );
        assert_eq!(hpa["spec"]["minReplicas"], 1);
        assert_eq!(hpa["spec"]["metrics"][0]["resource"]["name"], "cpu");
    }
}
