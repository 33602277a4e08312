//! A version's subresources (`status`, `scale` and its JSON paths),
//! printer columns and selectable fields, as the real server checks them.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::object::text_at;
use crate::schema::props::{Additional, Schema};

/// The printer column types and formats.
const COLUMN_TYPES: [&str; 5] = ["boolean", "date", "integer", "number", "string"];

const COLUMN_FORMATS: [&str; 8] = [
    "byte",
    "date",
    "date-time",
    "double",
    "float",
    "int32",
    "int64",
    "password",
];

fn simple_json_path(value: &str, at: &Path) -> ErrorList {
    if value.is_empty() {
        vec![FieldError::invalid(at, value, "must not be empty")]
    } else if !value.starts_with('.') {
        vec![FieldError::invalid(
            at,
            value,
            "must be a simple json path starting with .",
        )]
    } else {
        Vec::new()
    }
}

pub(crate) fn validate_subresources(subresources: &Value, at: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let Some(scale) = subresources.get("scale") else {
        return errors;
    };
    for (key, prefix, words) in [
        (
            "specReplicasPath",
            ".spec.",
            "should be a json path under .spec",
        ),
        (
            "statusReplicasPath",
            ".status.",
            "should be a json path under .status",
        ),
    ] {
        let field = at.child(&format!("scale.{key}"));
        let value = text_at(scale, &format!("/{key}"));
        if value.is_empty() {
            errors.push(FieldError::required(&field, ""));
        } else {
            let problems = simple_json_path(value, &field);
            if !problems.is_empty() {
                errors.extend(problems);
            } else if !value.starts_with(prefix) {
                errors.push(FieldError::invalid(&field, value, words));
            }
        }
    }
    let selector = text_at(scale, "/labelSelectorPath");
    if !selector.is_empty() {
        let field = at.child("scale.labelSelectorPath");
        let problems = simple_json_path(selector, &field);
        if !problems.is_empty() {
            errors.extend(problems);
        } else if !selector.starts_with(".spec.") && !selector.starts_with(".status.") {
            errors.push(FieldError::invalid(
                &field,
                selector,
                "should be a json path under either .spec or .status",
            ));
        }
    }
    errors
}

pub(crate) fn validate_columns(version: &Value, at: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let columns = version
        .get("additionalPrinterColumns")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let types = format!("must be one of {}", COLUMN_TYPES.join(","));
    for (i, column) in columns.iter().enumerate() {
        let cat = at.index(i);
        if text_at(column, "/name").is_empty() {
            errors.push(FieldError::required(&cat.child("name"), ""));
        }
        let kind = text_at(column, "/type");
        if kind.is_empty() {
            errors.push(FieldError::required(&cat.child("type"), types.clone()));
        } else if !COLUMN_TYPES.contains(&kind) {
            errors.push(FieldError::invalid(&cat.child("type"), kind, types.clone()));
        }
        let format = text_at(column, "/format");
        if !format.is_empty() && !COLUMN_FORMATS.contains(&format) {
            errors.push(FieldError::invalid(
                &cat.child("format"),
                format,
                format!("must be one of {}", COLUMN_FORMATS.join(",")),
            ));
        }
        let path = text_at(column, "/jsonPath");
        if path.is_empty() {
            errors.push(FieldError::required(&cat.child("JSONPath"), ""));
        } else {
            errors.extend(simple_json_path(path, &cat.child("JSONPath")));
        }
    }
    errors
}

/// The `selectableFields` of a version.
pub(crate) fn selectable_fields(version: &Value) -> &[Value] {
    version
        .get("selectableFields")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// `MaxSelectableFields`.
const MAX_SELECTABLE_FIELDS: i64 = 8;

/// `cel.ValidFieldPath` without array notation, as selectable fields use
/// it: the path's field names and the schema it points to (none under
/// `additionalProperties: true`), or why it is not valid.
fn selectable_path<'a>(
    path: &str,
    schema: &'a Schema,
) -> Result<(Vec<String>, Option<&'a Schema>), String> {
    let mut tokens = Vec::new();
    let mut start = 0;
    for (i, c) in path.char_indices() {
        if matches!(c, '.' | '[' | ']') {
            if i > start {
                tokens.push(&path[start..i]);
            }
            tokens.push(&path[i..=i]);
            start = i + 1;
        }
    }
    if start < path.len() {
        tokens.push(&path[start..]);
    }
    let not_valid = || "does not refer to a valid field".to_string();
    let mut names = Vec::new();
    let mut node = Some(schema);
    let mut tokens = tokens.into_iter();
    while let Some(token) = tokens.next() {
        match token {
            "[" => return Err("array notation is not allowed".into()),
            "." => {
                let name = tokens.next().ok_or("unexpected end of JSON path")?;
                let current = node.ok_or_else(not_valid)?;
                if !current.properties.is_empty() {
                    node = Some(current.properties.get(name).ok_or_else(not_valid)?);
                } else if let Some(additional) = &current.additional_properties {
                    node = match additional {
                        Additional::Schema(schema) => Some(schema),
                        _ => None,
                    };
                } else {
                    return Err(not_valid());
                }
                names.push(name.to_string());
            }
            other => return Err(format!("expected [ or . but got: {other}")),
        }
    }
    Ok((names, node))
}

/// `ValidateCustomResourceSelectableFields`: each a path to a string,
/// boolean or integer field outsidpub(crate) e metadata, once, at mpub(crate) ost eight.
pub(crate) fn validate_selectable_fields(
    fields: &[Value],
    schema: &Schema,
    at: &Path,
) -> ErrorList {
    let mut errors = ErrorList::new();
    let mut seen = BTreeSet::new();
    for (i, field) in fields.iter().enumerate() {
        let fat = at.index(i).child("jsonPath");
        let path = text_at(field, "/jsonPath");
        if path.is_empty() {
            errors.push(FieldError::required(&fat, ""));
            continue;
        }
        let (names, found) = match selectable_path(path, schema) {
            Ok(found) => found,
            Err(why) => {
                errors.push(FieldError::invalid(
                    &fat,
                    path,
                    format!("is an invalid path: {why}"),
                ));
                continue;
            }
        };
        if names.first().is_some_and(|n| n == "metadata") {
            errors.push(FieldError::invalid(
                &fat,
                path,
                "must not point to fields in metadata",
            ));
        }
        let allowed = found
            .and_then(|s| s.type_.as_deref())
            .is_some_and(|t| matches!(t, "string" | "boolean" | "integer"));
        if !allowed {
            errors.push(FieldError::invalid(
                &fat,
                path,
                "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.",
            ));
        }
        if !seen.insert(names.join(".")) {
            errors.push(FieldError::duplicate(&fat, path));
        }
    }
    if seen.len() as i64 > MAX_SELECTABLE_FIELDS {
        errors.push(FieldError::too_many(
            at,
            seen.len() as i64,
            MAX_SELECTABLE_FIELDS,
        ));
    }
    errors
}
