//! A JSON value as kube-openapi's validator sees it once the API server has
//! decoded it: numbers written as integers are Go `int64`s, every other
//! number (a fraction, an exponent, an integer beyond int64) is a
//! `float64`; `null` is Go's `nil`. The helpers here are the Go behaviours
//! the validator leans on: `reflect.DeepEqual`, conversions between the
//! numeric kinds as amd64 performs them, `IsFloat64AJSONInteger` and
//! `strconv.FormatFloat(f, 'f', -1, 64)`.

use serde_json::Value;

use crate::go::strconv::go_float;

/// A number as Go holds it after decoding.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Num {
    /// `int64`: the text was an integer that fits.
    Int(i64),
    /// `float64`.
    Float(f64),
}

impl Num {
    /// The number in a JSON value, if it is one.
    pub(crate) fn of(value: &Value) -> Option<Num> {
        let Value::Number(n) = value else {
            return None;
        };
        Some(match n.as_i64() {
            Some(i) => Num::Int(i),
            None => Num::Float(n.as_f64().unwrap_or_default()),
        })
    }

    /// `valueHelp.asFloat64`.
    pub(crate) fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }

    /// The number as a value an error carries (and prints with `%v`).
    pub(crate) fn to_value(self) -> Value {
        match self {
            Num::Int(i) => Value::from(i),
            Num::Float(f) => float_value(f),
        }
    }

    /// The number as Go's `%v` prints it.
    pub(crate) fn go_string(self) -> String {
        match self {
            Num::Int(i) => i.to_string(),
            Num::Float(f) => go_float(f),
        }
    }
}

/// A float64 as a JSON value (finite floats only reach here).
pub(crate) fn float_value(f: f64) -> Value {
    serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
}

/// What Go's reflection calls the kind of a decoded value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// `nil`.
    Nil,
    /// `bool`.
    Bool,
    /// `string`.
    String,
    /// `int64`.
    Int,
    /// `float64`.
    Float,
    /// `[]interface{}`.
    Slice,
    /// `map[string]interface{}`.
    Map,
}

/// The kind of a value.
pub(crate) fn kind(value: &Value) -> Kind {
    match value {
        Value::Null => Kind::Nil,
        Value::Bool(_) => Kind::Bool,
        Value::String(_) => Kind::String,
        Value::Number(_) => match Num::of(value) {
            Some(Num::Int(_)) => Kind::Int,
            _ => Kind::Float,
        },
        Value::Array(_) => Kind::Slice,
        Value::Object(_) => Kind::Map,
    }
}

/// The JSON type and the format kube-openapi infers from a value
/// (`typeValidator.schemaInfoForType`).
pub(crate) fn type_and_format(value: &Value) -> (&'static str, &'static str) {
    match kind(value) {
        Kind::Nil => ("", ""),
        Kind::Bool => ("boolean", ""),
        Kind::String => ("string", ""),
        Kind::Int => ("integer", "int64"),
        Kind::Float => ("number", "float64"),
        Kind::Slice => ("array", ""),
        Kind::Map => ("object", ""),
    }
}

/// The value an error carries: `None` for Go's `nil`.
pub(crate) fn bad_value(value: &Value) -> Option<Value> {
    match value {
        Value::Null => None,
        Value::Number(_) => Num::of(value).map(Num::to_value),
        other => Some(other.clone()),
    }
}

/// Go's `int64(f)` on amd64: truncation, and the "integer indefinite"
/// value (the smallest int64) for NaN and anything out of range.
pub(crate) fn f64_to_i64(f: f64) -> i64 {
    if f.is_nan() || !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f) {
        i64::MIN
    } else {
        f as i64
    }
}

/// `conv.IsFloat64AJSONInteger` (go-openapi/swag): within ±(2^53-1), and
/// within a relative 1e-9 of the nearest integer (so 4.999999999999999
/// is an integer, 0.5 is not).
pub(crate) fn is_json_integer(f: f64) -> bool {
    const MAX_JSON_FLOAT: f64 = 9_007_199_254_740_991.0;
    const EPSILON: f64 = 1e-9;
    if f.is_nan() || f.is_infinite() || !(-MAX_JSON_FLOAT..=MAX_JSON_FLOAT).contains(&f) {
        return false;
    }
    // math.Round: halves away from zero, as Rust's round.
    let rounded = f.round();
    if f == rounded {
        return true;
    }
    if rounded == 0.0 {
        return false;
    }
    let diff = (f - rounded).abs();
    diff == 0.0 || diff < EPSILON * rounded.abs()
}

/// `strconv.FormatFloat(f, 'f', -1, 64)`: the shortest digits that read
/// back, without an exponent.
pub(crate) fn format_f(f: f64) -> String {
    // Rust's `Display` for f64 is exactly that.
    f.to_string()
}

/// `reflect.DeepEqual` between two decoded values: an int64 never equals a
/// float64, objects compare without regard to key order.
pub(crate) fn deep_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(_), Value::Number(_)) => match (Num::of(a), Num::of(b)) {
            (Some(Num::Int(x)), Some(Num::Int(y))) => x == y,
            (Some(Num::Float(x)), Some(Num::Float(y))) => x == y,
            _ => false,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| deep_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| deep_equal(v, w)))
        }
        _ => a == b,
    }
}

/// A value as Go's `%v` prints it inside a list (`[a 1 true]`): strings
/// bare, numbers and booleans as `%v`, maps as `map[k:v]`.
pub(crate) fn plain(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".into(),
        Value::String(s) => s.clone(),
        Value::Number(_) => Num::of(value).map(Num::go_string).unwrap_or_default(),
        Value::Bool(b) => b.to_string(),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(plain).collect::<Vec<_>>().join(" ")
        ),
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{k}:{}", plain(&map[k])))
                .collect();
            format!("map[{}]", fields.join(" "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_are_int64_when_written_as_fitting_integers() {
        assert_eq!(kind(&json!(5)), Kind::Int);
        assert_eq!(kind(&json!(-5)), Kind::Int);
        assert_eq!(kind(&json!(5.0)), Kind::Float);
        assert_eq!(kind(&json!(18446744073709551615u64)), Kind::Float);
        assert_eq!(
            bad_value(&json!(18446744073709551615u64)),
            Some(json!(1.8446744073709552e19))
        );
    }

    #[test]
    fn float_integers_follow_swag() {
        assert!(is_json_integer(5.0));
        assert!(is_json_integer(-5.0));
        assert!(!is_json_integer(1.5));
        assert!(!is_json_integer(-1.5));
        assert!(!is_json_integer(0.5));
        assert!(!is_json_integer(0.4));
        // A relative error under 1e-9 counts as an integer.
        assert!(is_json_integer(100000000.05));
        assert!(is_json_integer(3.0000000000000004));
        assert!(is_json_integer(4.999999999999999));
        assert!(is_json_integer(-858993459.2));
        assert!(!is_json_integer(9007199254740992.0));
    }

    #[test]
    fn conversions_behave_as_on_amd64() {
        assert_eq!(f64_to_i64(0.5), 0);
        assert_eq!(f64_to_i64(-1.9), -1);
        assert_eq!(f64_to_i64(1e300), i64::MIN);
        assert_eq!(format_f(1e21), "1000000000000000000000");
        assert_eq!(format_f(5.0), "5");
    }

    #[test]
    fn deep_equal_tells_int_from_float() {
        assert!(!deep_equal(&json!(5), &json!(5.0)));
        assert!(deep_equal(&json!({"a": [1, "x"]}), &json!({"a": [1, "x"]})));
        assert!(!deep_equal(&json!([1]), &json!([1, 2])));
    }
}
