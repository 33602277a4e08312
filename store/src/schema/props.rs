//! A CRD's `openAPIV3Schema`, read into [`Schema`] (apiextensions'
//! `JSONSchemaProps`): every keyword the real server knows, so that the
//! validator, defaulting, pruning, CEL and the CRD's own checks work on
//! one type. Reading never fails on a keyword's value: a value of the wrong
//! JSON type is kept as [`Schema::malformed`], for the CRD check to refuse.

use std::collections::BTreeMap;

use serde_json::Value;

/// `additionalProperties`: a schema, or whether any property is allowed.
#[derive(Clone, Debug, PartialEq)]
pub enum Additional {
    /// `true` or `false`.
    Allows(bool),
    /// A schema every other property must match.
    Schema(Box<Schema>),
}

impl Additional {
    /// The schema of the values: none for `true` or `false`
    /// (`StructuralOrBool` without a `Structural`).
    pub(crate) fn schema(&self) -> Option<&Schema> {
        match self {
            Additional::Schema(schema) => Some(schema),
            Additional::Allows(_) => None,
        }
    }
}

/// One `x-kubernetes-validations` rule.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rule {
    /// The CEL expression.
    pub rule: String,
    /// The message when it is false.
    pub message: Option<String>,
    /// A CEL expression giving the message.
    pub message_expression: Option<String>,
    /// The cause type when it is false (`FieldValueInvalid` by default).
    pub reason: Option<String>,
    /// Where the error points, relative to the schema (`.spec.x`).
    pub field_path: Option<String>,
    /// Whether a transition rule also runs when there is no old value.
    pub optional_old_self: Option<bool>,
}

/// One schema node.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Schema {
    /// `type`: object, array, string, integer, number, boolean, or none.
    pub type_: Option<String>,
    /// `format`.
    pub format: Option<String>,
    /// `title`.
    pub title: Option<String>,
    /// `description`.
    pub description: Option<String>,
    /// `default`.
    pub default: Option<Value>,
    /// `example`.
    pub example: Option<Value>,
    /// `nullable`.
    pub nullable: bool,
    /// `maximum`.
    pub maximum: Option<f64>,
    /// `exclusiveMaximum`.
    pub exclusive_maximum: bool,
    /// `minimum`.
    pub minimum: Option<f64>,
    /// `exclusiveMinimum`.
    pub exclusive_minimum: bool,
    /// `multipleOf`.
    pub multiple_of: Option<f64>,
    /// `maxLength`.
    pub max_length: Option<i64>,
    /// `minLength`.
    pub min_length: Option<i64>,
    /// `pattern`.
    pub pattern: Option<String>,
    /// `maxItems`.
    pub max_items: Option<i64>,
    /// `minItems`.
    pub min_items: Option<i64>,
    /// `uniqueItems`.
    pub unique_items: bool,
    /// `maxProperties`.
    pub max_properties: Option<i64>,
    /// `minProperties`.
    pub min_properties: Option<i64>,
    /// `required`.
    pub required: Vec<String>,
    /// `enum`.
    pub enum_: Option<Vec<Value>>,
    /// `properties`, by name.
    pub properties: BTreeMap<String, Schema>,
    /// `additionalProperties`.
    pub additional_properties: Option<Additional>,
    /// `items` as one schema.
    pub items: Option<Box<Schema>>,
    /// `items` as a list of schemas (not structural; kept to be refused).
    pub items_list: Option<Vec<Schema>>,
    /// `allOf`.
    pub all_of: Vec<Schema>,
    /// `anyOf`.
    pub any_of: Vec<Schema>,
    /// `oneOf`.
    pub one_of: Vec<Schema>,
    /// `not`.
    pub not: Option<Box<Schema>>,
    /// `x-kubernetes-preserve-unknown-fields` (`None` when absent).
    pub preserve_unknown_fields: Option<bool>,
    /// `x-kubernetes-embedded-resource`.
    pub embedded_resource: bool,
    /// `x-kubernetes-int-or-string`.
    pub int_or_string: bool,
    /// `x-kubernetes-list-type`: atomic, set or map.
    pub list_type: Option<String>,
    /// `x-kubernetes-list-map-keys`.
    pub list_map_keys: Vec<String>,
    /// `x-kubernetes-map-type`: granular or atomic.
    pub map_type: Option<String>,
    /// `x-kubernetes-validations`.
    pub validations: Vec<Rule>,
    /// Keywords that are set but not allowed in a CRD's schema (`$ref`,
    /// `patternProperties`, `dependencies`, `additionalItems`,
    /// `definitions`, `id`, `$schema`, ...), by name.
    pub forbidden: Vec<String>,
    /// Keywords whose value has the wrong JSON type, by name.
    pub malformed: Vec<String>,
}

fn number(value: &Value) -> Option<f64> {
    value.as_f64()
}

fn integer(value: &Value) -> Option<i64> {
    value.as_i64().or_else(|| {
        value
            .as_f64()
            .filter(|f| f.fract() == 0.0)
            .map(|f| f as i64)
    })
}

impl Schema {
    /// The schema of a map's values (`additionalProperties` as a schema).
    pub(crate) fn additional_schema(&self) -> Option<&Schema> {
        self.additional_properties
            .as_ref()
            .and_then(Additional::schema)
    }

    /// The schemas directly beneath this one: properties, items (one or a
    /// list), the `allOf`, `anyOf`, `oneOf` and `not` branches, and a schema
    /// of `additionalProperties`.
    pub(crate) fn children(&self) -> Vec<&Schema> {
        let mut children: Vec<&Schema> = self
            .properties
            .values()
            .chain(self.items.as_deref())
            .chain(self.items_list.iter().flatten())
            .chain(self.all_of.iter())
            .chain(self.any_of.iter())
            .chain(self.one_of.iter())
            .chain(self.not.as_deref())
            .collect();
        if let Some(Additional::Schema(additional)) = &self.additional_properties {
            children.push(additional);
        }
        children
    }

    /// Reads a schema node.
    pub fn from_json(value: &Value) -> Schema {
        let mut schema = Schema::default();
        let Some(map) = value.as_object() else {
            schema.malformed.push("(schema)".into());
            return schema;
        };
        for (key, value) in map {
            let bad = &mut schema.malformed;
            let mut check = |ok: bool| {
                if !ok {
                    bad.push(key.clone());
                }
            };
            match key.as_str() {
                "type" => {
                    schema.type_ = value.as_str().map(str::to_string);
                    check(schema.type_.is_some());
                }
                "format" => {
                    schema.format = value.as_str().map(str::to_string);
                    check(schema.format.is_some());
                }
                "title" => schema.title = value.as_str().map(str::to_string),
                "description" => schema.description = value.as_str().map(str::to_string),
                "default" => schema.default = Some(value.clone()),
                "example" => schema.example = Some(value.clone()),
                "nullable" => {
                    schema.nullable = value.as_bool().unwrap_or(false);
                    check(value.is_boolean());
                }
                "maximum" => {
                    schema.maximum = number(value);
                    check(schema.maximum.is_some());
                }
                "minimum" => {
                    schema.minimum = number(value);
                    check(schema.minimum.is_some());
                }
                "multipleOf" => {
                    schema.multiple_of = number(value);
                    check(schema.multiple_of.is_some());
                }
                "exclusiveMaximum" => {
                    schema.exclusive_maximum = value.as_bool().unwrap_or(false);
                    check(value.is_boolean());
                }
                "exclusiveMinimum" => {
                    schema.exclusive_minimum = value.as_bool().unwrap_or(false);
                    check(value.is_boolean());
                }
                "maxLength" => {
                    schema.max_length = integer(value);
                    check(schema.max_length.is_some());
                }
                "minLength" => {
                    schema.min_length = integer(value);
                    check(schema.min_length.is_some());
                }
                "pattern" => {
                    schema.pattern = value.as_str().map(str::to_string);
                    check(schema.pattern.is_some());
                }
                "maxItems" => {
                    schema.max_items = integer(value);
                    check(schema.max_items.is_some());
                }
                "minItems" => {
                    schema.min_items = integer(value);
                    check(schema.min_items.is_some());
                }
                "uniqueItems" => {
                    schema.unique_items = value.as_bool().unwrap_or(false);
                    check(value.is_boolean());
                }
                "maxProperties" => {
                    schema.max_properties = integer(value);
                    check(schema.max_properties.is_some());
                }
                "minProperties" => {
                    schema.min_properties = integer(value);
                    check(schema.min_properties.is_some());
                }
                "required" => match value.as_array() {
                    Some(names) => {
                        schema.required = names
                            .iter()
                            .filter_map(|n| n.as_str().map(str::to_string))
                            .collect();
                    }
                    None => check(false),
                },
                "enum" => match value.as_array() {
                    Some(values) => schema.enum_ = Some(values.clone()),
                    None => check(false),
                },
                "properties" => match value.as_object() {
                    Some(properties) => {
                        schema.properties = properties
                            .iter()
                            .map(|(name, p)| (name.clone(), Schema::from_json(p)))
                            .collect();
                    }
                    None => check(false),
                },
                "additionalProperties" => match value {
                    Value::Bool(allows) => {
                        schema.additional_properties = Some(Additional::Allows(*allows));
                    }
                    Value::Object(_) => {
                        schema.additional_properties =
                            Some(Additional::Schema(Box::new(Schema::from_json(value))));
                    }
                    _ => check(false),
                },
                "items" => match value {
                    Value::Array(list) => {
                        schema.items_list = Some(list.iter().map(Schema::from_json).collect());
                    }
                    Value::Object(_) => schema.items = Some(Box::new(Schema::from_json(value))),
                    _ => check(false),
                },
                "allOf" | "anyOf" | "oneOf" => match value.as_array() {
                    Some(list) => {
                        let list = list.iter().map(Schema::from_json).collect();
                        match key.as_str() {
                            "allOf" => schema.all_of = list,
                            "anyOf" => schema.any_of = list,
                            _ => schema.one_of = list,
                        }
                    }
                    None => check(false),
                },
                "not" => match value {
                    Value::Object(_) => schema.not = Some(Box::new(Schema::from_json(value))),
                    _ => check(false),
                },
                "x-kubernetes-preserve-unknown-fields" => {
                    schema.preserve_unknown_fields = value.as_bool();
                    check(value.is_boolean());
                }
                "x-kubernetes-embedded-resource" => {
                    schema.embedded_resource = value.as_bool().unwrap_or(false);
                    check(value.is_boolean());
                }
                "x-kubernetes-int-or-string" => {
                    schema.int_or_string = value.as_bool().unwrap_or(false);
                    check(value.is_boolean());
                }
                "x-kubernetes-list-type" => {
                    schema.list_type = value.as_str().map(str::to_string);
                    check(schema.list_type.is_some());
                }
                "x-kubernetes-map-type" => {
                    schema.map_type = value.as_str().map(str::to_string);
                    check(schema.map_type.is_some());
                }
                "x-kubernetes-list-map-keys" => match value.as_array() {
                    Some(keys) => {
                        schema.list_map_keys = keys
                            .iter()
                            .filter_map(|k| k.as_str().map(str::to_string))
                            .collect();
                    }
                    None => check(false),
                },
                "x-kubernetes-validations" => match value.as_array() {
                    Some(rules) => {
                        schema.validations = rules
                            .iter()
                            .map(|r| {
                                let text = |k: &str| r[k].as_str().map(str::to_string);
                                Rule {
                                    rule: text("rule").unwrap_or_default(),
                                    message: text("message"),
                                    message_expression: text("messageExpression"),
                                    reason: text("reason"),
                                    field_path: text("fieldPath"),
                                    optional_old_self: r["optionalOldSelf"].as_bool(),
                                }
                            })
                            .collect();
                    }
                    None => check(false),
                },
                "$ref" | "id" | "$schema" | "patternProperties" | "dependencies"
                | "additionalItems" | "definitions" | "externalDocs" => {
                    schema.forbidden.push(key.clone());
                }
                _ => {}
            }
        }
        schema
    }

    /// Whether the node allows any field beneath it to be kept as is.
    pub fn preserves_unknown_fields(&self) -> bool {
        self.preserve_unknown_fields == Some(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_keyword_is_read() {
        let schema = Schema::from_json(&json!({
            "type": "object",
            "required": ["size"],
            "x-kubernetes-validations": [{"rule": "self.a <= self.b", "message": "m", "fieldPath": ".a"}],
            "properties": {
                "size": {"type": "string", "enum": ["small", "large"], "default": "small"},
                "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                          "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}, "maxProperties": 2},
                "any": {"type": "object", "additionalProperties": false},
                "target": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
                "bad": {"$ref": "#/x", "minLength": "two", "items": [{"type": "string"}]},
            },
        }));
        assert_eq!(schema.type_.as_deref(), Some("object"));
        assert_eq!(schema.validations[0].field_path.as_deref(), Some(".a"));
        let size = &schema.properties["size"];
        assert_eq!(size.enum_.as_ref().unwrap().len(), 2);
        assert_eq!(size.default, Some(json!("small")));
        assert_eq!(schema.properties["ports"].list_map_keys, ["name"]);
        assert!(schema.properties["ports"].items.is_some());
        assert!(matches!(
            schema.properties["labels"].additional_properties,
            Some(Additional::Schema(_))
        ));
        assert_eq!(
            schema.properties["any"].additional_properties,
            Some(Additional::Allows(false))
        );
        assert!(schema.properties["target"].int_or_string);
        let bad = &schema.properties["bad"];
        assert_eq!(bad.forbidden, ["$ref"]);
        assert_eq!(bad.malformed, ["minLength"]);
        assert!(bad.items_list.is_some());
    }
}
