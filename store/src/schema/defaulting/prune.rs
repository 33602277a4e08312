//! The defaults of a schema pruned as the real server prunes them before
//! it serves a version (`defaulting/prune.go` `PruneDefaults`, with the
//! surrounding objects of `surroundingobject.go`): each default is put in
//! an object shaped by the path to its node (`{"spec": {"ports": [x]}}`,
//! `*` for a map value), the metadata of that object's embedded resources
//! coerced (dropping what cannot be read), the object pruned by the whole
//! schema as a resource, and the default read back from where it was put.

use serde_json::{Map, Value};

use super::default_of;
use crate::machinery::field::Path;
use crate::schema::objectmeta::{self, CoerceOptions};
use crate::schema::{Additional, Schema, pruning};

/// A step from a schema node to one beneath it, and the matching step in
/// an object.
#[derive(Clone, Debug)]
enum Step {
    /// `properties[k]`: the field `k`.
    Property(String),
    /// `additionalProperties`: a map value, put under the key `*`.
    Additional,
    /// `items`: the first item of a list.
    Items,
}

/// Prunes the defaults of `schema` and of every node beneath it, which is
/// the `openAPIV3Schema` of a version (`PruneDefaults`). Returns whether
/// any default changed, or the error of the first that could not be
/// pruned (`failed to prune default value: ...`).
pub fn prune_defaults(schema: &mut Schema) -> Result<bool, String> {
    let mut pruned = Vec::new();
    collect(schema, schema, &mut Vec::new(), &mut pruned)?;
    let mut changed = false;
    for (steps, default) in pruned {
        let node = locate(schema, &steps);
        if node.default != default {
            node.default = default;
            changed = true;
        }
    }
    Ok(changed)
}

/// Walks the schema as `pruneDefaults` does (the node's default, then
/// `additionalProperties`, `items`, `properties`), pruning every default
/// against `root`.
fn collect(
    root: &Schema,
    node: &Schema,
    steps: &mut Vec<Step>,
    pruned: &mut Vec<(Vec<Step>, Option<Value>)>,
) -> Result<(), String> {
    if let Some(default) = default_of(node) {
        let default = prune_default(root, steps, default.clone())
            .map_err(|error| format!("failed to prune default value: {error}"))?;
        pruned.push((steps.clone(), default));
    }
    if let Some(Additional::Schema(values)) = &node.additional_properties {
        steps.push(Step::Additional);
        collect(root, values, steps, pruned)?;
        steps.pop();
    }
    if let Some(items) = &node.items {
        steps.push(Step::Items);
        collect(root, items, steps, pruned)?;
        steps.pop();
    }
    for (name, property) in &node.properties {
        steps.push(Step::Property(name.clone()));
        collect(root, property, steps, pruned)?;
        steps.pop();
    }
    Ok(())
}

/// One default, surrounded, coerced, pruned, and read back (`None` when
/// nothing of it is left where it was).
fn prune_default(root: &Schema, steps: &[Step], default: Value) -> Result<Option<Value>, String> {
    let mut object = surround(steps, default)?;
    let options = CoerceOptions {
        drop_invalid_fields: true,
        return_unknown_field_paths: false,
    };
    if let (Some(error), _) = objectmeta::coerce(&Path::none(), &mut object, root, true, options) {
        return Err(error.to_string());
    }
    pruning::prune(&mut object, root, true);
    access(steps, object)
}

/// The object with `value` at the end of `steps` (`SurroundingObjectFunc`).
fn surround(steps: &[Step], value: Value) -> Result<Value, String> {
    let mut value = value;
    for step in steps.iter().rev() {
        value = match step {
            Step::Property(name) => Value::Object(Map::from_iter([(name.clone(), value)])),
            Step::Additional => Value::Object(Map::from_iter([("*".to_string(), value)])),
            Step::Items => Value::Array(vec![value]),
        };
    }
    if !value.is_object() {
        return Err("object root default value must be of object type".into());
    }
    Ok(value)
}

/// What is at the end of `steps` in `object` (the accessor of a
/// `SurroundingObjectFunc`).
fn access(steps: &[Step], object: Value) -> Result<Option<Value>, String> {
    let mut current = object;
    for step in steps {
        current = match (step, current) {
            (Step::Property(name), Value::Object(mut map)) => match map.remove(name) {
                Some(value) => value,
                None => return Ok(None),
            },
            (Step::Additional, Value::Object(mut map)) => match map.remove("*") {
                Some(value) => value,
                None => return Ok(None),
            },
            (Step::Items, Value::Array(items)) => match items.into_iter().next() {
                Some(value) => value,
                None => return Ok(None),
            },
            (Step::Property(name), _) => return Err(format!(".{name} must be of object type")),
            (Step::Additional, _) => return Err(".* must be of object type".into()),
            (Step::Items, _) => return Err("[] must be of array type".into()),
        };
    }
    Ok(Some(current))
}

/// The node at the end of `steps`, which [`collect`] walked.
fn locate<'a>(schema: &'a mut Schema, steps: &[Step]) -> &'a mut Schema {
    let mut node = schema;
    for step in steps {
        node = match step {
            Step::Property(name) => node
                .properties
                .get_mut(name)
                .expect("the property was walked"),
            Step::Additional => match node.additional_properties.as_mut() {
                Some(Additional::Schema(values)) => values,
                _ => unreachable!("additionalProperties was walked as a schema"),
            },
            Step::Items => node.items.as_deref_mut().expect("items were walked"),
        };
    }
    node
}
