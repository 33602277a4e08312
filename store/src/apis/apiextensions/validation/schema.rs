//! A version's `openAPIV3Schema` (`ValidateCustomResourceDefinitionOpenAPISchema`):
//! what a CRD's schema may say, node by node, then its structural form
//! ([`crate::schema::structural`]), its `default:` values
//! ([`crate::schema::defaulting`]) and its CEL rules, compiled.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::machinery::field::{BadValue, ErrorList, ErrorType, FieldError, Path};
use crate::schema::cel::compile_beside;
use crate::schema::defaulting::validation::validate_defaults;
use crate::schema::props::{Additional, Schema};
use crate::schema::structural::{structural_init_error, type_error, validate_structural};

/// The types a schema may name (`openapiV3Types`, sorted).
const TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];

/// Checks one `schema:` (`CustomResourceValidation`) at `at`
/// (`spec.validation` or `spec.versions[i]pub(crate) .schema`).
pub(crate) fn validate_schema(raw: &Value, at: &Path, status_enabled: bool) -> ErrorList {
    let mut errors = ErrorList::new();
    let root = at.child("openAPIV3Schema");
    if status_enabled && let Some(map) = raw.as_object() {
        if let Some(kind) = map.get("type").and_then(Value::as_str)
            && kind != "object"
        {
            errors.push(FieldError::invalid(
                &at.child("openAPIV3Schema.type"),
                kind,
                "only \"object\" is allowed as the type at the root of the schema if the status subresource is enabled",
            ));
        } else if map.keys().any(|k| !ROOT_WITH_STATUS.contains(&k.as_str())) {
            errors.push(FieldError {
                kind: ErrorType::Invalid,
                field: root.clone(),
                value: BadValue::Omit,
                detail: "only [Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations] fields are allowed at the root of the schema if the status subresource is enabled".into(),
            });
        }
    }
    if raw["nullable"] == true {
        errors.push(FieldError::forbidden(
            &at.child("openAPIV3Schema.nullable"),
            "nullable cannot be true at the root",
        ));
    }
    let schema = Schema::from_json(raw);
    let mut structural_ok = false;
    let mut init_error = None;
    match structural_init_error(&schema) {
        Some(why) => init_error = Some(why),
        None => {
            let structural = validate_structural(&schema, &root);
            if !structural.is_empty() {
                errors.extend(structural);
            } else {
                let defaults = validate_defaults(&schema, &root, true, false);
                structural_ok = defaults.is_empty();
                errors.extend(defaults);
            }
        }
    }
    let keyword_errors = openapi_schema(&schema, &root, &Context::default(), true);
    // The rules' own fields are always checked; a node's rules are
    // compiled only when its schema is sound at and beneath it (the whole
    // schema: structural, with valid defaults).
    let mut blocking = keyword_errors.clone();
    if !structural_ok {
        blocking.push(FieldError::forbidden(&root, ""));
    }
    errors.extend(keyword_errors);
    if let Err(cel) = compile_beside(&schema, &root, &blocking) {
        errors.extend(cel);
    }
    if let Some(why) = init_error
        && errors.is_empty()
    {
        // Shown only when nothing else is wrong, as the real server does.
        errors.push(FieldError::invalid(&root, "", why));
    }
    errors
}

/// What the walk over a schema's keywords knows of where it is.
#[derive(Clone, Default)]
struct Context {
    /// `default:` is not allowed here, for this reason.
    no_defaults: Option<String>,
    /// Inside the metadata, kind or apiVersion of a resource.
    inside_meta: bool,
}

/// `ValidateCustomResourceDefinitionOpenAPISchema` without the CEL rules
/// (compiled by [`crate::schema::cel::compile`]).
fn openapi_schema(schema: &Schema, at: &Path, context: &Context, is_root: bool) -> ErrorList {
    let mut errors = ErrorList::new();
    // specStandardValidatorV3
    if let Some(kind) = schema.type_.as_deref()
        && !kind.is_empty()
        && !TYPES.contains(&kind)
    {
        let types: Vec<String> = TYPES.iter().map(|t| t.to_string()).collect();
        errors.push(FieldError::not_supported(&at.child("type"), kind, &types));
    }
    if schema.default.is_some()
        && let Some(reason) = &context.no_defaults
    {
        errors.push(FieldError::forbidden(
            &at.child("default"),
            format!("must not be set {reason}"),
        ));
    }
    for keyword in &schema.forbidden {
        let words = match keyword.as_str() {
            "id" => "id is not supported",
            "additionalItems" => "additionalItems is not supported",
            "patternProperties" => "patternProperties is not supported",
            "definitions" => "definitions is not supported",
            "dependencies" => "dependencies is not supported",
            "$ref" => "$ref is not supported",
            _ => continue,
        };
        errors.push(FieldError::forbidden(&at.child(keyword), words));
    }
    if schema.type_.as_deref() == Some("null") {
        errors.push(FieldError::forbidden(
            &at.child("type"),
            "type cannot be set to null, use nullable as an alternative",
        ));
    }
    if schema.items_list.as_ref().is_some_and(|l| !l.is_empty()) {
        errors.push(FieldError::forbidden(
            &at.child("items"),
            "items must be a schema object and not an array",
        ));
    }
    if context.inside_meta && schema.embedded_resource {
        errors.push(FieldError::forbidden(
            &at.child("x-kubernetes-embedded-resource"),
            "must not be used inside of resource meta",
        ));
    }

    if schema.unique_items {
        errors.push(FieldError::forbidden(
            &at.child("uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    if let Some(additional) = &schema.additional_properties {
        if !schema.properties.is_empty() && additional != &Additional::Allows(true) {
            errors.push(FieldError::forbidden(
                &at.child("additionalProperties"),
                "additionalProperties and properties are mutual exclusive",
            ));
        }
        if let Additional::Schema(sub) = additional {
            let mut sub_context = context.clone();
            if context.inside_meta {
                sub_context.no_defaults =
                    Some("inside additionalProperties applying to object metadata".into());
            }
            errors.extend(openapi_schema(
                sub,
                &at.child("additionalProperties"),
                &sub_context,
                false,
            ));
        }
    }
    for (name, property) in &schema.properties {
        let mut sub_context = context.clone();
        if (is_root || schema.embedded_resource)
            && ["metadata", "kind", "apiVersion"].contains(&name.as_str())
        {
            sub_context.inside_meta = true;
            if is_root {
                sub_context.no_defaults = Some(format!("in top-level {name}"));
            }
        }
        errors.extend(openapi_schema(
            property,
            &at.child("properties").key(name),
            &sub_context,
            false,
        ));
    }
    if let Some(not) = &schema.not {
        errors.extend(openapi_schema(not, &at.child("not"), context, false));
    }
    for (key, list) in [
        ("allOf", &schema.all_of),
        ("oneOf", &schema.one_of),
        ("anyOf", &schema.any_of),
    ] {
        for (i, sub) in list.iter().enumerate() {
            errors.extend(openapi_schema(sub, &at.child(key).index(i), context, false));
        }
    }
    if let Some(items) = &schema.items {
        errors.extend(openapi_schema(items, &at.child("items"), context, false));
    }
    if let Some(list) = &schema.items_list {
        for (i, items) in list.iter().enumerate() {
            errors.extend(openapi_schema(
                items,
                &at.child("items").index(i),
                context,
                false,
            ));
        }
    }

    if schema.preserve_unknown_fields == Some(false) {
        errors.push(FieldError::invalid(
            &at.child("x-kubernetes-preserve-unknown-fields"),
            json!(false),
            "must be true or undefined",
        ));
    }
    let kind = schema.type_.as_deref().unwrap_or_default();
    if let Some(map_type) = schema.map_type.as_deref() {
        if kind != "object" {
            errors.push(type_error(
                at,
                kind,
                "must be object if x-kubernetes-map-type is specified",
            ));
        }
        if map_type != "atomic" && map_type != "granular" {
            errors.push(FieldError::not_supported(
                &at.child("x-kubernetes-map-type"),
                map_type,
                &["atomic".into(), "granular".into()],
            ));
        }
    }
    let list_type = schema.list_type.as_deref();
    if list_type.is_some() && kind != "array" {
        errors.push(type_error(
            at,
            kind,
            "must be array if x-kubernetes-list-type is specified",
        ));
    } else if list_type == Some("set")
        && let Some(items) = &schema.items
    {
        let null_or = |v: Option<&str>| v.map_or(Value::Null, |s| json!(s));
        match items.type_.as_deref() {
            Some("array") if items.list_type.as_deref().is_some_and(|t| t != "atomic") => {
                errors.push(FieldError::invalid(
                    &at.child("items").child("x-kubernetes-list-type"),
                    null_or(items.list_type.as_deref()),
                    "must be atomic as item of a list with x-kubernetes-list-type=set",
                ));
            }
            Some("object") if items.map_type.as_deref() != Some("atomic") => {
                errors.push(FieldError::invalid(
                    &at.child("items").child("x-kubernetes-map-type"),
                    null_or(items.list_type.as_deref()),
                    "must be atomic as item of a list with x-kubernetes-list-type=set",
                ));
            }
            _ => {}
        }
    }
    if let Some(list_type) = list_type
        && !["atomic", "set", "map"].contains(&list_type)
    {
        errors.push(FieldError::not_supported(
            &at.child("x-kubernetes-list-type"),
            list_type,
            &["atomic".into(), "set".into(), "map".into()],
        ));
    }
    if !schema.list_map_keys.is_empty() {
        match list_type {
            None => errors.push(FieldError::required(
                &at.child("x-kubernetes-list-type"),
                "must be map if x-kubernetes-list-map-keys is non-empty",
            )),
            Some("map") => {}
            Some(other) => errors.push(FieldError::invalid(
                &at.child("x-kubernetes-list-type"),
                other,
                "must be map if x-kubernetes-list-map-keys is non-empty",
            )),
        }
    }
    if list_type == Some("map") {
        if schema.list_map_keys.is_empty() {
            errors.push(FieldError::required(
                &at.child("x-kubernetes-list-map-keys"),
                "must not be empty if x-kubernetes-list-type is map",
            ));
        }
        match (&schema.items, &schema.items_list) {
            (None, None) => errors.push(FieldError::required(
                &at.child("items"),
                "must have a schema if x-kubernetes-list-type is map",
            )),
            (None, Some(_)) => errors.push(FieldError::invalid(
                &at.child("items"),
                BadValue::Omit,
                "must only have a single schema if x-kubernetes-list-type is map",
            )),
            (Some(items), _) => {
                let item_type = items.type_.as_deref().unwrap_or_default();
                if item_type != "object" {
                    errors.push(FieldError::invalid(
                        &at.child("items").child("type"),
                        item_type,
                        "must be object if parent array's x-kubernetes-list-type is map",
                    ));
                } else {
                    let keys_value = json!(schema.list_map_keys);
                    let mut seen = BTreeSet::new();
                    for key in &schema.list_map_keys {
                        match items.properties.get(key) {
                            Some(property) => {
                                if matches!(property.type_.as_deref(), Some("array" | "object")) {
                                    errors.push(FieldError::invalid(
                                        &at.child("items").child("properties").key(key).child("type"),
                                        item_type,
                                        "must be a scalar type if parent array's x-kubernetes-list-type is map",
                                    ));
                                }
                            }
                            None => errors.push(FieldError::invalid(
                                &at.child("x-kubernetes-list-map-keys"),
                                keys_value.clone(),
                                "entries must all be names of item properties",
                            )),
                        }
                        if !seen.insert(key) {
                            errors.push(FieldError::invalid(
                                &at.child("x-kubernetes-list-map-keys"),
                                keys_value.clone(),
                                "must not contain duplicate entries",
                            ));
                        }
                    }
                }
            }
        }
    }
    // validateMapListKeysMapSet
    if let (Some(items), Some(list_type @ ("set" | "map"))) = (&schema.items, list_type) {
        if items.nullable {
            errors.push(FieldError::forbidden(
                &at.child("items").child("nullable"),
                format!("cannot be nullable when x-kubernetes-list-type is {list_type}"),
            ));
        }
        if list_type == "map" {
            for key in &schema.list_map_keys {
                let Some(property) = items.properties.get(key) else {
                    continue;
                };
                let kat = at.child("items").child("properties").key(key);
                if !items.required.contains(key) && property.default.is_none() {
                    errors.push(FieldError::required(
                        &kat.child("default"),
                        "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
                    ));
                }
                if property.nullable {
                    errors.push(FieldError::forbidden(
                        &kat.child("nullable"),
                        "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
                    ));
                }
            }
        }
    }
    errors
}

/// The keywords a root schema may have when the status subresource is on
/// (`allowedFieldsAtRootSchema`, as JSON names).
const ROOT_WITH_STATUS: [&str; 22] = [
    "description",
    "type",
    "format",
    "title",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
    "required",
    "items",
    "properties",
    "externalDocs",
    "example",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-validations",
];
