//! Field errors, as apimachinery's `field.Error` and `field.ErrorList`
//! make them (`pkg/util/validation/field`): their types, paths and bodies
//! as the real server words them, the aggregated message
//! (`field: body, ...` without repeats), and the one generic check
//! (`ValidateImmutableField`). The `422 Invalid` Status they are rendered
//! into is `meta::status`.

use serde_json::{Value, json};

use crate::go::json::encode::go_json;
use crate::go::strconv::go_float;

/// Go's `%q`, which field errors quote names and values with (kept here,
/// where callers of the crate found it).
pub use crate::go::strconv::go_quote;

/// What kind of error (a `metav1.CauseType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ErrorType {
    /// `FieldValueNotFound`.
    NotFound,
    /// `FieldValueRequired`.
    Required,
    /// `FieldValueDuplicate`.
    Duplicate,
    /// `FieldValueInvalid`.
    Invalid,
    /// `FieldValueNotSupported`.
    NotSupported,
    /// `FieldValueForbidden`.
    Forbidden,
    /// `FieldValueTooLong`.
    TooLong,
    /// `FieldValueTooMany`.
    TooMany,
    /// `FieldValueTooFew`.
    TooFew,
    /// `FieldValueTooShort`.
    TooShort,
    /// `InternalError`.
    Internal,
    /// `FieldValueTypeInvalid`.
    TypeInvalid,
}

impl ErrorType {
    /// The cause type, as a Status names it.
    pub fn reason(self) -> &'static str {
        match self {
            ErrorType::NotFound => "FieldValueNotFound",
            ErrorType::Required => "FieldValueRequired",
            ErrorType::Duplicate => "FieldValueDuplicate",
            ErrorType::Invalid => "FieldValueInvalid",
            ErrorType::NotSupported => "FieldValueNotSupported",
            ErrorType::Forbidden => "FieldValueForbidden",
            ErrorType::TooLong => "FieldValueTooLong",
            ErrorType::TooMany => "FieldValueTooMany",
            ErrorType::TooFew => "FieldValueTooFew",
            ErrorType::TooShort => "FieldValueTooShort",
            ErrorType::Internal => "InternalError",
            ErrorType::TypeInvalid => "FieldValueTypeInvalid",
        }
    }

    /// The canonical words that start the error's message.
    pub fn words(self) -> &'static str {
        match self {
            ErrorType::NotFound => "Not found",
            ErrorType::Required => "Required value",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::Invalid | ErrorType::TypeInvalid => "Invalid value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::TooLong => "Too long",
            ErrorType::TooMany => "Too many",
            ErrorType::TooFew => "Too few",
            ErrorType::TooShort => "Too short",
            ErrorType::Internal => "Internal error",
        }
    }
}

/// The value an error is about, as Go holds it.
#[derive(Clone, Debug, PartialEq)]
pub enum BadValue {
    /// Not shown (`omitValue`).
    Omit,
    /// A JSON value (from an object): integers and floats print as Go's
    /// `%v`, strings quoted, the rest as JSON with sorted keys.
    Json(Value),
    /// A Go struct, printed as its JSON (fields in the struct's order).
    Struct(String),
}

impl From<Value> for BadValue {
    fn from(value: Value) -> Self {
        BadValue::Json(value)
    }
}

impl From<&str> for BadValue {
    fn from(value: &str) -> Self {
        BadValue::Json(Value::String(value.to_string()))
    }
}

impl From<i64> for BadValue {
    fn from(value: i64) -> Self {
        BadValue::Json(json!(value))
    }
}

/// A path to a field: `spec.containers[0].name`, `metadata.labels[app]`;
/// `<nil>` for none.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Path(Option<String>);

impl Path {
    /// No path (rendered `<nil>`).
    pub fn none() -> Path {
        Path(None)
    }

    /// A path of names: `Path::new(["spec", "size"])` is `spec.size`.
    pub fn new<'a>(names: impl IntoIterator<Item = &'a str>) -> Path {
        let mut path = Path::none();
        for name in names {
            path = path.child(name);
        }
        path
    }

    /// `self.name`.
    #[must_use]
    pub fn child(&self, name: &str) -> Path {
        Path(Some(match &self.0 {
            None => name.to_string(),
            Some(parent) if parent.is_empty() => name.to_string(),
            Some(parent) => format!("{parent}.{name}"),
        }))
    }

    /// `self[index]`.
    #[must_use]
    pub fn index(&self, index: usize) -> Path {
        self.key(&index.to_string())
    }

    /// `self[key]`.
    #[must_use]
    pub fn key(&self, key: &str) -> Path {
        Path(Some(format!(
            "{}[{key}]",
            self.0.as_deref().unwrap_or_default()
        )))
    }

    /// Whether this is no path at all.
    pub fn is_none(&self) -> bool {
        self.0.is_none()
    }

    /// `rest` below `self`: `status` joined with `phase` is `status.phase`,
    /// with `[0]` it is `status[0]`; with no path, `self`.
    #[must_use]
    pub fn join(&self, rest: &Path) -> Path {
        match (&self.0, &rest.0) {
            (_, None) => self.clone(),
            (None, Some(_)) => rest.clone(),
            (Some(parent), Some(child)) if child.starts_with('[') => {
                Path(Some(format!("{parent}{child}")))
            }
            (Some(_), Some(child)) => self.child(child),
        }
    }
}

impl std::fmt::Display for Path {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.as_deref().unwrap_or("<nil>"))
    }
}

/// One field error.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldError {
    /// What kind of error.
    pub kind: ErrorType,
    /// The field it is about.
    pub field: Path,
    /// The value it is about.
    pub value: BadValue,
    /// What is wrong, in words.
    pub detail: String,
}

/// A list of field errors.
pub type ErrorList = Vec<FieldError>;

impl FieldError {
    fn new(kind: ErrorType, field: &Path, value: BadValue, detail: impl Into<String>) -> Self {
        FieldError {
            kind,
            field: field.clone(),
            value,
            detail: detail.into(),
        }
    }

    /// `field.Required`.
    pub fn required(field: &Path, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::Required, field, "".into(), detail)
    }

    /// `field.Invalid`.
    pub fn invalid(field: &Path, value: impl Into<BadValue>, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::Invalid, field, value.into(), detail)
    }

    /// `field.TypeInvalid`.
    pub fn type_invalid(
        field: &Path,
        value: impl Into<BadValue>,
        detail: impl Into<String>,
    ) -> Self {
        Self::new(ErrorType::TypeInvalid, field, value.into(), detail)
    }

    /// `field.Forbidden`.
    pub fn forbidden(field: &Path, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::Forbidden, field, "".into(), detail)
    }

    /// `field.Duplicate`.
    pub fn duplicate(field: &Path, value: impl Into<BadValue>) -> Self {
        Self::new(ErrorType::Duplicate, field, value.into(), "")
    }

    /// `field.NotFound`.
    pub fn not_found(field: &Path, value: impl Into<BadValue>) -> Self {
        Self::new(ErrorType::NotFound, field, value.into(), "")
    }

    /// `field.NotSupported`: `supported values: "a", "b"`.
    pub fn not_supported(field: &Path, value: impl Into<BadValue>, supported: &[String]) -> Self {
        let detail = if supported.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = supported.iter().map(|v| go_quote(v)).collect();
            format!("supported values: {}", quoted.join(", "))
        };
        Self::new(ErrorType::NotSupported, field, value.into(), detail)
    }

    /// `field.TooLong`: `may not be more than N bytes`.
    pub fn too_long(field: &Path, max: i64) -> Self {
        let detail = if max >= 0 {
            format!(
                "may not be more than {max} {}",
                if max == 1 { "byte" } else { "bytes" }
            )
        } else {
            "value is too long".to_string()
        };
        Self::new(ErrorType::TooLong, field, "<value omitted>".into(), detail)
    }

    /// `field.TooMany`: `must have at most N items`.
    pub fn too_many(field: &Path, actual: i64, max: i64) -> Self {
        let detail = if max >= 0 {
            format!(
                "must have at most {max} {}",
                if max == 1 { "item" } else { "items" }
            )
        } else {
            "has too many items".to_string()
        };
        let value = if actual >= 0 {
            actual.into()
        } else {
            BadValue::Omit
        };
        Self::new(ErrorType::TooMany, field, value, detail)
    }

    /// `field.InternalError`.
    pub fn internal(field: &Path, error: impl Into<String>) -> Self {
        Self::new(ErrorType::Internal, field, BadValue::Omit, error)
    }

    /// The message without the field: `Invalid value: "x": why`.
    pub fn body(&self) -> String {
        let mut text = match self.kind {
            ErrorType::Required
            | ErrorType::Forbidden
            | ErrorType::TooLong
            | ErrorType::TooShort
            | ErrorType::Internal => self.kind.words().to_string(),
            _ => match &self.value {
                BadValue::Omit => self.kind.words().to_string(),
                BadValue::Json(value) => format!("{}: {}", self.kind.words(), go_value(value)),
                BadValue::Struct(json) => format!("{}: {json}", self.kind.words()),
            },
        };
        if !self.detail.is_empty() {
            text.push_str(": ");
            text.push_str(&self.detail);
        }
        text
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

/// The errors as one message: the only one, or `[a, b]`; repeats once.
pub fn aggregate(errors: &[FieldError]) -> String {
    let mut seen = std::collections::HashSet::new();
    let messages: Vec<String> = errors
        .iter()
        .map(ToString::to_string)
        .filter(|m| seen.insert(m.clone()))
        .collect();
    match messages.len() {
        1 => messages.into_iter().next().unwrap_or_default(),
        _ => format!("[{}]", messages.join(", ")),
    }
}

/// A JSON value as a field error shows it (Go's `%v` for numbers and
/// booleans, `%q` for strings, JSON with sorted keys for the rest).
pub fn go_value(value: &Value) -> String {
    match value {
        Value::String(s) => go_quote(s),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(u)) => u.to_string(),
            _ => go_float(n.as_f64().unwrap_or_default()),
        },
        Value::Bool(b) => b.to_string(),
        other => go_json(other),
    }
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

/// A field error whose value is already written (a Go struct's JSON, which
/// [`crate::machinery::field::go_value`] would write with sorted keys).
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_print_as_go_prints_them() {
        assert_eq!(go_value(&json!("huge")), "\"huge\"");
        assert_eq!(go_value(&json!(5)), "5");
        assert_eq!(go_value(&json!(5.0)), "5");
        assert_eq!(go_value(&json!(1.5)), "1.5");
        assert_eq!(go_value(&json!(1e6)), "1e+06");
        assert_eq!(go_value(&json!(123456.0)), "123456");
        assert_eq!(go_value(&json!(1234567.0)), "1.234567e+06");
        assert_eq!(go_value(&json!(0.0001)), "0.0001");
        assert_eq!(go_value(&json!(0.00001)), "1e-05");
        assert_eq!(go_value(&json!(null)), "null");
        assert_eq!(
            go_value(&json!({"b": 1, "a": "<x>"})),
            "{\"a\":\"\\u003cx\\u003e\",\"b\":1}"
        );
        assert_eq!(go_quote("a\"b\\c\nd"), "\"a\\\"b\\\\c\\nd\"");
        assert_eq!(go_json(&json!([1.5, 1e21, 0.0000001])), "[1.5,1e+21,1e-7]");
        // Go's quoting: JSON's escapes, HTML's three characters escaped,
        // object keys sorted.
        assert_eq!(
            go_json(&json!({"b": "a<b>&\"\\\n\u{1}", "a": [true, null, -3]})),
            r#"{"a":[true,null,-3],"b":"a\u003cb\u003e\u0026\"\\\n\u0001"}"#
        );
    }
}
