//! kube-openapi's `SchemaValidator.Validate` (`validate/schema.go`): the
//! validators of one schema node, in Go's order, each run when it applies
//! to the kind of the value, and the match count they add up to.
//!
//! The node is the schema as apiextensions hands it to kube-openapi
//! (`ConvertJSONSchemaPropsWithPostProcess`): `x-kubernetes-int-or-string`
//! makes the type `[integer, string]`, and a format the server does not
//! validate is dropped.

use serde_json::Value;

use super::go::{self, Kind};
use super::result::GoResult;
use super::{composition, formats, number, object, slice, type_check, values};
use crate::schema::Schema;

/// The type list and the kept format of a schema node.
pub(crate) struct Node<'a> {
    /// The schema.
    pub(crate) schema: &'a Schema,
    /// `type`, as a list.
    pub(crate) types: Vec<&'a str>,
    /// The format, or "" when there is none or it is dropped.
    pub(crate) format: &'a str,
}

impl<'a> Node<'a> {
    /// The node of a schema.
    pub(crate) fn new(schema: &'a Schema) -> Self {
        let types: Vec<&str> = if schema.int_or_string {
            vec!["integer", "string"]
        } else {
            schema
                .type_
                .as_deref()
                .filter(|t| !t.is_empty())
                .into_iter()
                .collect()
        };
        let format = formats::kept(&types, schema.format.as_deref());
        Node {
            schema,
            types,
            format,
        }
    }

    /// The rules of the number validator: type and format only when the
    /// type is one of integer or number.
    fn number_rules(&self) -> number::Rules<'a> {
        let (type_name, format) = match self.types.as_slice() {
            ["integer"] => ("integer", self.format),
            ["number"] => ("number", self.format),
            _ => ("", ""),
        };
        let s = self.schema;
        number::Rules {
            type_name,
            format,
            multiple_of: s.multiple_of,
            maximum: s.maximum,
            exclusive_maximum: s.exclusive_maximum,
            minimum: s.minimum,
            exclusive_minimum: s.exclusive_minimum,
        }
    }
}

/// Validates `data` at `path` against `schema`. `old` is the correlated
/// old value when the node is validated with ratcheting (see
/// [`super::ratchet`]); its children are then ratcheted too.
pub(crate) fn validate(schema: &Schema, path: &str, data: &Value, old: Option<&Value>) -> GoResult {
    let node = Node::new(schema);
    let mut result = GoResult::new();
    let kind = go::kind(data);
    if kind == Kind::Nil {
        // Only the type and enum validators look at a null.
        result.merge(type_check::validate(
            &node.types,
            schema.nullable,
            node.format,
            path,
            data,
        ));
        result.merge(values::validate_enum(schema.enum_.as_deref(), path, data));
        return result;
    }

    if !node.types.is_empty() || !node.format.is_empty() {
        result.merge(type_check::validate(
            &node.types,
            schema.nullable,
            node.format,
            path,
            data,
        ));
        result.inc();
    }

    result.merge(composition::validate(schema, path, data));
    result.inc();

    if let Value::String(text) = data {
        result.merge(values::validate_string(schema, path, text));
        result.inc();
        if formats::known(node.format) {
            result.merge(formats::validate(node.format, path, text));
            result.inc();
        }
    }

    if let Some(n) = go::Num::of(data) {
        result.merge(number::validate(&node.number_rules(), path, n));
        result.inc();
    }

    if let Value::Array(items) = data {
        result.merge(slice::validate(schema, path, items, old));
        result.inc();
    }

    result.merge(values::validate_enum(schema.enum_.as_deref(), path, data));
    result.inc();

    if let Value::Object(map) = data {
        result.merge(object::validate(schema, path, map, old));
        result.inc();
    }

    result.inc();
    result
}

#[cfg(test)]
mod tests {
    //! Cases of apiextensions' `TestValidateCustomResource`.
    use super::super::validate as validate_object;
    use crate::schema::Schema;
    use serde_json::{Value, json};

    fn errors(field: Value, object: Value) -> Vec<String> {
        let schema = Schema::from_json(&json!({"type": "object", "properties": {"field": field}}));
        let mut errors: Vec<String> = validate_object(&schema, &object)
            .iter()
            .map(ToString::to_string)
            .collect();
        errors.sort();
        errors
    }

    fn type_error(type_name: &str, found: &str) -> Vec<String> {
        vec![format!(
            "field: Invalid value: \"{found}\": field in body must be of type {type_name}: \"{found}\""
        )]
    }

    #[test]
    fn nullable_decides_whether_null_is_a_type_error() {
        let strict = json!({"type": "object"});
        let nullable = json!({"type": "object", "nullable": true});
        for (value, found) in [
            (json!("foo"), "string"),
            (json!(42), "integer"),
            (json!(true), "boolean"),
            (json!(1.2), "number"),
            (json!([]), "array"),
        ] {
            assert_eq!(
                errors(strict.clone(), json!({"field": value})),
                type_error("object", found)
            );
            assert_eq!(
                errors(nullable.clone(), json!({"field": value})),
                type_error("object", found)
            );
        }
        assert_eq!(
            errors(strict, json!({"field": null})),
            type_error("object", "null")
        );
        assert!(errors(nullable, json!({"field": null})).is_empty());
        let untyped = json!({"nullable": true});
        for value in [
            json!({}),
            json!(null),
            json!("foo"),
            json!(42),
            json!(true),
            json!(1.2),
            json!([]),
        ] {
            assert!(errors(untyped.clone(), json!({"field": value})).is_empty());
        }
    }

    #[test]
    fn int_or_string_is_the_type_list_integer_string() {
        let plain = json!({"x-kubernetes-int-or-string": true});
        let nullable = json!({"x-kubernetes-int-or-string": true, "nullable": true});
        for value in [json!(42), json!("foo")] {
            assert!(errors(plain.clone(), json!({"field": value})).is_empty());
        }
        assert_eq!(
            errors(plain.clone(), json!({"field": null})),
            type_error("integer,string", "null")
        );
        assert!(errors(nullable.clone(), json!({"field": null})).is_empty());
        for (value, found) in [
            (json!(true), "boolean"),
            (json!(1.2), "number"),
            (json!({}), "object"),
            (json!([]), "array"),
        ] {
            assert_eq!(
                errors(plain.clone(), json!({"field": value.clone()})),
                type_error("integer,string", found)
            );
            assert_eq!(
                errors(nullable.clone(), json!({"field": value})),
                type_error("integer,string", found)
            );
        }
    }

    #[test]
    fn int_or_string_with_any_of_and_all_of_reports_the_best_branch() {
        let any_of = json!({"x-kubernetes-int-or-string": true, "nullable": true,
            "anyOf": [{"type": "integer"}, {"type": "string"}]});
        let all_of = json!({"x-kubernetes-int-or-string": true, "nullable": true,
            "allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}]});
        let any = "<nil>: Invalid value: \"\": \"field\" must validate at least one schema (anyOf)";
        let all = "<nil>: Invalid value: \"\": \"field\" must validate all the schemas (allOf). None validated";
        let checked = "<nil>: Invalid value: \"\": Checked value must be of type integer (default format) in field";
        for (value, found) in [
            (json!(true), "boolean"),
            (json!(1.2), "number"),
            (json!({}), "object"),
            (json!([]), "array"),
        ] {
            let mut expected = vec![
                any.to_string(),
                type_error("integer,string", found).remove(0),
                type_error("integer", found).remove(0),
            ];
            if found == "number" {
                expected.push(checked.to_string());
            }
            expected.sort();
            assert_eq!(
                errors(any_of.clone(), json!({"field": value.clone()})),
                expected
            );
            expected.push(all.to_string());
            expected.sort();
            assert_eq!(errors(all_of.clone(), json!({"field": value})), expected);
        }
        for value in [json!(null), json!(42), json!("foo")] {
            assert!(errors(any_of.clone(), json!({"field": value.clone()})).is_empty());
            assert!(errors(all_of.clone(), json!({"field": value})).is_empty());
        }
    }

    #[test]
    fn required_and_enum_errors_name_the_field() {
        let schema = Schema::from_json(
            &json!({"type": "object", "required": ["field"], "properties": {
            "field": {"type": "object", "required": ["nested"], "properties": {"nested": {}}}}}),
        );
        let messages = |object: Value| -> Vec<String> {
            validate_object(&schema, &object)
                .iter()
                .map(ToString::to_string)
                .collect()
        };
        assert_eq!(messages(json!({"test": "a"})), ["field: Required value"]);
        assert_eq!(
            messages(json!({"field": {}})),
            ["field.nested: Required value"]
        );
        let enums = json!({"type": "object", "required": ["nestedint", "nestedstring"], "properties": {
            "nestedint": {"type": "integer", "enum": [1, 2]},
            "nestedstring": {"type": "string", "enum": ["a", "b"]}}});
        assert_eq!(
            errors(enums.clone(), json!({"field": {}})),
            [
                "field.nestedint: Required value",
                "field.nestedstring: Required value"
            ]
        );
        assert_eq!(
            errors(
                enums,
                json!({"field": {"nestedint": "x", "nestedstring": true}})
            ),
            [
                "field.nestedint: Invalid value: \"string\": field.nestedint in body must be of type integer: \"string\"",
                "field.nestedint: Unsupported value: \"x\": supported values: \"1\", \"2\"",
                "field.nestedstring: Invalid value: \"boolean\": field.nestedstring in body must be of type string: \"boolean\"",
                "field.nestedstring: Unsupported value: true: supported values: \"a\", \"b\"",
            ]
        );
    }

    #[test]
    fn an_integer_too_large_for_int64_is_a_float() {
        // As a real server answers for 18446744073709551615.
        assert_eq!(
            errors(
                json!({"type": "integer", "maximum": 10}),
                json!({"field": u64::MAX})
            ),
            [
                "<nil>: Invalid value: \"\": Checked value must be of type integer (default format) in field",
                "field: Invalid value: \"number\": field in body must be of type integer: \"number\"",
                "field: Invalid value: 1.8446744073709552e+19: field in body should be less than or equal to 10",
            ]
        );
    }

    #[test]
    fn kubernetes_name_formats_are_validated() {
        assert_eq!(
            errors(
                json!({"type": "string", "format": "k8s-long-name"}),
                json!({"field": "a.-"})
            ),
            ["field: Invalid value: \"a.-\": field in body must be of type k8s-long-name: \"a.-\""]
        );
        assert_eq!(
            errors(
                json!({"type": "string", "format": "k8s-short-name"}),
                json!({"field": "a-"})
            ),
            ["field: Invalid value: \"a-\": field in body must be of type k8s-short-name: \"a-\""]
        );
    }

    #[test]
    fn numeric_formats_bound_their_values() {
        let int32 = json!({"type": "integer", "format": "int32"});
        let int64 = json!({"type": "integer", "format": "int64"});
        let float = json!({"type": "number", "format": "float"});
        let double = json!({"type": "number", "format": "double"});
        for (schema, value) in [
            (&int32, json!(i32::MIN)),
            (&int32, json!(i32::MAX)),
            (&int64, json!(i64::MIN)),
            (&int64, json!(i64::MAX)),
            (&float, json!(-f32::MAX as f64)),
            (&float, json!(f32::MAX as f64)),
            (&double, json!(f64::MAX)),
            (&double, json!(0.0)),
        ] {
            assert!(errors(schema.clone(), json!({"field": value})).is_empty());
        }
        let checked = |what: &str| {
            format!("<nil>: Invalid value: \"\": Checked value must be of type {what} in field")
        };
        assert_eq!(
            errors(int32.clone(), json!({"field": i64::from(i32::MAX) + 1})),
            [checked("integer with format int32")]
        );
        assert_eq!(
            errors(int32, json!({"field": i64::from(i32::MIN) - 1})),
            [checked("integer with format int32")]
        );
        assert_eq!(
            errors(int64, json!({"field": i64::MAX as f64 * 1.1})),
            [
                checked("integer with format int64"),
                "field: Invalid value: \"float64\": field in body must be of type int64: \"float64\"".to_string(),
            ]
        );
        assert_eq!(
            errors(float, json!({"field": f32::MAX as f64 * 1.1})),
            [checked("number with format float")]
        );
    }
}
