//! The checks of a rule's own fields, made before any rule is compiled
//! (`ValidateCustomResourceDefinitionOpenAPISchema`): a rule, a message
//! without line breaks, a reason the real server knows, a `fieldPath` the
//! schema has.

use super::fieldpath::valid_field_path;
use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::schema::{Rule, Schema};

/// The reasons a rule may give, in the order the real server lists them.
const REASONS: &[&str] = &[
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
];

/// Line breaks as the CRD's checks see them (`[\n\r]+`).
fn has_newlines(text: &str) -> bool {
    text.contains(['\n', '\r'])
}

/// The checks of a rule's own fields (before any compilation).
pub(crate) fn rule_field_errors(rule: &Rule, schema: &Schema, at: &Path, out: &mut ErrorList) {
    let trimmed_rule = rule.rule.trim();
    let message = rule.message.as_deref().unwrap_or_default();
    let trimmed_message = message.trim();
    if trimmed_rule.is_empty() {
        out.push(FieldError::required(
            &at.child("rule"),
            "rule is not specified",
        ));
    } else if !message.is_empty() && trimmed_message.is_empty() {
        out.push(FieldError::invalid(
            &at.child("message"),
            message,
            "must be non-empty if specified",
        ));
    } else if has_newlines(trimmed_message) {
        out.push(FieldError::invalid(
            &at.child("message"),
            message,
            "must not contain line breaks",
        ));
    } else if has_newlines(trimmed_rule) && trimmed_message.is_empty() {
        out.push(FieldError::required(
            &at.child("message"),
            "message must be specified if rule contains line breaks",
        ));
    }
    let expression = rule.message_expression.as_deref().unwrap_or_default();
    if !expression.is_empty() && expression.trim().is_empty() {
        out.push(FieldError::required(
            &at.child("messageExpression"),
            "messageExpression must be non-empty if specified",
        ));
    }
    if let Some(reason) = rule.reason.as_deref()
        && !REASONS.contains(&reason)
    {
        let supported: Vec<String> = REASONS.iter().map(|r| r.to_string()).collect();
        out.push(FieldError::not_supported(
            &at.child("reason"),
            reason,
            &supported,
        ));
    }
    let field_path = rule.field_path.as_deref().unwrap_or_default();
    if !field_path.is_empty() && field_path.trim().is_empty() {
        out.push(FieldError::invalid(
            &at.child("fieldPath"),
            field_path,
            "must be non-empty if specified",
        ));
    }
    if has_newlines(field_path) {
        out.push(FieldError::invalid(
            &at.child("fieldPath"),
            field_path,
            "must not contain line breaks",
        ));
    }
    if !field_path.is_empty() && valid_field_path(field_path, schema).is_err() {
        out.push(FieldError::invalid(
            &at.child("fieldPath"),
            field_path,
            "must be a valid path",
        ));
    }
}
