//! Checks several built-in kinds share (`apimachinery`'s and `pkg/apis/core`'s
//! helpers): data keys, finalizer names, immutability, label selectors.

use serde_json::Value;

use crate::field::BadValue;
use crate::field::ErrorType;
use crate::field::{ErrorList, FieldError, Path};
use crate::metadata::is_path_segment_name;
use crate::metadata::is_qualified_name;
use crate::metadata::is_valid_label_value;
use crate::metadata::validate_labels;

/// `validateKubeFinalizerName`: a finalizer name without a `/` must be
/// one of Kubernetes' own (`kubernetes`, `orphan`, `foregroundDeletion`).
pub(crate) fn kube_finalizer_name(path: &Path, name: &str) -> Option<FieldError> {
    (!name.contains('/') && !["kubernetes", "orphan", "foregroundDeletion"].contains(&name)).then(
        || {
            FieldError::invalid(
                path,
                name,
                "name is neither a standard finalizer name nor is it fully qualified",
            )
        },
    )
}

/// `IsConfigMapKey`: a key of a ConfigMap's or Secret's data.
pub(crate) fn config_map_key_errors(key: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if key.len() > 253 {
        errors.push("must be no more than 253 characters".to_string());
    }
    if key.is_empty()
        || !key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
    {
        errors.push(
            "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
                .to_string(),
        );
    }
    if key == "." {
        errors.push("must not be '.'".to_string());
    } else if key == ".." {
        errors.push("must not be '..'".to_string());
    } else if key.starts_with("..") {
        errors.push("must not start with '..'".to_string());
    }
    errors
}

/// `ValidateImmutableField`: `new` must equal `old` at `path`.
pub(crate) fn immutable(new: Option<&Value>, old: Option<&Value>, path: &Path) -> ErrorList {
    let null = Value::Null;
    let (n, o) = (new.unwrap_or(&null), old.unwrap_or(&null));
    if n == o {
        return ErrorList::new();
    }
    vec![FieldError::invalid(path, n.clone(), "field is immutable")]
}

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

/// A field error whose value is already written (a Go struct's JSON, which
/// [`crate::field::go_value`] would write with sorted keys).
pub(crate) fn error_with_written_value(
    kind: ErrorType,
    path: &Path,
    written: &str,
    detail: &str,
) -> FieldError {
    FieldError {
        kind,
        field: path.clone(),
        value: BadValue::Omit,
        detail: if detail.is_empty() {
            written.to_string()
        } else {
            format!("{written}: {detail}")
        },
    }
}

/// `IsValidPortNum`: a port number from 1 to 65535.
pub(crate) fn port_number_errors(port: i64) -> Vec<String> {
    if (1..=65535).contains(&port) {
        return Vec::new();
    }
    vec!["must be between 1 and 65535, inclusive".to_string()]
}

/// `IsValidPortName`: an IANA service name (at most 15 characters, lower
/// case letters, digits and single hyphens, at least one letter).
pub(crate) fn port_name_errors(name: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if name.len() > 15 {
        errors.push("must be no more than 15 characters".to_string());
    }
    let allowed = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
    if name.is_empty() || !name.chars().all(allowed) {
        errors.push(
            "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".to_string(),
        );
    }
    if !name.chars().any(|c| c.is_ascii_lowercase()) {
        errors.push("must contain at least one letter (a-z)".to_string());
    }
    if name.contains("--") {
        errors.push("must not contain consecutive hyphens".to_string());
    }
    if name.starts_with('-') || name.ends_with('-') {
        errors.push("must not begin or end with a hyphen".to_string());
    }
    errors
}

/// A reference's `kind` or `name`: required, and a path segment
/// (`IsPathSegmentName`), as object references of several kinds check them.
pub(crate) fn required_path_segment(value: &str, path: &Path) -> ErrorList {
    if value.is_empty() {
        return vec![FieldError::required(path, "")];
    }
    is_path_segment_name(value)
        .into_iter()
        .map(|message| FieldError::invalid(path, value, message))
        .collect()
}

/// `obj`'s `spec`, made `{}` when absent or null: a struct field without
/// `omitempty`, which the real server always writes.
pub(crate) fn spec_mut(obj: &mut Value) -> Option<&mut serde_json::Map<String, Value>> {
    let spec = obj
        .as_object_mut()?
        .entry("spec")
        .or_insert_with(|| Value::Object(Default::default()));
    if spec.is_null() {
        *spec = Value::Object(Default::default());
    }
    spec.as_object_mut()
}

/// What storing a built-in object does to its empty lists and maps (the
/// real server stores protobuf, where `[]` and `{}` are no value): each of
/// `keys` of `map` holding one is dropped, as the object reads back
/// (`omitempty` fields only; structs are kept).
pub(crate) fn drop_empty(map: &mut serde_json::Map<String, Value>, keys: &[&str]) {
    for key in keys {
        let empty = match map.get(*key) {
            Some(Value::Array(items)) => items.is_empty(),
            Some(Value::Object(fields)) => fields.is_empty(),
            _ => false,
        };
        if empty {
            map.remove(*key);
        }
    }
}

/// [`drop_empty`] in a label selector: its `matchLabels`,
/// `matchExpressions` and requirements' `values`.
pub(crate) fn drop_empty_in_selector(selector: Option<&mut Value>) {
    let Some(selector) = selector.and_then(Value::as_object_mut) else {
        return;
    };
    drop_empty(selector, &["matchLabels", "matchExpressions"]);
    let requirements = selector
        .get_mut("matchExpressions")
        .and_then(Value::as_array_mut);
    for requirement in requirements.into_iter().flatten() {
        if let Some(requirement) = requirement.as_object_mut() {
            drop_empty(requirement, &["values"]);
        }
    }
}

/// `ValidateConditions` (`metav1.Condition`s, as in a status): types that
/// are label keys and not repeated, a status of `True`, `False` or
/// `Unknown`, a transition time, a reason of the condition reason format,
/// bounded lengths.
pub(crate) fn validate_conditions(conditions: Option<&Value>, path: &Path) -> ErrorList {
    const REASON: &str = "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')";
    let mut errors = ErrorList::new();
    let mut seen = std::collections::HashSet::new();
    let conditions = conditions.and_then(Value::as_array);
    for (i, condition) in conditions.into_iter().flatten().enumerate() {
        let at = path.index(i);
        let text = |key: &str| {
            condition
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
        };
        let kind = text("type");
        if !seen.insert(kind) {
            errors.push(FieldError::duplicate(&at.child("type"), kind));
        }
        for message in is_qualified_name(kind) {
            errors.push(FieldError::invalid(&at.child("type"), kind, message));
        }
        let status = text("status");
        if !matches!(status, "True" | "False" | "Unknown") {
            errors.push(FieldError::not_supported(
                &at.child("status"),
                status,
                &["False".into(), "True".into(), "Unknown".into()],
            ));
        }
        if let Some(generation) = condition.get("observedGeneration").and_then(Value::as_i64)
            && generation < 0
        {
            errors.push(FieldError::invalid(
                &at.child("observedGeneration"),
                generation,
                "must be greater than or equal to zero",
            ));
        }
        if condition
            .get("lastTransitionTime")
            .is_none_or(Value::is_null)
        {
            errors.push(FieldError::required(&at.child("lastTransitionTime"), ""));
        }
        let reason = text("reason");
        let reason_format = |r: &str| {
            let bytes = r.as_bytes();
            bytes.first().is_some_and(u8::is_ascii_alphabetic)
                && bytes
                    .last()
                    .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
                && bytes
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b',' | b':'))
        };
        if reason.is_empty() {
            errors.push(FieldError::required(&at.child("reason"), ""));
        } else {
            if !reason_format(reason) {
                errors.push(FieldError::invalid(&at.child("reason"), reason, REASON));
            }
            if reason.len() > 1024 {
                errors.push(FieldError::too_long(&at.child("reason"), 1024));
            }
        }
        if text("message").len() > 32 * 1024 {
            errors.push(FieldError::too_long(&at.child("message"), 32 * 1024));
        }
    }
    errors
}
