//! kube-openapi's `numberValidator` (`validate/validator.go`, the checks in
//! `validate/values.go`): `multipleOf`, `maximum` and `minimum`, and the
//! range of the value for its type and format.
//!
//! As in Go, each bound is first checked to fit the schema's type: a bound
//! that does not (`maximum: 5.5` on an integer) is reported on every value
//! (`Maximum boundary value must be of type integer (default format) in
//! x`) and compared as a float. A bound that fits is compared in the
//! value's own kind, so an int64 value meets the bound converted to int64:
//! `multipleOf: 0.5` becomes 0 for the integer 5.

use super::errors::{self, OpenApiError};
use super::go::{self, Num};
use super::result::GoResult;
use crate::go::strconv::go_float;

/// The number rules of a schema node.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Rules<'a> {
    /// `integer` or `number` when the node has exactly that type, else "".
    pub(crate) type_name: &'a str,
    /// The format when it suits the type (int32, int64, float, double).
    pub(crate) format: &'a str,
    /// `multipleOf`.
    pub(crate) multiple_of: Option<f64>,
    /// `maximum`.
    pub(crate) maximum: Option<f64>,
    /// `exclusiveMaximum`.
    pub(crate) exclusive_maximum: bool,
    /// `minimum`.
    pub(crate) minimum: Option<f64>,
    /// `exclusiveMinimum`.
    pub(crate) exclusive_minimum: bool,
}

/// Validates the number `value` at `path`.
pub(crate) fn validate(rules: &Rules, path: &str, value: Num) -> GoResult {
    let mut res = GoResult::new();
    let data = value.as_f64();
    if let Some(e) = range_error(value, rules, "Checked", path) {
        res.add(e);
    }

    let mut res_multiple = GoResult::new();
    if let Some(factor) = rules.multiple_of {
        if let Some(e) = range_error(Num::Float(factor), rules, "MultipleOf", path) {
            res_multiple.add(e);
            res_multiple.add_all(multiple_of_float(path, data, factor));
        } else {
            res_multiple.add_all(multiple_of_native(path, value, factor));
        }
    }

    let mut res_maximum = GoResult::new();
    if let Some(max) = rules.maximum {
        let exclusive = rules.exclusive_maximum;
        if let Some(e) = range_error(Num::Float(max), rules, "Maximum boundary", path) {
            res_maximum.add(e);
            res_maximum.add_all(maximum(path, Num::Float(data), max, exclusive));
        } else {
            res_maximum.add_all(maximum(path, value, max, exclusive));
        }
    }

    let mut res_minimum = GoResult::new();
    if let Some(min) = rules.minimum {
        let exclusive = rules.exclusive_minimum;
        if let Some(e) = range_error(Num::Float(min), rules, "Minimum boundary", path) {
            res_minimum.add(e);
            res_minimum.add_all(minimum(path, Num::Float(data), min, exclusive));
        } else {
            res_minimum.add_all(minimum(path, value, min, exclusive));
        }
    }

    res.merge(res_multiple);
    res.merge(res_minimum);
    res.merge(res_maximum);
    res.inc();
    res
}

impl GoResult {
    fn add_all(&mut self, error: Option<OpenApiError>) {
        if let Some(e) = error {
            self.add(e);
        }
    }
}

/// `IsValueValidAgainstRange`: whether the number fits the type and
/// format, as its decimal text parsed by strconv.
fn range_error(value: Num, rules: &Rules, prefix: &str, path: &str) -> Option<OpenApiError> {
    let text = match value {
        Num::Int(i) => i.to_string(),
        Num::Float(f) => go::format_f(f),
    };
    let fits = match (rules.type_name, rules.format) {
        ("integer", "int32") => text.parse::<i32>().is_ok(),
        ("integer", _) => text.parse::<i64>().is_ok(),
        (_, "float") => text.parse::<f32>().is_ok_and(f32::is_finite),
        _ => true,
    };
    if fits {
        return None;
    }
    let type_name = rules.type_name;
    Some(OpenApiError::Plain(if rules.format.is_empty() {
        format!("{prefix} value must be of type {type_name} (default format) in {path}")
    } else {
        format!(
            "{prefix} value must be of type {type_name} with format {} in {path}",
            rules.format
        )
    }))
}

/// `MultipleOfNativeType`.
fn multiple_of_native(path: &str, value: Num, factor: f64) -> Option<OpenApiError> {
    match value {
        Num::Int(v) => {
            let factor = go::f64_to_i64(factor);
            if factor <= 0 {
                return Some(errors::multiple_of_must_be_positive(path, Num::Int(factor)));
            }
            (v / factor * factor != v)
                .then(|| errors::not_multiple_of(path, &factor.to_string(), v.into()))
        }
        Num::Float(v) => multiple_of_float(path, v, factor),
    }
}

/// `MultipleOf` on float64s.
fn multiple_of_float(path: &str, data: f64, factor: f64) -> Option<OpenApiError> {
    if factor <= 0.0 {
        return Some(errors::multiple_of_must_be_positive(
            path,
            Num::Float(factor),
        ));
    }
    let mult = if factor < 1.0 {
        1.0 / factor * data
    } else {
        data / factor
    };
    (!go::is_json_integer(mult))
        .then(|| errors::not_multiple_of(path, &go_float(factor), go::float_value(data)))
}

/// `MaximumNativeType` (and `Maximum` when given a float).
fn maximum(path: &str, value: Num, max: f64, exclusive: bool) -> Option<OpenApiError> {
    match value {
        Num::Int(v) => {
            let max = go::f64_to_i64(max);
            let over = if exclusive { v >= max } else { v > max };
            over.then(|| errors::exceeds_maximum(path, &max.to_string(), exclusive, v.into()))
        }
        Num::Float(v) => {
            let over = if exclusive { v >= max } else { v > max };
            over.then(|| {
                let max = go_float(max);
                errors::exceeds_maximum(path, &max, exclusive, go::float_value(v))
            })
        }
    }
}

/// `MinimumNativeType` (and `Minimum` when given a float).
fn minimum(path: &str, value: Num, min: f64, exclusive: bool) -> Option<OpenApiError> {
    match value {
        Num::Int(v) => {
            let min = go::f64_to_i64(min);
            let under = if exclusive { v <= min } else { v < min };
            under.then(|| errors::exceeds_minimum(path, &min.to_string(), exclusive, v.into()))
        }
        Num::Float(v) => {
            let under = if exclusive { v <= min } else { v < min };
            under.then(|| {
                let min = go_float(min);
                errors::exceeds_minimum(path, &min, exclusive, go::float_value(v))
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(rules: Rules, value: Num) -> Vec<String> {
        validate(&rules, "spec.x", value)
            .errors()
            .iter()
            .map(|e| e.message().to_string())
            .collect()
    }

    #[test]
    fn bounds_are_checked_with_their_exclusive_forms() {
        let rules = Rules {
            type_name: "integer",
            maximum: Some(10.0),
            minimum: Some(0.0),
            ..Rules::default()
        };
        assert_eq!(
            messages(rules, Num::Int(11)),
            ["spec.x in body should be less than or equal to 10"]
        );
        assert_eq!(
            messages(rules, Num::Int(-1)),
            ["spec.x in body should be greater than or equal to 0"]
        );
        let exclusive = Rules {
            type_name: "number",
            maximum: Some(5.0),
            exclusive_maximum: true,
            minimum: Some(0.5),
            exclusive_minimum: true,
            ..Rules::default()
        };
        assert_eq!(
            messages(exclusive, Num::Int(5)),
            ["spec.x in body should be less than 5"]
        );
        assert_eq!(
            messages(exclusive, Num::Float(0.5)),
            ["spec.x in body should be greater than 0.5"]
        );
    }

    #[test]
    fn a_fractional_multiple_of_is_zero_for_an_integer() {
        let rules = Rules {
            type_name: "number",
            multiple_of: Some(0.5),
            ..Rules::default()
        };
        assert_eq!(
            messages(rules, Num::Int(5)),
            ["factor MultipleOf declared for spec.x must be positive: 0"]
        );
        assert_eq!(
            messages(rules, Num::Float(1.3)),
            ["spec.x in body should be a multiple of 0.5"]
        );
        assert!(messages(rules, Num::Float(1.5)).is_empty());
        let tenth = Rules {
            multiple_of: Some(0.1),
            ..rules
        };
        assert!(messages(tenth, Num::Float(0.3)).is_empty());
        let three = Rules {
            type_name: "integer",
            multiple_of: Some(3.0),
            ..Rules::default()
        };
        assert_eq!(
            messages(three, Num::Int(7)),
            ["spec.x in body should be a multiple of 3"]
        );
    }

    #[test]
    fn a_bound_that_does_not_fit_the_type_is_reported_on_every_value() {
        let rules = Rules {
            type_name: "integer",
            maximum: Some(5.5),
            ..Rules::default()
        };
        assert_eq!(
            messages(rules, Num::Int(3)),
            ["Maximum boundary value must be of type integer (default format) in spec.x"]
        );
    }

    #[test]
    fn values_out_of_their_format_range_are_reported() {
        let int32 = Rules {
            type_name: "integer",
            format: "int32",
            ..Rules::default()
        };
        assert_eq!(
            messages(int32, Num::Int(2147483648)),
            ["Checked value must be of type integer with format int32 in spec.x"]
        );
        assert!(messages(int32, Num::Int(-2147483648)).is_empty());
        let int64 = Rules {
            type_name: "integer",
            ..Rules::default()
        };
        assert_eq!(
            messages(int64, Num::Float(1.5)),
            ["Checked value must be of type integer (default format) in spec.x"]
        );
        let float = Rules {
            type_name: "number",
            format: "float",
            ..Rules::default()
        };
        assert_eq!(
            messages(float, Num::Float(f32::MAX as f64 * 1.1)),
            ["Checked value must be of type number with format float in spec.x"]
        );
        assert!(messages(float, Num::Float(f32::MAX as f64)).is_empty());
    }
}
