//! `metav1.Condition`s, as `metav1validation.ValidateConditions` checks
//! them in a status.

use serde_json::Value;

use super::field::{ErrorList, FieldError, Path};
use super::names::is_qualified_name;

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
