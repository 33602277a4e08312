//! kube-openapi's `typeValidator` (`validate/type.go`): the JSON type of a
//! value against the schema's `type` (a list: `[integer, string]` for
//! `x-kubernetes-int-or-string`) and, for values that are neither strings
//! nor lists, against its `format` too. Its quirks are kept: a float that
//! is a whole number passes as an integer, an integer passes as a number,
//! and a number checked against a format that is not its own is reported
//! with the format (`must be of type int32: "float64"`).

use serde_json::Value;

use super::errors;
use super::go::{self, Kind};
use super::result::GoResult;

/// Validates the type of `data` at `path`.
pub(crate) fn validate(
    types: &[&str],
    nullable: bool,
    format: &str,
    path: &str,
    data: &Value,
) -> GoResult {
    let mut result = GoResult::new();
    result.inc();
    let contains = |t: &str| types.contains(&t);
    let kind = go::kind(data);
    if kind == Kind::Nil {
        // A null needs `nullable` (or a type list with "null").
        if !types.is_empty() && !contains("null") && !nullable {
            return GoResult::single(errors::invalid_type(path, &types.join(","), "null"));
        }
        return result;
    }
    let (sch_type, value_format) = go::type_and_format(data);
    let is_float_int = sch_type == "number"
        && go::Num::of(data).is_some_and(|n| go::is_json_integer(n.as_f64()))
        && contains("integer");
    let is_int_float = sch_type == "integer" && contains("number");
    // `isLowerInt` and `isLowerFloat` compare against int32 and float32
    // values, which a decoded object never holds.
    if kind != Kind::String
        && kind != Kind::Slice
        && !format.is_empty()
        && !(contains(sch_type) || value_format == format || is_float_int || is_int_float)
    {
        return GoResult::single(errors::invalid_type(path, format, value_format));
    }
    let numeric = contains("number") || contains("integer");
    let has_format = !format.is_empty();
    if !numeric && has_format && (kind == Kind::String || kind == Kind::Slice) {
        return result;
    }
    if !(contains(sch_type) || is_float_int || is_int_float) {
        return GoResult::single(errors::invalid_type(path, &types.join(","), sch_type));
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(types: &[&str], format: &str, data: Value) -> Option<String> {
        let result = validate(types, false, format, "spec.x", &data);
        result.errors().first().map(|e| e.message().to_string())
    }

    #[test]
    fn a_value_of_another_type_is_named_by_its_json_type() {
        assert_eq!(
            message(&["integer"], "", json!("3")).as_deref(),
            Some("spec.x in body must be of type integer: \"string\"")
        );
        assert_eq!(
            message(&["string"], "", json!(true)).as_deref(),
            Some("spec.x in body must be of type string: \"boolean\"")
        );
        assert_eq!(
            message(&["object"], "", json!([1])).as_deref(),
            Some("spec.x in body must be of type object: \"array\"")
        );
        assert_eq!(
            message(&["integer", "string"], "", json!(1.5)).as_deref(),
            Some("spec.x in body must be of type integer,string: \"number\"")
        );
    }

    #[test]
    fn whole_floats_are_integers_and_integers_are_numbers() {
        assert_eq!(message(&["integer"], "", json!(2.0)), None);
        assert_eq!(message(&["number"], "", json!(2)), None);
        assert_eq!(message(&["number"], "double", json!(2)), None);
    }

    #[test]
    fn a_number_against_another_format_names_the_format() {
        assert_eq!(
            message(&["integer"], "int32", json!(1.5)).as_deref(),
            Some("spec.x in body must be of type int32: \"float64\"")
        );
        assert_eq!(
            message(&["string"], "uuid", json!(5)).as_deref(),
            Some("spec.x in body must be of type uuid: \"int64\"")
        );
        assert_eq!(
            message(&[], "uuid", json!(true)).as_deref(),
            Some("spec.x in body must be of type uuid: \"\"")
        );
        // Strings and lists skip the format check.
        assert_eq!(message(&[], "uuid", json!([1])), None);
    }

    #[test]
    fn null_needs_nullable() {
        assert_eq!(
            message(&["object"], "", Value::Null).as_deref(),
            Some("spec.x in body must be of type object: \"null\"")
        );
        assert!(validate(&["object"], true, "", "spec.x", &Value::Null).is_valid());
        assert!(validate(&[], false, "", "spec.x", &Value::Null).is_valid());
    }
}
