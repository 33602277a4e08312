//! Subschemas combined into one: an `allOf` (or the one branch left of an
//! `anyOf`) merged into its parent, an enum's `oneOf`/`anyOf` hoisted into
//! one `enum` or one object with every variant's properties.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::PRESERVE;

/// Merges a subschema into its parent (`allOf`, or the one branch left of
/// an `anyOf`). The parent's annotations win: a field's doc comment over
/// its type's.
pub(super) fn merge_into(
    obj: &mut Map<String, Value>,
    branch: Value,
    at: &str,
) -> Result<(), String> {
    let Value::Object(branch) = branch else {
        return Err(format!("{at}: a subschema is not an object: {branch}"));
    };
    for (key, value) in branch {
        match obj.get_mut(&key) {
            None => {
                obj.insert(key, value);
            }
            Some(_) if matches!(key.as_str(), "description" | "default" | "example") => {}
            Some(Value::Object(properties)) if key == "properties" => {
                for (name, schema) in value.as_object().into_iter().flatten() {
                    merge_property(properties, name, schema.clone(), at)?;
                }
            }
            Some(Value::Array(required)) if key == "required" => {
                for name in value.as_array().into_iter().flatten() {
                    if !required.contains(name) {
                        required.push(name.clone());
                    }
                }
            }
            Some(existing) if *existing == value => {}
            Some(existing) => {
                return Err(format!(
                    "{at}: combined subschemas disagree on `{key}` ({existing} and {value})"
                ));
            }
        }
    }
    Ok(())
}

/// Adds property `name` to `properties`; a property two variants share
/// must have one schema, except for their `enum`s (a tag's values), which
/// are joined.
fn merge_property(
    properties: &mut Map<String, Value>,
    name: &str,
    schema: Value,
    at: &str,
) -> Result<(), String> {
    let Some(existing) = properties.get_mut(name) else {
        properties.insert(name.to_owned(), schema);
        return Ok(());
    };
    if *existing == schema {
        return Ok(());
    }
    let without = |s: &Value| {
        let mut s = s.clone();
        if let Some(s) = s.as_object_mut() {
            s.remove("enum");
            s.remove("description");
        }
        s
    };
    if let (Some(Value::Array(values)), Some(Value::Array(more))) =
        (existing.get("enum").cloned(), schema.get("enum"))
        && without(existing) == without(&schema)
    {
        let mut values = values;
        for value in more {
            if !values.contains(value) {
                values.push(value.clone());
            }
        }
        existing["enum"] = Value::Array(values);
        return Ok(());
    }
    Err(format!(
        "{at}.{name}: the enum's variants give this property different schemas \
         ({existing} and {schema}); Kubernetes needs one"
    ))
}

/// An enum's `oneOf`/`anyOf`, hoisted: unit variants into one `enum`,
/// variants with fields into one object with all their properties (each
/// variant keeping only its `required`).
pub(super) fn hoist(
    obj: &mut Map<String, Value>,
    key: &str,
    branches: Vec<Value>,
    at: &str,
) -> Result<(), String> {
    let is_scalar = |b: &Value| {
        b.as_object().is_some_and(|o| {
            o.contains_key("enum")
                && o.keys()
                    .all(|k| matches!(k.as_str(), "type" | "enum" | "description"))
        })
    };
    let is_object = |b: &Value| b.get("type").and_then(Value::as_str) == Some("object");
    let mixed = || {
        format!(
            "{at}: the variants of this enum are of different kinds (unit variants with \
             variants holding data, or values of different types); a Kubernetes field has \
             one type: use #[serde(tag = \"...\")] or a hand-made schema \
             (#[schemars(schema_with = \"...\")])"
        )
    };
    let mut parent_type = |ty: &Value| match obj.get("type") {
        Some(existing) if existing != ty => Err(mixed()),
        Some(_) => Ok(()),
        None => {
            obj.insert("type".into(), ty.clone());
            Ok(())
        }
    };
    if branches.iter().all(is_scalar) {
        let types: BTreeSet<String> = branches
            .iter()
            .filter_map(|b| b.get("type"))
            .map(Value::to_string)
            .collect();
        if types.len() > 1 {
            return Err(mixed());
        }
        if let Some(ty) = branches.iter().find_map(|b| b.get("type")) {
            parent_type(ty)?;
        }
        let mut values: Vec<Value> = Vec::new();
        for value in branches
            .iter()
            .filter_map(|b| b.get("enum"))
            .filter_map(Value::as_array)
            .flatten()
        {
            if !values.contains(value) {
                values.push(value.clone());
            }
        }
        obj.insert("enum".into(), Value::Array(values));
        return Ok(());
    }
    if !branches.iter().all(is_object) {
        return Err(mixed());
    }
    parent_type(&json!("object"))?;
    let mut rests = Vec::new();
    for branch in branches {
        let Value::Object(mut branch) = branch else {
            return Err(mixed());
        };
        if let Some(Value::Object(properties)) = branch.remove("properties") {
            let parent = obj
                .entry("properties")
                .or_insert_with(|| json!({}))
                .as_object_mut()
                .ok_or_else(|| format!("{at}: `properties` is not an object"))?;
            for (name, schema) in properties {
                merge_property(parent, &name, schema, at)?;
            }
        }
        if branch.get(PRESERVE) == Some(&json!(true)) {
            obj.insert(PRESERVE.into(), json!(true));
        }
        let mut rest = Map::new();
        if let Some(required) = branch
            .remove("required")
            .filter(|r| r.as_array().is_some_and(|r| !r.is_empty()))
        {
            rest.insert("required".into(), required);
        }
        rests.push(Value::Object(rest));
    }
    // A variant that requires nothing matches every object: the others'
    // `required` then say nothing either (and would break `oneOf`).
    if rests
        .iter()
        .all(|r| r.as_object().is_some_and(|r| !r.is_empty()))
    {
        obj.insert(key.into(), Value::Array(rests));
    }
    Ok(())
}
