//! The errors kube-openapi's validator reports (`validation/errors`:
//! `schema.go`, and `validate/schema_messages.go` for the plain ones), and
//! their conversion into field errors as apiextensions does it
//! (`kubeOpenAPIResultToFieldErrors` in `pkg/apiserver/validation`).
//!
//! Every message is built as Go builds it, with `in` always `body`: the
//! message is what the field error shows, and also what the validator
//! compares to drop repeated errors.

use serde_json::Value;

use super::go;
use crate::go::json::encode::go_json;
use crate::go::strconv::go_quote;
use crate::machinery::field::{ErrorList, FieldError, Path};

/// The code of a `*errors.Validation` (only the ones the schema validator
/// can produce).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Code {
    /// `InvalidTypeCode`.
    InvalidType,
    /// `RequiredFailCode`.
    Required,
    /// `TooLongFailCode`.
    TooLong,
    /// `TooShortFailCode`.
    TooShort,
    /// `PatternFailCode`.
    Pattern,
    /// `EnumFailCode`.
    Enum,
    /// `MultipleOfFailCode`.
    MultipleOf,
    /// `MaxFailCode`.
    Max,
    /// `MinFailCode`.
    Min,
    /// `UniqueFailCode`.
    Unique,
    /// `MaxItemsFailCode`.
    MaxItems,
    /// `MinItemsFailCode`.
    MinItems,
    /// `TooFewPropertiesCode`.
    TooFewProperties,
    /// `TooManyPropertiesCode`.
    TooManyProperties,
    /// `UnallowedPropertyCode`.
    UnallowedProperty,
    /// `MultipleOfMustBePositiveCode`.
    MultipleOfMustBePositive,
}

/// A `*errors.Validation`: the failed check, where, the value and the
/// limit it is about.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Validation {
    /// Which check failed.
    pub(crate) code: Code,
    /// The path of the value, as the validator writes it (`spec.x`,
    /// `.spec` for a required root property).
    pub(crate) name: String,
    /// The value (`None` is Go's nil).
    pub(crate) value: Option<Value>,
    /// The limit, for the checks that have an integer one.
    pub(crate) valid: Option<i64>,
    /// The allowed values of an enum.
    pub(crate) values: Vec<Value>,
    /// The message.
    pub(crate) message: String,
}

/// One error in a validation result.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum OpenApiError {
    /// A `*errors.Validation`.
    Validation(Validation),
    /// Any other error (`errors.New`, `fmt.Errorf`): only a message.
    Plain(String),
}

impl OpenApiError {
    /// The message (`Error()`).
    pub(crate) fn message(&self) -> &str {
        match self {
            OpenApiError::Validation(v) => &v.message,
            OpenApiError::Plain(m) => m,
        }
    }
}

fn validation(code: Code, name: &str, value: Option<Value>, message: String) -> OpenApiError {
    OpenApiError::Validation(Validation {
        code,
        name: name.to_string(),
        value,
        valid: None,
        values: Vec::new(),
        message,
    })
}

fn with_valid(mut error: OpenApiError, limit: i64) -> OpenApiError {
    if let OpenApiError::Validation(v) = &mut error {
        v.valid = Some(limit);
    }
    error
}

/// `errors.InvalidType` with a string value: `x in body must be of type
/// integer: "string"`.
pub(crate) fn invalid_type(name: &str, type_name: &str, value: &str) -> OpenApiError {
    let message = format!(
        "{name} in body must be of type {type_name}: {}",
        go_quote(value)
    );
    validation(Code::InvalidType, name, Some(Value::from(value)), message)
}

/// `errors.Required`.
pub(crate) fn required(name: &str) -> OpenApiError {
    validation(
        Code::Required,
        name,
        None,
        format!("{name} in body is required"),
    )
}

/// `errors.TooLong`.
pub(crate) fn too_long(name: &str, max: i64, value: &str) -> OpenApiError {
    let message = format!("{name} in body should be at most {max} chars long");
    with_valid(
        validation(Code::TooLong, name, Some(Value::from(value)), message),
        max,
    )
}

/// `errors.TooShort`.
pub(crate) fn too_short(name: &str, min: i64, value: &str) -> OpenApiError {
    let message = format!("{name} in body should be at least {min} chars long");
    with_valid(
        validation(Code::TooShort, name, Some(Value::from(value)), message),
        min,
    )
}

/// `errors.FailedPattern`.
pub(crate) fn failed_pattern(name: &str, pattern: &str, value: &str) -> OpenApiError {
    let message = format!("{name} in body should match '{pattern}'");
    validation(Code::Pattern, name, Some(Value::from(value)), message)
}

/// `errors.EnumFail`.
pub(crate) fn enum_fail(name: &str, value: Option<Value>, values: &[Value]) -> OpenApiError {
    let listed: Vec<String> = values.iter().map(go::plain).collect();
    let message = format!("{name} in body should be one of [{}]", listed.join(" "));
    let mut error = validation(Code::Enum, name, value, message);
    if let OpenApiError::Validation(v) = &mut error {
        v.values = values.to_vec();
    }
    error
}

/// `errors.NotMultipleOf`: `factor` as Go's `%v` prints it.
pub(crate) fn not_multiple_of(name: &str, factor: &str, value: Value) -> OpenApiError {
    let message = format!("{name} in body should be a multiple of {factor}");
    validation(Code::MultipleOf, name, Some(value), message)
}

/// `errors.MultipleOfMustBePositive`: `factor` is the value, printed with
/// `%v`.
pub(crate) fn multiple_of_must_be_positive(name: &str, factor: go::Num) -> OpenApiError {
    let message = format!(
        "factor MultipleOf declared for {name} must be positive: {}",
        factor.go_string()
    );
    validation(
        Code::MultipleOfMustBePositive,
        name,
        Some(factor.to_value()),
        message,
    )
}

/// `errors.ExceedsMaximum` and its int form: `max` as `%v` prints it.
pub(crate) fn exceeds_maximum(
    name: &str,
    max: &str,
    exclusive: bool,
    value: Value,
) -> OpenApiError {
    let message = if exclusive {
        format!("{name} in body should be less than {max}")
    } else {
        format!("{name} in body should be less than or equal to {max}")
    };
    validation(Code::Max, name, Some(value), message)
}

/// `errors.ExceedsMinimum` and its int form.
pub(crate) fn exceeds_minimum(
    name: &str,
    min: &str,
    exclusive: bool,
    value: Value,
) -> OpenApiError {
    let message = if exclusive {
        format!("{name} in body should be greater than {min}")
    } else {
        format!("{name} in body should be greater than or equal to {min}")
    };
    validation(Code::Min, name, Some(value), message)
}

/// `errors.DuplicateItems`.
pub(crate) fn duplicate_items(name: &str) -> OpenApiError {
    let message = format!("{name} in body shouldn't contain duplicates");
    validation(Code::Unique, name, None, message)
}

/// `errors.TooManyItems`.
pub(crate) fn too_many_items(name: &str, max: i64, size: i64) -> OpenApiError {
    let message = format!("{name} in body should have at most {max} items");
    with_valid(
        validation(Code::MaxItems, name, Some(size.into()), message),
        max,
    )
}

/// `errors.TooFewItems`.
pub(crate) fn too_few_items(name: &str, min: i64, size: i64) -> OpenApiError {
    let message = format!("{name} in body should have at least {min} items");
    with_valid(
        validation(Code::MinItems, name, Some(size.into()), message),
        min,
    )
}

/// `errors.TooManyProperties`.
pub(crate) fn too_many_properties(name: &str, max: i64, size: i64) -> OpenApiError {
    let message = format!("{name} in body should have at most {max} properties");
    with_valid(
        validation(Code::TooManyProperties, name, Some(size.into()), message),
        max,
    )
}

/// `errors.TooFewProperties`.
pub(crate) fn too_few_properties(name: &str, min: i64, size: i64) -> OpenApiError {
    let message = format!("{name} in body should have at least {min} properties");
    with_valid(
        validation(Code::TooFewProperties, name, Some(size.into()), message),
        min,
    )
}

/// `errors.PropertyNotAllowed`: the name is the object's, the value the key.
pub(crate) fn property_not_allowed(name: &str, key: &str) -> OpenApiError {
    let message = format!("{name}.{key} in body is a forbidden property");
    validation(
        Code::UnallowedProperty,
        name,
        Some(Value::from(key)),
        message,
    )
}

/// `mustValidateAtLeastOneSchemaMsg`.
pub(crate) fn at_least_one(path: &str) -> OpenApiError {
    OpenApiError::Plain(format!(
        "{} must validate at least one schema (anyOf)",
        go_quote(path)
    ))
}

/// `mustValidateOnlyOneSchemaMsg`.
pub(crate) fn only_one(path: &str, additional: &str) -> OpenApiError {
    OpenApiError::Plain(format!(
        "{} must validate one and only one schema (oneOf). {additional}",
        go_quote(path)
    ))
}

/// `mustValidateAllSchemasMsg`.
pub(crate) fn all_of(path: &str, additional: &str) -> OpenApiError {
    OpenApiError::Plain(format!(
        "{} must validate all the schemas (allOf){additional}",
        go_quote(path)
    ))
}

/// `mustNotValidatechemaMsg`.
pub(crate) fn must_not(path: &str) -> OpenApiError {
    OpenApiError::Plain(format!(
        "{} must not validate the schema (not)",
        go_quote(path)
    ))
}

/// `kubeOpenAPIResultToFieldErrors`: each error as a field error under
/// `field`.
pub(crate) fn to_field_errors(field: &Path, errors: &[OpenApiError]) -> ErrorList {
    errors.iter().map(|e| to_field_error(field, e)).collect()
}

fn to_field_error(field: &Path, error: &OpenApiError) -> FieldError {
    let OpenApiError::Validation(err) = error else {
        return FieldError::invalid(field, "", error.message());
    };
    let path = if !err.name.is_empty() && err.name != "." {
        field.child(err.name.strip_prefix('.').unwrap_or(&err.name))
    } else {
        field.clone()
    };
    let value_or_empty = || err.value.clone().unwrap_or_else(|| Value::from(""));
    let as_int = |v: &Option<Value>| v.as_ref().and_then(Value::as_i64).unwrap_or(-1);
    match err.code {
        Code::Required => FieldError::required(&path, ""),
        Code::Enum => {
            let values: Vec<String> = err
                .values
                .iter()
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    other => go_json(other),
                })
                .collect();
            FieldError::not_supported(&path, err.value.clone().unwrap_or(Value::Null), &values)
        }
        Code::TooLong => FieldError::too_long(&path, err.valid.unwrap_or(-1)),
        Code::MaxItems | Code::TooManyProperties => {
            FieldError::too_many(&path, as_int(&err.value), err.valid.unwrap_or(-1))
        }
        Code::InvalidType => FieldError::type_invalid(&path, value_or_empty(), &err.message),
        _ => FieldError::invalid(&path, value_or_empty(), &err.message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rendered(error: OpenApiError) -> String {
        to_field_errors(&Path::none(), &[error])[0].to_string()
    }

    #[test]
    fn each_code_becomes_the_field_error_apiextensions_makes() {
        assert_eq!(
            rendered(invalid_type("spec.replicas", "integer", "string")),
            "spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\""
        );
        assert_eq!(rendered(required(".spec")), "spec: Required value");
        assert_eq!(
            rendered(too_long("spec.name", 10, "abcdefghijk")),
            "spec.name: Too long: may not be more than 10 bytes"
        );
        assert_eq!(
            rendered(too_many_items("spec.tags", 3, 4)),
            "spec.tags: Too many: 4: must have at most 3 items"
        );
        assert_eq!(
            rendered(too_many_properties("spec.labels", 2, 3)),
            "spec.labels: Too many: 3: must have at most 2 items"
        );
        assert_eq!(
            rendered(enum_fail(
                "spec.size",
                Some(json!(true)),
                &[json!("small"), json!(1), json!({"a": "<"})]
            )),
            "spec.size: Unsupported value: true: supported values: \"small\", \"1\", \"{\\\"a\\\":\\\"\\\\u003c\\\"}\""
        );
        assert_eq!(
            rendered(too_few_items("spec.tags", 1, 0)),
            "spec.tags: Invalid value: 0: spec.tags in body should have at least 1 items"
        );
        assert_eq!(
            rendered(duplicate_items("spec.tags")),
            "spec.tags: Invalid value: \"\": spec.tags in body shouldn't contain duplicates"
        );
        assert_eq!(
            rendered(at_least_one("spec.target")),
            "<nil>: Invalid value: \"\": \"spec.target\" must validate at least one schema (anyOf)"
        );
        assert_eq!(
            rendered(OpenApiError::Plain(
                "Checked value must be of type integer (default format) in spec.replicas".into()
            )),
            "<nil>: Invalid value: \"\": Checked value must be of type integer (default format) in spec.replicas"
        );
    }

    #[test]
    fn a_nameless_error_lands_on_the_given_field() {
        let status = Path::new(["status"]);
        let errors = to_field_errors(
            &status,
            &[invalid_type("", "object", "string"), required(".phase")],
        );
        assert_eq!(
            errors[0].to_string(),
            "status: Invalid value: \"string\":  in body must be of type object: \"string\""
        );
        assert_eq!(errors[1].to_string(), "status.phase: Required value");
    }

    #[test]
    fn an_enum_miss_on_null_shows_null() {
        assert_eq!(
            rendered(enum_fail("spec.mode", None, &[json!("a"), Value::Null])),
            "spec.mode: Unsupported value: null: supported values: \"a\", \"null\""
        );
    }
}
