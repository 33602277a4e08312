//! kube-openapi's `stringValidator` (`maxLength`, `minLength`, `pattern`:
//! the first that fails is the only error) and `basicCommonValidator`
//! (`enum`), from `validate/validator.go`.
//!
//! The enum check compares as Go's reflection does: the value is
//! converted to the type of each allowed value before comparing, so a
//! float matches the integer it truncates to (1.5 is in `[1, 2]`) and an
//! integer matches the string of the character with that code (65 is in
//! `["A"]`); a null matches nothing, not even a null in the list.

use serde_json::Value;

use super::errors;
use super::go::{self, Kind, Num};
use super::result::GoResult;
use crate::go::regexp::is_match;
use crate::schema::Schema;

/// `maxLength`, `minLength` and `pattern` of a string (lengths in
/// characters).
pub(crate) fn validate_string(schema: &Schema, path: &str, data: &str) -> GoResult {
    let length = data.chars().count() as i64;
    if let Some(max) = schema.max_length
        && length > max
    {
        return GoResult::single(errors::too_long(path, max, data));
    }
    if let Some(min) = schema.min_length
        && length < min
    {
        return GoResult::single(errors::too_short(path, min, data));
    }
    if let Some(expr) = schema.pattern.as_deref().filter(|p| !p.is_empty()) {
        match is_match(expr, data) {
            Ok(true) => {}
            Ok(false) => return GoResult::single(errors::failed_pattern(path, expr, data)),
            Err(error) => {
                let shown = format!("{expr}, but pattern is invalid: {error}");
                return GoResult::single(errors::failed_pattern(path, &shown, data));
            }
        }
    }
    GoResult::new()
}

/// `enum`: the value must be one of the listed ones (an empty list allows
/// anything).
pub(crate) fn validate_enum(allowed: Option<&[Value]>, path: &str, data: &Value) -> GoResult {
    let Some(allowed) = allowed.filter(|a| !a.is_empty()) else {
        return GoResult::new();
    };
    if allowed.iter().any(|a| converts_equal(data, a)) {
        return GoResult::new();
    }
    GoResult::single(errors::enum_fail(path, go::bad_value(data), allowed))
}

/// Whether `data`, converted to the Go type of `allowed`, deep-equals it.
fn converts_equal(data: &Value, allowed: &Value) -> bool {
    match (go::kind(data), go::kind(allowed)) {
        (Kind::Nil, _) | (_, Kind::Nil) => false,
        (Kind::Int | Kind::Float, Kind::Int | Kind::Float) => {
            match (Num::of(data), Num::of(allowed)) {
                (Some(Num::Int(d)), Some(Num::Int(a))) => d == a,
                (Some(Num::Int(d)), Some(Num::Float(a))) => d as f64 == a,
                (Some(Num::Float(d)), Some(Num::Int(a))) => go::f64_to_i64(d) == a,
                (Some(Num::Float(d)), Some(Num::Float(a))) => d == a,
                _ => false,
            }
        }
        (Kind::Int, Kind::String) => match Num::of(data) {
            Some(Num::Int(d)) => allowed.as_str() == Some(go_int_to_string(d).as_str()),
            _ => false,
        },
        (d, a) if d == a => go::deep_equal(data, allowed),
        _ => false,
    }
}

/// Go's `string(rune(i))` as reflection converts an int64: the character
/// with that code, or U+FFFD when there is none.
fn go_int_to_string(i: i64) -> String {
    i32::try_from(i)
        .ok()
        .and_then(|r| u32::try_from(r).ok())
        .and_then(char::from_u32)
        .unwrap_or('\u{FFFD}')
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn string_schema(extra: Value) -> Schema {
        let mut schema = json!({"type": "string"});
        schema
            .as_object_mut()
            .expect("an object")
            .extend(extra.as_object().expect("an object").clone());
        Schema::from_json(&schema)
    }

    fn string_errors(schema: &Schema, data: &str) -> Vec<String> {
        validate_string(schema, "spec.name", data)
            .errors()
            .iter()
            .map(|e| e.message().to_string())
            .collect()
    }

    #[test]
    fn the_first_failing_string_rule_is_the_only_error() {
        let schema = string_schema(json!({"pattern": "^[a-z]+$", "minLength": 2, "maxLength": 10}));
        assert_eq!(
            string_errors(&schema, "ABCDEFGHIJKL"),
            ["spec.name in body should be at most 10 chars long"]
        );
        assert_eq!(
            string_errors(&schema, "A"),
            ["spec.name in body should be at least 2 chars long"]
        );
        assert_eq!(
            string_errors(&schema, "Abc"),
            ["spec.name in body should match '^[a-z]+$'"]
        );
        // Lengths count characters, not bytes.
        assert_eq!(
            string_errors(&schema, "éééééééé"),
            ["spec.name in body should match '^[a-z]+$'"]
        );
    }

    #[test]
    fn a_pattern_that_does_not_compile_is_reported_on_every_value() {
        let schema = string_schema(json!({"pattern": "+"}));
        assert_eq!(
            string_errors(&schema, "foo"),
            [
                "spec.name in body should match '+, but pattern is invalid: error parsing regexp: missing argument to repetition operator: `+`'"
            ]
        );
    }

    #[test]
    fn enum_values_compare_after_go_conversion() {
        let allowed = [json!(1), json!(2)];
        assert!(validate_enum(Some(&allowed), "x", &json!(1)).is_valid());
        assert!(validate_enum(Some(&allowed), "x", &json!(1.5)).is_valid());
        assert!(!validate_enum(Some(&allowed), "x", &json!(3)).is_valid());
        assert!(!validate_enum(Some(&allowed), "x", &json!("1")).is_valid());
        let letters = [json!("A"), json!("B")];
        assert!(validate_enum(Some(&letters), "x", &json!(65)).is_valid());
        assert!(!validate_enum(Some(&letters), "x", &json!(65.0)).is_valid());
        let halves = [json!(1.5)];
        assert!(!validate_enum(Some(&halves), "x", &json!(1)).is_valid());
        let objects = [json!({"a": [1]})];
        assert!(validate_enum(Some(&objects), "x", &json!({"a": [1]})).is_valid());
        assert!(!validate_enum(Some(&objects), "x", &json!({"a": [1.0]})).is_valid());
    }

    #[test]
    fn null_is_never_in_an_enum() {
        let allowed = [Value::Null, json!("a")];
        let result = validate_enum(Some(&allowed), "spec.mode", &Value::Null);
        assert_eq!(
            result.errors()[0].message(),
            "spec.mode in body should be one of [<nil> a]"
        );
        assert!(validate_enum(Some(&[]), "x", &Value::Null).is_valid());
    }
}
