//! The metadata of embedded resources (`x-kubernetes-embedded-resource`),
//! as apiextensions-apiserver checks and coerces it
//! (`pkg/apiserver/schema/objectmeta`):
//!
//! - [`validate`] / [`validate_embedded`] (`validation.go`): an embedded
//!   object needs `apiVersion` and `kind` (`Required value`), they must be
//!   strings, not empty, a group/version and a DNS-1035 label of any case;
//!   its `metadata` must read as an ObjectMeta and pass the generic
//!   ObjectMeta checks (`machinery::objectmeta`) with names as path segments
//!   (no `/`, `%`, `.` or `..`), a missing name allowed.
//! - [`coerce`] (`coerce.go`): before validation, while decoding, the
//!   `metadata` of every embedded object is read into an ObjectMeta and
//!   written back ([`get_object_meta`]): unknown fields dropped (and
//!   listed for `fieldValidation`), timestamps normalised, empty values
//!   gone. A `metadata` that cannot be read, or an `apiVersion`/`kind`
//!   that is not a string, fails the decoding (a 400).
//!
//! The resource root goes through the same reading in the decoder
//! ([`get_object_meta`] on the object itself), not through [`coerce`].

mod decode;

use serde_json::{Map, Value};

use super::Schema;
use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::names::is_dns1035_label;
use crate::machinery::names::is_path_segment_name;
use crate::machinery::names::is_path_segment_prefix;
use crate::machinery::objectmeta::validate_object_meta_with;

pub use decode::{ObjectMeta, ObjectMetaOptions, get_object_meta};

/// How [`coerce`] treats what it cannot read (`CoerceOptions`).
#[derive(Clone, Copy, Debug, Default)]
pub struct CoerceOptions {
    /// Drops what cannot be read instead of failing: the server does so
    /// when it reads what it stored, never for a request.
    pub drop_invalid_fields: bool,
    /// Lists the unknown fields of the metadata.
    pub return_unknown_field_paths: bool,
}

/// The metadata of the embedded resources of `value` read and written
/// back as Go's ObjectMeta (`CoerceWithOptions`). Returns the first error
/// (`spec.template.metadata: Invalid value: {"name":5}: json: cannot
/// unmarshal number into Go struct field ObjectMeta.name of type string`),
/// which the real server answers as a 400, and the unknown metadata
/// fields, sorted (`spec.template.metadata.colour`; map values by
/// `[key]`, unlike pruning's paths). With `is_resource_root`, `value`
/// itself is treated as an embedded resource.
pub fn coerce(
    path: &Path,
    value: &mut Value,
    schema: &Schema,
    is_resource_root: bool,
    options: CoerceOptions,
) -> (Option<FieldError>, Vec<String>) {
    let mut unknown = Vec::new();
    let embedded = is_resource_root || schema.embedded_resource;
    let error = coerce_node(path, value, Some(schema), embedded, options, &mut unknown).err();
    unknown.sort();
    (error, unknown)
}

fn coerce_node(
    path: &Path,
    value: &mut Value,
    schema: Option<&Schema>,
    embedded: bool,
    options: CoerceOptions,
    unknown: &mut Vec<String>,
) -> Result<(), FieldError> {
    let Some(schema) = schema else {
        return Ok(());
    };
    match value {
        Value::Object(map) => {
            let keys: Vec<String> = map.keys().cloned().collect();
            for key in keys {
                if embedded {
                    coerce_type_and_meta(path, map, &key, options, unknown)?;
                }
                let Some(child) = map.get_mut(&key) else {
                    continue;
                };
                if let Some(property) = schema.properties.get(&key) {
                    let child_path = path.child(&key);
                    coerce_node(
                        &child_path,
                        child,
                        Some(property),
                        property.embedded_resource,
                        options,
                        unknown,
                    )?;
                } else if let Some(additional) = &schema.additional_properties {
                    let values = additional.schema();
                    let child_embedded = values.is_some_and(|s| s.embedded_resource);
                    coerce_node(
                        &path.key(&key),
                        child,
                        values,
                        child_embedded,
                        options,
                        unknown,
                    )?;
                }
            }
        }
        Value::Array(items) => {
            let item_schema = schema.items.as_deref();
            let item_embedded = item_schema.is_some_and(|s| s.embedded_resource);
            for (index, item) in items.iter_mut().enumerate() {
                coerce_node(
                    &path.index(index),
                    item,
                    item_schema,
                    item_embedded,
                    options,
                    unknown,
                )?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// The `apiVersion`, `kind` and `metadata` of an embedded resource.
fn coerce_type_and_meta(
    path: &Path,
    map: &mut Map<String, Value>,
    key: &str,
    options: CoerceOptions,
    unknown: &mut Vec<String>,
) -> Result<(), FieldError> {
    match key {
        "apiVersion" | "kind" if map.get(key).is_some_and(|v| !v.is_string()) => {
            if !options.drop_invalid_fields {
                return Err(FieldError::invalid(
                    &path.child(key),
                    map[key].clone(),
                    "must be a string",
                ));
            }
            map.retain(|k, _| k != key);
        }
        "metadata" => {
            let read = get_object_meta(
                map,
                &ObjectMetaOptions {
                    drop_malformed_fields: options.drop_invalid_fields,
                    return_unknown_field_paths: options.return_unknown_field_paths,
                    parent_path: path.clone(),
                },
            );
            match read {
                Err(error) if !options.drop_invalid_fields => {
                    return Err(FieldError::invalid(
                        &path.child("metadata"),
                        map["metadata"].clone(),
                        error,
                    ));
                }
                Err(_) | Ok(None) => {}
                Ok(Some(meta)) => {
                    unknown.extend(meta.unknown_fields);
                    map.insert("metadata".into(), meta.metadata);
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// The checks of the embedded resources of a whole object (`Validate`
/// with no path, not the resource root), as the custom resource strategy
/// runs them on create and update.
pub fn validate_embedded(value: &Value, schema: &Schema) -> ErrorList {
    validate(&Path::none(), value, schema, false)
}

/// The checks of the embedded resources in `value` (`Validate`); with
/// `is_resource_root`, `value` is one itself.
pub fn validate(path: &Path, value: &Value, schema: &Schema, is_resource_root: bool) -> ErrorList {
    let mut errors = ErrorList::new();
    let embedded = is_resource_root || schema.embedded_resource;
    validate_node(path, value, Some(schema), embedded, &mut errors);
    errors
}

fn validate_node(
    path: &Path,
    value: &Value,
    schema: Option<&Schema>,
    embedded: bool,
    errors: &mut ErrorList,
) {
    let Some(schema) = schema else {
        return;
    };
    match value {
        Value::Object(map) => {
            if embedded {
                validate_embedded_resource(path, map, errors);
            }
            for (key, child) in map {
                if let Some(property) = schema.properties.get(key) {
                    validate_node(
                        &path.child(key),
                        child,
                        Some(property),
                        property.embedded_resource,
                        errors,
                    );
                } else if let Some(additional) = &schema.additional_properties {
                    let values = additional.schema();
                    let child_embedded = values.is_some_and(|s| s.embedded_resource);
                    validate_node(&path.key(key), child, values, child_embedded, errors);
                }
            }
        }
        Value::Array(items) => {
            let item_schema = schema.items.as_deref();
            let item_embedded = item_schema.is_some_and(|s| s.embedded_resource);
            for (index, item) in items.iter().enumerate() {
                validate_node(&path.index(index), item, item_schema, item_embedded, errors);
            }
        }
        _ => {}
    }
}

/// `ParseGroupVersion`'s error, if any.
fn parse_group_version(api_version: &str) -> Option<String> {
    if api_version.is_empty() || api_version == "/" || api_version.matches('/').count() <= 1 {
        return None;
    }
    Some(format!("unexpected GroupVersion string: {api_version}"))
}

/// `validatePathSegment`: the names of embedded resources.
fn path_segment(name: &str, prefix: bool) -> Vec<String> {
    if prefix {
        is_path_segment_prefix(name)
    } else {
        is_path_segment_name(name)
    }
}

/// `validateEmbeddedResource`.
fn validate_embedded_resource(path: &Path, map: &Map<String, Value>, errors: &mut ErrorList) {
    if !map.contains_key("apiVersion") {
        errors.push(FieldError::required(&path.child("apiVersion"), ""));
    }
    if !map.contains_key("kind") {
        errors.push(FieldError::required(&path.child("kind"), ""));
    }
    for (key, value) in map {
        match key.as_str() {
            "apiVersion" => {
                let field = path.child("apiVersion");
                match value.as_str() {
                    None => errors.push(FieldError::invalid(
                        &field,
                        value.clone(),
                        "must be a string",
                    )),
                    Some("") => errors.push(FieldError::invalid(&field, "", "must not be empty")),
                    Some(api_version) => {
                        if let Some(error) = parse_group_version(api_version) {
                            errors.push(FieldError::invalid(&field, api_version, error));
                        }
                    }
                }
            }
            "kind" => {
                let field = path.child("kind");
                match value.as_str() {
                    None => errors.push(FieldError::invalid(
                        &field,
                        value.clone(),
                        "must be a string",
                    )),
                    Some("") => errors.push(FieldError::invalid(&field, "", "must not be empty")),
                    Some(kind) => {
                        let problems = is_dns1035_label(&kind.to_lowercase());
                        if !problems.is_empty() {
                            errors.push(FieldError::invalid(
                                &field,
                                kind,
                                format!(
                                    "may have mixed case, but should otherwise match: {}",
                                    problems.join(",")
                                ),
                            ));
                        }
                    }
                }
            }
            "metadata" => {
                let field = path.child("metadata");
                match get_object_meta(map, &ObjectMetaOptions::default()) {
                    Err(error) => errors.push(FieldError::invalid(&field, value.clone(), error)),
                    Ok(meta) => {
                        let mut meta = meta.map_or(Value::Object(Map::new()), |m| m.metadata);
                        let name = meta.get("name").and_then(Value::as_str).unwrap_or_default();
                        if name.is_empty() {
                            // "we have to set something to avoid an error"
                            meta["name"] = Value::String("fakename".into());
                        }
                        let namespaced = meta
                            .get("namespace")
                            .and_then(Value::as_str)
                            .is_some_and(|ns| !ns.is_empty());
                        errors.extend(validate_object_meta_with(
                            &meta,
                            namespaced,
                            path_segment,
                            &field,
                        ));
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests;
