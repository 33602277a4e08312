//! A PodSpec's scheduling directives as `ValidateTolerations` and
//! `validateTopologySpreadConstraints` check them.

use serde_json::Value;

use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::labels::{requirement_operator_errors, validate_label_selector};
use crate::machinery::names::{
    is_dns1123_label, is_dns1123_subdomain, is_qualified_name, is_valid_label_value,
};
use crate::machinery::object::text;

fn strings(values: &[&str]) -> Vec<String> {
    values.iter().map(|v| v.to_string()).collect()
}

/// `ValidateTolerations`: keys, operators and values, effects.
pub(crate) fn validate_tolerations(spec: &Value, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let tolerations = spec.get("tolerations").and_then(Value::as_array);
    for (i, toleration) in tolerations.into_iter().flatten().enumerate() {
        let at = path.index(i);
        let (key, operator, value, effect) = (
            text(toleration, "key"),
            text(toleration, "operator"),
            text(toleration, "value"),
            text(toleration, "effect"),
        );
        if !key.is_empty() {
            for message in is_qualified_name(key) {
                errors.push(FieldError::invalid(&at.child("key"), key, message));
            }
        }
        if key.is_empty() && operator != "Exists" {
            errors.push(FieldError::invalid(
                &at.child("operator"),
                operator,
                "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
            ));
        }
        if toleration
            .get("tolerationSeconds")
            .is_some_and(|s| !s.is_null())
            && effect != "NoExecute"
        {
            errors.push(FieldError::invalid(
                &at.child("effect"),
                effect,
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            ));
        }
        match operator {
            "Equal" | "" => {
                let messages = is_valid_label_value(value);
                if !messages.is_empty() {
                    errors.push(FieldError::invalid(
                        &at.child("operator"),
                        value,
                        messages.join(";"),
                    ));
                }
            }
            "Exists" => {
                if !value.is_empty() {
                    errors.push(FieldError::invalid(
                        &at.child("operator"),
                        value,
                        "value must be empty when `operator` is 'Exists'",
                    ));
                }
            }
            "Lt" | "Gt" => errors.push(FieldError::not_supported(
                &at.child("operator"),
                operator,
                &strings(&["Equal", "Exists", "Lt", "Gt"]),
            )),
            other => errors.push(FieldError::not_supported(
                &at.child("operator"),
                other,
                &strings(&["Equal", "Exists"]),
            )),
        }
        if !effect.is_empty() && !["NoSchedule", "PreferNoSchedule", "NoExecute"].contains(&effect)
        {
            errors.push(FieldError::not_supported(
                &at.child("effect"),
                effect,
                &strings(&["NoSchedule", "PreferNoSchedule", "NoExecute"]),
            ));
        }
    }
    errors
}

/// `validateTopologySpreadConstraints`: a positive skew, a topology key,
/// a known action, each (key, action) once, a valid selector.
pub(crate) fn validate_spread(spec: &Value, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let constraints = spec
        .get("topologySpreadConstraints")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for (i, constraint) in constraints.iter().enumerate() {
        let at = path.index(i);
        let skew = constraint
            .get("maxSkew")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if skew <= 0 {
            errors.push(FieldError::invalid(
                &at.child("maxSkew"),
                skew,
                "must be greater than zero",
            ));
        }
        let key = text(constraint, "topologyKey");
        if key.is_empty() {
            errors.push(FieldError::required(
                &at.child("topologyKey"),
                "can not be empty",
            ));
        }
        let action = text(constraint, "whenUnsatisfiable");
        if action != "DoNotSchedule" && action != "ScheduleAnyway" {
            errors.push(FieldError::not_supported(
                &at.child("whenUnsatisfiable"),
                action,
                &strings(&["DoNotSchedule", "ScheduleAnyway"]),
            ));
        }
        if constraints[i + 1..]
            .iter()
            .any(|c| text(c, "topologyKey") == key && text(c, "whenUnsatisfiable") == action)
        {
            errors.push(FieldError::duplicate(
                &at.child("{topologyKey, whenUnsatisfiable}"),
                format!("{{{key}, {action}}}").as_str(),
            ));
        }
        if let Some(domains) = constraint.get("minDomains").and_then(Value::as_i64) {
            if domains <= 0 {
                errors.push(FieldError::invalid(
                    &at.child("minDomains"),
                    domains,
                    "must be greater than zero",
                ));
            }
            if action != "DoNotSchedule" {
                errors.push(FieldError::invalid(
                    &at.child("minDomains"),
                    domains,
                    format!(
                        "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}"
                    ),
                ));
            }
        }
        errors.extend(validate_label_selector(
            constraint.get("labelSelector"),
            &at.child("labelSelector"),
        ));
    }
    errors
}

/// `validateAffinity`: node affinity's terms and requirements, pod
/// (anti-)affinity's terms, weights from 1 to 100.
pub(crate) fn validate_affinity(spec: &Value, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let Some(affinity) = spec.get("affinity").filter(|a| a.is_object()) else {
        return errors;
    };
    if let Some(node) = affinity.get("nodeAffinity").filter(|n| n.is_object()) {
        let at = path.child("nodeAffinity");
        if let Some(required) = node
            .get("requiredDuringSchedulingIgnoredDuringExecution")
            .filter(|r| r.is_object())
        {
            let terms_path = at
                .child("requiredDuringSchedulingIgnoredDuringExecution")
                .child("nodeSelectorTerms");
            let terms = required
                .get("nodeSelectorTerms")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default();
            if terms.is_empty() {
                errors.push(FieldError::required(
                    &terms_path,
                    "must have at least one node selector term",
                ));
            }
            for (i, term) in terms.iter().enumerate() {
                errors.extend(node_selector_term(term, false, &terms_path.index(i)));
            }
        }
        let preferred = node
            .get("preferredDuringSchedulingIgnoredDuringExecution")
            .and_then(Value::as_array);
        for (i, term) in preferred.into_iter().flatten().enumerate() {
            let term_path = at
                .child("preferredDuringSchedulingIgnoredDuringExecution")
                .index(i);
            errors.extend(weight(term, &term_path));
            errors.extend(node_selector_term(
                term.get("preference").unwrap_or(&Value::Null),
                true,
                &term_path.child("preference"),
            ));
        }
    }
    for kind in ["podAffinity", "podAntiAffinity"] {
        let Some(pods) = affinity.get(kind).filter(|p| p.is_object()) else {
            continue;
        };
        let at = path.child(kind);
        let required = pods
            .get("requiredDuringSchedulingIgnoredDuringExecution")
            .and_then(Value::as_array);
        for (i, term) in required.into_iter().flatten().enumerate() {
            errors.extend(pod_affinity_term(
                term,
                &at.child("requiredDuringSchedulingIgnoredDuringExecution")
                    .index(i),
            ));
        }
        let preferred = pods
            .get("preferredDuringSchedulingIgnoredDuringExecution")
            .and_then(Value::as_array);
        for (i, term) in preferred.into_iter().flatten().enumerate() {
            let term_path = at
                .child("preferredDuringSchedulingIgnoredDuringExecution")
                .index(i);
            errors.extend(weight(term, &term_path));
            errors.extend(pod_affinity_term(
                term.get("podAffinityTerm").unwrap_or(&Value::Null),
                &term_path.child("podAffinityTerm"),
            ));
        }
    }
    errors
}

/// A preferred term's weight, from 1 to 100.
fn weight(term: &Value, path: &Path) -> ErrorList {
    let weight = term.get("weight").and_then(Value::as_i64).unwrap_or(0);
    if (1..=100).contains(&weight) {
        return ErrorList::new();
    }
    vec![FieldError::invalid(
        &path.child("weight"),
        weight,
        "must be in the range 1-100",
    )]
}

/// `ValidateNodeSelectorTerm`.
fn node_selector_term(term: &Value, any_value: bool, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let expressions = term.get("matchExpressions").and_then(Value::as_array);
    for (j, requirement) in expressions.into_iter().flatten().enumerate() {
        let at = path.child("matchExpressions").index(j);
        let values = requirement.get("values").and_then(Value::as_array);
        let count = values.map_or(0, Vec::len);
        errors.extend(requirement_operator_errors(
            text(requirement, "operator"),
            count,
            true,
            &at,
        ));
        let key = text(requirement, "key");
        for message in is_qualified_name(key) {
            errors.push(FieldError::invalid(&at.child("key"), key, message));
        }
        if !any_value {
            for (k, value) in values.into_iter().flatten().enumerate() {
                let value = value.as_str().unwrap_or_default();
                for message in is_valid_label_value(value) {
                    errors.push(FieldError::invalid(
                        &at.child("values").index(k),
                        value,
                        message,
                    ));
                }
            }
        }
    }
    let fields = term.get("matchFields").and_then(Value::as_array);
    for (j, requirement) in fields.into_iter().flatten().enumerate() {
        let at = path.child("matchFields").index(j);
        let values = requirement.get("values").and_then(Value::as_array);
        match text(requirement, "operator") {
            "In" | "NotIn" => {
                if values.map_or(0, Vec::len) != 1 {
                    errors.push(FieldError::required(
                        &at.child("values"),
                        "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                    ));
                }
            }
            other => errors.push(FieldError::invalid(
                &at.child("operator"),
                other,
                "not a valid selector operator",
            )),
        }
        let key = text(requirement, "key");
        if key == "metadata.name" {
            for (k, value) in values.into_iter().flatten().enumerate() {
                let value = value.as_str().unwrap_or_default();
                for message in is_dns1123_subdomain(value) {
                    errors.push(FieldError::invalid(
                        &at.child("values").index(k),
                        value,
                        message,
                    ));
                }
            }
        } else {
            errors.push(FieldError::invalid(
                &at.child("key"),
                key,
                "not a valid field selector key",
            ));
        }
    }
    errors
}

/// `validatePodAffinityTerm`: its selectors, namespaces and topology key.
fn pod_affinity_term(term: &Value, path: &Path) -> ErrorList {
    let mut errors =
        validate_label_selector(term.get("labelSelector"), &path.child("labelSelector"));
    errors.extend(validate_label_selector(
        term.get("namespaceSelector"),
        &path.child("namespaceSelector"),
    ));
    let namespaces = term.get("namespaces").and_then(Value::as_array);
    for name in namespaces.into_iter().flatten() {
        let name = name.as_str().unwrap_or_default();
        for message in is_dns1123_label(name) {
            errors.push(FieldError::invalid(&path.child("namespace"), name, message));
        }
    }
    let key = text(term, "topologyKey");
    if key.is_empty() {
        errors.push(FieldError::required(
            &path.child("topologyKey"),
            "can not be empty",
        ));
    }
    for message in is_qualified_name(key) {
        errors.push(FieldError::invalid(
            &path.child("topologyKey"),
            key,
            message,
        ));
    }
    errors
}
