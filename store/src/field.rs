//! Field errors, as apimachinery's `field.Error` and `field.ErrorList`
//! make them, and their rendering into the `422 Invalid` Status the real
//! server answers (`apierrors.NewInvalid`): one cause per error (its type,
//! its field, its body), and the aggregated message
//! `Kind.group "name" is invalid: [field: body, ...]` without repeats.
//!
//! Shared by every rule that refuses an object: the structural schema of
//! custom resources (`schema`) and the built-in kinds.

use serde_json::{Map, Value, json};

use crate::go::json::encode::go_json;
use crate::go::strconv::go_float;
use crate::status::Status;

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

impl Status {
    /// The `422 Invalid` Status of `errors` about the object `name` of
    /// `group`/`kind` (`apierrors.NewInvalid`).
    pub fn from_field_errors(group: &str, kind: &str, name: &str, errors: &[FieldError]) -> Status {
        let qualified = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        let message = if errors.is_empty() {
            format!("{qualified} {} is invalid", go_quote(name))
        } else {
            format!(
                "{qualified} {} is invalid: {}",
                go_quote(name),
                aggregate(errors)
            )
        };
        let causes: Vec<Value> = errors
            .iter()
            .map(|e| json!({"reason": e.kind.reason(), "message": e.body(), "field": e.field.to_string()}))
            .collect();
        let mut details = Map::new();
        details.insert("name".into(), json!(name));
        if !group.is_empty() {
            details.insert("group".into(), json!(group));
        }
        details.insert("kind".into(), json!(kind));
        details.insert("causes".into(), Value::Array(causes));
        Status {
            code: 422,
            reason: "Invalid".into(),
            message,
            details: Some(Value::Object(details)),
        }
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

    #[test]
    fn errors_render_as_the_real_server_renders_them() {
        let size = Path::new(["spec", "size"]);
        let errors = vec![
            FieldError::not_supported(&size, json!("huge"), &["small".into(), "medium".into()]),
            FieldError::required(&Path::new(["spec", "image"]), ""),
            FieldError::too_many(&Path::new(["spec", "tags"]), 4, 3),
            FieldError::invalid(&Path::none(), Value::Null, "some rules were not checked"),
            FieldError::too_long(&Path::new(["spec", "name"]), 1),
        ];
        let status = Status::from_field_errors("fid.example.org", "Widget", "w", &errors);
        assert_eq!(status.code, 422);
        assert_eq!(
            status.message,
            "Widget.fid.example.org \"w\" is invalid: [spec.size: Unsupported value: \"huge\": supported values: \"small\", \"medium\", \
             spec.image: Required value, spec.tags: Too many: 4: must have at most 3 items, \
             <nil>: Invalid value: null: some rules were not checked, spec.name: Too long: may not be more than 1 byte]"
        );
        let causes = &status.details.as_ref().unwrap()["causes"];
        assert_eq!(causes[0]["reason"], "FieldValueNotSupported");
        assert_eq!(causes[3]["field"], "<nil>");
        // One error: no brackets; repeats are said once in the message.
        let twice = vec![errors[1].clone(), errors[1].clone()];
        let status = Status::from_field_errors("", "ConfigMap", "c", &twice);
        assert_eq!(
            status.message,
            "ConfigMap \"c\" is invalid: spec.image: Required value"
        );
        assert_eq!(
            status.details.unwrap()["causes"].as_array().unwrap().len(),
            2
        );
        assert_eq!(
            Path::new(["spec"]).key("a.b").index(2).to_string(),
            "spec[a.b][2]"
        );
    }
}
