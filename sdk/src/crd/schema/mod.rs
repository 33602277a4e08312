//! Structural schemas: what schemars generates (or a hand-made schema)
//! made into what Kubernetes takes — subschemas inlined, keywords it
//! refuses dropped or named in an error, keywords in a stable order — and
//! the schema of [`Condition`].

use std::borrow::Cow;

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde_json::{Map, Value, json};

use crate::conditions::Condition;

mod combine;
#[cfg(test)]
mod tests;

use combine::{hoist, merge_into};

pub(super) const PRESERVE: &str = "x-kubernetes-preserve-unknown-fields";

/// The structural schema of `T`: what schemars generates, made structural
/// (see the [module docs](crate::crd#the-schema)). Fails on what Kubernetes
/// cannot express (a recursive type, a tuple, an enum whose variants are of
/// different types...), naming the field.
pub fn schema_for<T: JsonSchema + ?Sized>() -> Result<Value, String> {
    let generator = SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let schema = generator.into_root_schema_for::<T>();
    structural(schema.to_value(), &T::schema_name())
}

/// Makes a JSON schema (from schemars, or hand-made) a Kubernetes
/// structural schema, the way [`schema_for`] does; `name` names the root in
/// errors.
pub fn structural(mut schema: Value, name: &str) -> Result<Value, String> {
    make_structural(&mut schema, name)?;
    Ok(schema)
}

/// Schema keywords Kubernetes does not take, or that mean nothing to it.
const DROPPED: [&str; 14] = [
    "$schema",
    "$id",
    "$comment",
    "$defs",
    "definitions",
    "title",
    "deprecated",
    "readOnly",
    "writeOnly",
    "unevaluatedProperties",
    "unevaluatedItems",
    "propertyNames",
    "contentEncoding",
    "contentMediaType",
];

/// Keywords with no structural form: an error names them.
const UNSUPPORTED: [&str; 10] = [
    "patternProperties",
    "prefixItems",
    "additionalItems",
    "dependencies",
    "dependentSchemas",
    "dependentRequired",
    "contains",
    "if",
    "then",
    "else",
];

/// The order of keywords in what we write (others follow in their order).
const ORDER: [&str; 33] = [
    "type",
    "format",
    "description",
    "enum",
    "default",
    "example",
    "minimum",
    "exclusiveMinimum",
    "maximum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "nullable",
    PRESERVE,
    "x-kubernetes-int-or-string",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
    "required",
    "properties",
    "additionalProperties",
    "items",
    "oneOf",
    "anyOf",
    "not",
];

pub(super) fn make_structural(schema: &mut Value, at: &str) -> Result<(), String> {
    let obj = match schema {
        Value::Bool(true) => {
            *schema = json!({PRESERVE: true});
            return Ok(());
        }
        Value::Bool(false) => {
            return Err(format!(
                "{at}: the schema `false` (no value at all) has no Kubernetes form"
            ));
        }
        Value::Object(obj) => obj,
        other => return Err(format!("{at}: not a schema: {other}")),
    };
    if let Some(reference) = obj.get("$ref") {
        return Err(format!(
            "{at}: still refers to {reference} after inlining: a recursive type has no \
             Kubernetes structural schema (give the field a hand-made one with \
             #[schemars(schema_with = \"...\")])"
        ));
    }
    if let Some(key) = UNSUPPORTED.iter().find(|k| obj.contains_key(**k)) {
        let hint = if *key == "prefixItems" {
            " (a tuple: use a struct)"
        } else {
            ""
        };
        return Err(format!(
            "{at}: `{key}` has no Kubernetes structural form{hint}"
        ));
    }
    if obj.get("items").is_some_and(Value::is_array) {
        return Err(format!(
            "{at}: `items` as a list (a tuple) has no Kubernetes structural form: use a struct"
        ));
    }
    for key in DROPPED {
        obj.remove(key);
    }
    if let Some(examples) = obj.remove("examples")
        && let Some(first) = examples.as_array().and_then(|e| e.first())
        && !obj.contains_key("example")
    {
        obj.insert("example".into(), first.clone());
    }
    if let Some(value) = obj.remove("const") {
        obj.insert("enum".into(), json!([value]));
    }
    single_type(obj, at)?;
    if let Some(Value::Array(values)) = obj.get_mut("enum") {
        values.retain(|v| !v.is_null());
        if values.is_empty() {
            return Err(format!(
                "{at}: only `null` is allowed, which Kubernetes cannot say"
            ));
        }
    }

    // The subschemas.
    if let Some(Value::Object(properties)) = obj.get_mut("properties") {
        for (name, property) in properties.iter_mut() {
            make_structural(property, &format!("{at}.{name}"))?;
        }
    }
    if let Some(items) = obj.get_mut("items") {
        make_structural(items, &format!("{at}[]"))?;
    }
    match obj.remove("additionalProperties") {
        // A map of anything (`Map<String, Value>`).
        Some(Value::Bool(true)) => {
            obj.insert(PRESERVE.into(), json!(true));
        }
        // `deny_unknown_fields`: the API server prunes unknown fields.
        Some(Value::Bool(false)) | None => {}
        Some(mut values) => {
            make_structural(&mut values, &format!("{at}.*"))?;
            if obj
                .get("properties")
                .is_some_and(|p| p.as_object().is_some_and(|p| !p.is_empty()))
            {
                // A map flattened into a struct: both are not allowed.
                obj.insert(PRESERVE.into(), json!(true));
            } else {
                obj.insert("additionalProperties".into(), values);
            }
        }
    }
    if let Some(not) = obj.get_mut("not") {
        make_structural(not, &format!("{at} (not)"))?;
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = obj.get_mut(key) {
            // `Option<T>` is `anyOf: [T, null]`: not required is enough.
            branches.retain(|b| !is_null_schema(b));
            for (i, branch) in branches.iter_mut().enumerate() {
                make_structural(branch, &format!("{at} ({key} #{i})"))?;
            }
        }
    }
    if let Some(all) = obj.remove("allOf") {
        for branch in all.as_array().into_iter().flatten() {
            merge_into(obj, branch.clone(), at)?;
        }
    }
    for key in ["anyOf", "oneOf"] {
        match obj.remove(key) {
            Some(Value::Array(mut branches)) if branches.len() == 1 => {
                merge_into(obj, branches.remove(0), at)?;
            }
            Some(Value::Array(branches)) if branches.is_empty() => {}
            Some(Value::Array(branches)) => hoist(obj, key, branches, at)?,
            Some(other) => return Err(format!("{at}: `{key}` is not a list: {other}")),
            None => {}
        }
    }

    // Keywords.
    if obj.get("type").and_then(Value::as_str) == Some("integer") {
        let format = match obj.get("format").and_then(Value::as_str) {
            Some("int8" | "int16" | "int32" | "uint8" | "uint16" | "uint32") => Some("int32"),
            Some("int64" | "uint64" | "int" | "uint") => Some("int64"),
            Some("int128" | "uint128") => None,
            Some(other) => Some(other),
            None => None,
        }
        .map(str::to_owned);
        match format {
            Some(format) => obj.insert("format".into(), json!(format)),
            None => obj.remove("format"),
        };
    }
    for (bound, exclusive) in [
        ("minimum", "exclusiveMinimum"),
        ("maximum", "exclusiveMaximum"),
    ] {
        // JSON Schema's exclusive bound is a number, OpenAPI 3.0's a flag.
        if let Some(limit) = obj.get(exclusive).filter(|v| v.is_number()).cloned() {
            obj.insert(bound.into(), limit);
            obj.insert(exclusive.into(), json!(true));
        }
    }
    obj.remove("uniqueItems");
    if !obj.contains_key("type") {
        if let Some(ty) = inferred_type(obj) {
            obj.insert("type".into(), json!(ty));
        } else if !obj.contains_key("x-kubernetes-int-or-string") {
            // No type at all (e.g. a documented `serde_json::Value`): anything goes.
            obj.insert(PRESERVE.into(), json!(true));
        }
    }
    *obj = ordered(std::mem::take(obj));
    Ok(())
}

/// `type: [T, "null"]` (an `Option<T>`) is `type: T`.
fn single_type(obj: &mut Map<String, Value>, at: &str) -> Result<(), String> {
    let types = match obj.get("type") {
        Some(Value::Array(types)) => types.clone(),
        Some(Value::String(t)) if t == "null" => {
            return Err(format!("{at}: the type `null` has no Kubernetes form"));
        }
        _ => return Ok(()),
    };
    let types: Vec<Value> = types.into_iter().filter(|t| t != "null").collect();
    match types.as_slice() {
        [one] => {
            obj.insert("type".into(), one.clone());
            Ok(())
        }
        [] => Err(format!("{at}: the type `null` has no Kubernetes form")),
        several => Err(format!(
            "{at}: several types ({}): a Kubernetes field has one type \
             (for an int or a string, use a hand-made schema with x-kubernetes-int-or-string)",
            Value::Array(several.to_vec())
        )),
    }
}

fn is_null_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
        || schema.get("const").is_some_and(Value::is_null)
        || schema.get("enum") == Some(&json!([null]))
}

fn inferred_type(obj: &Map<String, Value>) -> Option<&'static str> {
    if obj.contains_key("properties") || obj.contains_key("additionalProperties") {
        return Some("object");
    }
    if obj.contains_key("items") {
        return Some("array");
    }
    let values = obj.get("enum")?.as_array()?;
    let all = |f: fn(&Value) -> bool| values.iter().all(f);
    if all(Value::is_string) {
        Some("string")
    } else if all(Value::is_boolean) {
        Some("boolean")
    } else if all(|v| v.is_i64() || v.is_u64()) {
        Some("integer")
    } else if all(Value::is_number) {
        Some("number")
    } else {
        None
    }
}

pub(super) fn ordered(mut obj: Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for key in ORDER {
        if let Some(value) = obj.remove(key) {
            out.insert(key.into(), value);
        }
    }
    out.extend(obj);
    out
}

/// `metav1.Condition`'s schema, for `Vec<Condition>` in a status.
impl JsonSchema for Condition {
    fn schema_name() -> Cow<'static, str> {
        "Condition".into()
    }

    fn schema_id() -> Cow<'static, str> {
        "rekon_sdk::conditions::Condition".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "object",
            "required": ["type", "status"],
            "properties": {
                "type": {"type": "string", "description": "Condition type in CamelCase, e.g. Ready."},
                "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
                "reason": {"type": "string", "description": "One CamelCase word saying why."},
                "message": {"type": "string", "description": "Human-readable detail."},
                "lastTransitionTime": {
                    "type": "string",
                    "format": "date-time",
                    "description": "When status last changed.",
                },
                "observedGeneration": {
                    "type": "integer",
                    "format": "int64",
                    "description": "The metadata.generation the condition was computed from.",
                },
            },
        })
    }
}
