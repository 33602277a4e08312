//! Field errors, as apimachinery's `field.Error` and `field.ErrorList`
//! make them, and their rendering into the `422 Invalid` Status the real
//! server answers (`apierrors.NewInvalid`): one cause per error (its type,
//! its field, its body), and the aggregated message
//! `Kind.group "name" is invalid: [field: body, ...]` without repeats.
//!
//! Shared by every rule that refuses an object: the structural schema of
//! custom resources (`schema`) and the built-in kinds.

use serde_json::{Map, Value, json};

use crate::status::Status;

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

/// A string as Go's `%q` writes it: double quotes, `\"` and `\\`, control
/// characters escaped, printable Unicode kept.
pub fn go_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    push_quoted(text, &mut out, |c, out| match c {
        '\u{7}' => out.push_str("\\a"),
        '\u{b}' => out.push_str("\\v"),
        c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
        c => out.push(c),
    });
    out
}

/// `text` in double quotes with the escapes Go's `%q` and `encoding/json`
/// share (`\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f`); `other` writes
/// every other character.
fn push_quoted(text: &str, out: &mut String, other: impl Fn(char, &mut String)) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c => other(c, out),
        }
    }
    out.push('"');
}

/// The shortest digits of a finite, non-zero float that read back, and its
/// decimal exponent: 1.5e-5 is ("15", -5).
fn shortest(value: f64) -> (bool, String, i32) {
    // Rust's `{:e}` gives the shortest round-trip digits.
    let scientific = format!("{:e}", value.abs());
    let (mantissa, exponent) = scientific
        .split_once('e')
        .expect("scientific notation has an exponent");
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    (
        value.is_sign_negative(),
        digits,
        exponent.parse().expect("an exponent"),
    )
}

/// `1.5e-05` (strconv's 'e' format: at least two exponent digits).
fn exponent_form(value: f64) -> String {
    let (negative, digits, exponent) = shortest(value);
    let mut out = String::from(if negative { "-" } else { "" });
    out.push_str(&digits[..1]);
    if digits.len() > 1 {
        out.push('.');
        out.push_str(&digits[1..]);
    }
    let sign = if exponent < 0 { '-' } else { '+' };
    out.push_str(&format!("e{sign}{:02}", exponent.abs()));
    out
}

/// `0.000015` (strconv's 'f' format with the shortest digits).
fn decimal_form(value: f64) -> String {
    let (negative, digits, exponent) = shortest(value);
    let point = exponent + 1; // digits before the decimal point
    let mut out = String::from(if negative { "-" } else { "" });
    if point <= 0 {
        out.push_str("0.");
        out.push_str(&"0".repeat(point.unsigned_abs() as usize));
        out.push_str(&digits);
    } else if point as usize >= digits.len() {
        out.push_str(&digits);
        out.push_str(&"0".repeat(point as usize - digits.len()));
    } else {
        out.push_str(&digits[..point as usize]);
        out.push('.');
        out.push_str(&digits[point as usize..]);
    }
    out
}

/// A float as Go's `%v` writes it (`%g` with the shortest precision): the
/// shortest digits that read back, with an exponent (`1e+06`, `1.5e-05`)
/// when the decimal exponent is below -4 or at least 6.
pub fn go_float(value: f64) -> String {
    if value.is_nan() {
        return "NaN".into();
    }
    if value.is_infinite() {
        return if value > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    if value == 0.0 {
        return if value.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let (_, _, exponent) = shortest(value);
    if !(-4..6).contains(&exponent) {
        exponent_form(value)
    } else {
        decimal_form(value)
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

/// Decoded JSON (`interface{}`) as Go's `%v` prints it: `map[a:1 b:[x
/// y]]`, keys sorted, strings bare, `<nil>` for null, a number that is not
/// an `int64` as a `float64`.
pub fn go_print(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".into(),
        Value::Bool(flag) => flag.to_string(),
        Value::Number(number) => match number.as_i64() {
            Some(int) => int.to_string(),
            None => go_float(number.as_f64().unwrap_or_default()),
        },
        Value::String(text) => text.clone(),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(go_print).collect();
            format!("[{}]", items.join(" "))
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|key| format!("{key}:{}", go_print(&map[key])))
                .collect();
            format!("map[{}]", fields.join(" "))
        }
    }
}

/// JSON as Go's `encoding/json` writes it: object keys sorted, `<`, `>`
/// and `&` escaped, numbers as parsed.
pub fn go_json(value: &Value) -> String {
    let mut out = String::new();
    write_go_json(value, &mut out);
    out
}

/// A patched object of a built-in kind as the real server writes it in a
/// patch's refusal: what the patch changed (from `before`) was decoded
/// into maps, its keys sorted as [`go_json`] sorts them; what it left alone
/// is written as it was encoded, in the object's own order.
pub fn go_json_patched(value: &Value, before: &Value) -> String {
    let mut out = String::new();
    write_json(value, Order::Patched(Some(before)), &mut out);
    out
}

/// [`go_json`], written at the end of `out`.
pub fn write_go_json(value: &Value, out: &mut String) {
    write_json(value, Order::Sorted, out);
}

/// How [`write_json`] orders an object's keys.
#[derive(Clone, Copy)]
enum Order<'a> {
    /// Sorted, as Go writes a map.
    Sorted,
    /// In the object's own order, as Go writes a struct it decoded.
    Own,
    /// In the object's own order where it equals `before`, sorted where a
    /// patch changed it ([`go_json_patched`]).
    Patched(Option<&'a Value>),
}

/// JSON as Go writes it, object keys ordered as `order` says.
fn write_json(value: &Value, order: Order<'_>, out: &mut String) {
    let order = match order {
        Order::Patched(before) if before == Some(value) => Order::Own,
        order => order,
    };
    let child = |at: &dyn Fn(&Value) -> Option<&Value>| match order {
        Order::Patched(before) => Order::Patched(before.and_then(at)),
        order => order,
    };
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            if !matches!(order, Order::Own) {
                keys.sort();
            }
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_string(key, out);
                out.push(':');
                write_json(&map[key], child(&|b| b.get(key)), out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(item, child(&|b| b.get(i)), out);
            }
            out.push(']');
        }
        Value::String(text) => write_go_string(text, out),
        Value::Number(n) if n.as_i64().is_none() && n.as_u64().is_none() => {
            out.push_str(&go_json_float(n.as_f64().unwrap_or_default()));
        }
        other => {
            use std::fmt::Write as _;
            let _ = write!(out, "{other}");
        }
    }
}

/// A string as Go's `encoding/json` quotes it: JSON's escapes, and `<`,
/// `>`, `&` as `\u003c`, `\u003e`, `\u0026`.
pub(crate) fn write_go_string(text: &str, out: &mut String) {
    push_quoted(text, out, |c, out| match c {
        '<' => out.push_str("\\u003c"),
        '>' => out.push_str("\\u003e"),
        '&' => out.push_str("\\u0026"),
        c if (c as u32) < 0x20 => {
            use std::fmt::Write as _;
            let _ = write!(out, "\\u{:04x}", c as u32);
        }
        c => out.push(c),
    });
}

/// A float as Go's `encoding/json` writes it: plain decimal, with an
/// exponent below 1e-6 or from 1e21 on (`e-07` cleaned to `e-7`).
fn go_json_float(value: f64) -> String {
    let abs = value.abs();
    if abs == 0.0 || (1e-6..1e21).contains(&abs) {
        return if abs == 0.0 {
            "0".into()
        } else {
            decimal_form(value)
        };
    }
    let text = exponent_form(value);
    match text.split_once("e-0") {
        Some((mantissa, exponent)) => format!("{mantissa}e-{exponent}"),
        None => text,
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
