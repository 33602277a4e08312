//! Label selectors as apimachinery checks and converts them
//! (`metav1validation.ValidateLabelSelector`, `LabelSelectorAsSelector`):
//! their requirements' operators and values, and whether one selects a set
//! of labels.

use serde_json::Value;

use super::field::{ErrorList, FieldError, Path};
use super::names::{is_qualified_name, is_valid_label_value};
use super::objectmeta::fields::validate_labels;

/// `ValidateLabelSelector` (label values checked strictly): `matchLabels`
/// as labels, each requirement's operator, values and key. A missing
/// selector has no errors.
pub(crate) fn validate_label_selector(selector: Option<&Value>, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let Some(selector) = selector.filter(|s| !s.is_null()) else {
        return errors;
    };
    if let Some(labels) = selector.get("matchLabels").filter(|l| l.is_object()) {
        errors.extend(validate_labels(
            &serde_json::json!({ "labels": labels }),
            &path.child("matchLabels"),
        ));
    }
    let requirements = selector.get("matchExpressions").and_then(Value::as_array);
    for (i, requirement) in requirements.into_iter().flatten().enumerate() {
        let at = path.child("matchExpressions").index(i);
        let values = requirement.get("values").and_then(Value::as_array);
        let count = values.map_or(0, Vec::len);
        let operator = requirement
            .get("operator")
            .and_then(Value::as_str)
            .unwrap_or_default();
        errors.extend(requirement_operator_errors(operator, count, false, &at));
        let key = requirement
            .get("key")
            .and_then(Value::as_str)
            .unwrap_or_default();
        for message in is_qualified_name(key) {
            errors.push(FieldError::invalid(&at.child("key"), key, message));
        }
        for (j, value) in values.into_iter().flatten().enumerate() {
            let value = value.as_str().unwrap_or_default();
            for message in is_valid_label_value(value) {
                errors.push(FieldError::invalid(
                    &at.child("values").index(j),
                    value,
                    message,
                ));
            }
        }
    }
    errors
}

/// The operator of a selector requirement (a label selector's, or with
/// `numeric` a node selector's, which has `Gt` and `Lt` too) and the number
/// of values it takes.
pub(crate) fn requirement_operator_errors(
    operator: &str,
    values: usize,
    numeric: bool,
    at: &Path,
) -> ErrorList {
    let error = match operator {
        "In" | "NotIn" if values == 0 => FieldError::required(
            &at.child("values"),
            "must be specified when `operator` is 'In' or 'NotIn'",
        ),
        "Exists" | "DoesNotExist" if values > 0 => FieldError::forbidden(
            &at.child("values"),
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        ),
        "Gt" | "Lt" if numeric && values != 1 => FieldError::required(
            &at.child("values"),
            "must be specified single value when `operator` is 'Lt' or 'Gt'",
        ),
        "In" | "NotIn" | "Exists" | "DoesNotExist" => return ErrorList::new(),
        "Gt" | "Lt" if numeric => return ErrorList::new(),
        other => FieldError::invalid(
            &at.child("operator"),
            other,
            "not a valid selector operator",
        ),
    };
    vec![error]
}

/// What `LabelSelectorAsSelector` makes of a selector.
#[derive(Debug, PartialEq)]
pub(crate) enum Selector {
    /// No selector: selects nothing.
    Nothing,
    /// An empty selector: selects everything.
    Everything,
    /// Requirements to meet.
    Some,
    /// A selector that does not convert (its checks fail).
    Invalid,
}

/// How `selector` converts (`LabelSelectorAsSelector`).
pub(crate) fn selector_kind(selector: Option<&Value>) -> Selector {
    let Some(selector) = selector.filter(|s| !s.is_null()) else {
        return Selector::Nothing;
    };
    if !validate_label_selector(Some(selector), &Path::none()).is_empty() {
        return Selector::Invalid;
    }
    let labels = selector.get("matchLabels").and_then(Value::as_object);
    let requirements = selector.get("matchExpressions").and_then(Value::as_array);
    if labels.is_none_or(|l| l.is_empty()) && requirements.is_none_or(|r| r.is_empty()) {
        Selector::Everything
    } else {
        Selector::Some
    }
}

/// Whether `selector` (a valid one) selects an object with `labels`; no
/// selector selects nothing.
pub(crate) fn selector_matches(selector: Option<&Value>, labels: Option<&Value>) -> bool {
    let Some(selector) = selector.filter(|s| !s.is_null()) else {
        return false;
    };
    let label = |key: &str| labels.and_then(|l| l.get(key)).and_then(Value::as_str);
    let labels_match = selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .all(|(k, v)| label(k).is_some() && label(k) == v.as_str());
    let requirements_match = selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .all(|requirement| {
            let key = requirement
                .get("key")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let mut values = requirement
                .get("values")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str);
            match requirement.get("operator").and_then(Value::as_str) {
                Some("In") => label(key).is_some_and(|v| values.any(|x| x == v)),
                Some("NotIn") => label(key).is_none_or(|v| !values.any(|x| x == v)),
                Some("Exists") => label(key).is_some(),
                Some("DoesNotExist") => label(key).is_none(),
                _ => false,
            }
        });
    labels_match && requirements_match
}
