//! Custom resources' strategy (apiextensions-apiserver's
//! `pkg/registry/customresource`): what their CRD's schemas say of each
//! write and read, in the order apiextensions-apiserver applies it.
//!
//! - Decoding a body in the version written (`decode`): fields the schema
//!   does not know are pruned, and reported as `fieldValidation` says
//!   (with the fields the body gave twice); nulls the schema does not
//!   allow go; the embedded resources' metadata is coerced; `default:`
//!   values fill what is absent.
//! - Validating (`validate`): apiVersion and kind, the metadata, the
//!   OpenAPI schema (with ratcheting on update: what did not change is not
//!   refused again), the embedded resources, list types, then the CEL
//!   rules unless a blocking error came first; on the status subresource,
//!   `status` alone. A version with a scale subresource has its replicas
//!   checked on every write. On update the metadata errors are listed as
//!   often as the real server checks them (three times).
//! - Storing: objects are kept in the storage version, pruned and
//!   defaulted by its schema (what a real server's storage reads back);
//!   they read back in any served version, pruned by its schema
//!   (`to_version`). A CRD whose schemas change re-reads the stored
//!   objects, pruned and defaulted by the new storage schema, as a real
//!   server decodes them anew.
//! - Selecting by fields: a version's `selectableFields` (`field_labels`,
//!   `field_set`).
//! - Every request to a deprecated version is warned about
//!   ([`CustomSchemas::deprecation_warning`]).

use serde_json::Value;

use crate::go::fmt::{go_print, go_type};
use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::names::name_is_path_segment;
use crate::machinery::object::meta;
use crate::machinery::objectmeta::{
    finalizer_warnings, validate_object_meta, validate_object_meta_update,
    validate_object_meta_with,
};
use crate::meta::selector::{FieldLabels, FieldSet, object_meta_fields};
use crate::meta::status::Status;
use crate::meta::types::{FieldValidation, WriteOptions};
use crate::resource::custom::{CustomSchemas, Scale};
use crate::resource::info::ResourceInfo;
use crate::schema::Schema;
use crate::schema::coerce::{DecodeOptions, coerce_decoded_over};
use crate::schema::defaulting::default;
use crate::schema::listtype::validate_lists;
use crate::schema::objectmeta::validate_embedded;

/// Errors that stop the CEL rules from running (apiextensions'
/// `hasBlockingErr`).
fn blocking(errors: &ErrorList) -> bool {
    use crate::machinery::field::ErrorType;
    errors.iter().any(|e| {
        matches!(
            e.kind,
            ErrorType::NotSupported
                | ErrorType::Required
                | ErrorType::TooLong
                | ErrorType::TooMany
                | ErrorType::TypeInvalid
        )
    })
}

/// What a write is.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Write {
    Create,
    Update,
    Status,
}

/// Decodes a body written in `res`'s version, as the real server's
/// decoder does: prunes what the schema does not know and reports it (and
/// the duplicate fields) as `fieldValidation` says, drops nulls the schema
/// does not allow, coerces embedded metadata, fills defaults. `stored` is
/// the object it replaces, when there is one (its metadata needs no second
/// read).
pub(crate) fn decode(
    res: &ResourceInfo,
    custom: &CustomSchemas,
    object: &mut Value,
    stored: Option<&Value>,
    opts: &WriteOptions,
) -> Result<(), Status> {
    let stored_metadata = stored.and_then(|s| s.get("metadata"));
    let Some(schema) = custom.version(&res.version).and_then(|v| v.schema.as_ref()) else {
        return Ok(());
    };
    // An object of another group or kind is neither pruned nor
    // defaulted (validation then refuses it).
    let group_of = |api_version: &str| {
        api_version
            .rsplit_once('/')
            .map_or("", |(g, _)| g)
            .to_string()
    };
    let kind = object
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or(&res.kind);
    let group = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .map_or_else(|| res.group.clone(), group_of);
    if kind != res.kind || group != res.group {
        return Ok(());
    }
    let options = DecodeOptions {
        return_unknown_field_paths: opts.field_validation != FieldValidation::Ignore,
        ..Default::default()
    };
    let unknown = coerce_decoded_over(object, schema, options, stored_metadata)
        .map_err(|why| Status::cannot_handle(&res.kind, &res.version, &why))?;
    opts.report_dropped(&res.kind, &res.version, &unknown)?;
    default(object, schema);
    Ok(())
}

/// Validates a custom resource about to be stored in `res`'s version;
/// `old` is the object it replaces (update, status).
pub(crate) fn validate(
    res: &ResourceInfo,
    custom: &CustomSchemas,
    new: &Value,
    old: Option<&Value>,
    write: Write,
    opts: &WriteOptions,
) -> Result<(), Status> {
    let name = meta(new, "name").unwrap_or_default();
    let version = custom.version(&res.version);
    let schema = version.and_then(|v| v.schema.as_ref());
    let mut errors = type_meta(res, new);
    if errors.is_empty() {
        let metadata = Path::new(["metadata"]);
        errors.extend(match (write, old) {
            (Write::Create, _) | (_, None) => {
                validate_object_meta(metadata_of(new), res.namespaced, &metadata)
            }
            (_, Some(old)) => {
                // `rest.BeforeUpdate` checks the common fields (the
                // metadata as on create, its name a path segment, then
                // as an update), and the strategy the update again: an
                // error of the labels is listed three times.
                let (new_meta, old_meta) = (metadata_of(new), metadata_of(old));
                let update = validate_object_meta_update(new_meta, old_meta, &metadata);
                let mut errors = validate_object_meta_with(
                    new_meta,
                    res.namespaced,
                    name_is_path_segment,
                    &metadata,
                );
                errors.extend(update.iter().cloned());
                errors.extend(update);
                errors
            }
        });
        if let Some(schema) = schema {
            errors.extend(schema_errors(schema, new, old, write));
        }
        if let Some(scale) = custom.scale(&res.version) {
            errors.extend(scale_errors(scale, new, write));
        }
    }
    if let Some(schema) = schema {
        if write != Write::Status {
            errors.extend(validate_embedded(new, schema));
        }
        // Duplicates are refused unless the old object had some
        // already (checked only then).
        let lists = validate_lists(new, schema);
        if !lists.is_empty() && old.is_none_or(|o| validate_lists(o, schema).is_empty()) {
            errors.extend(lists);
        }
    }
    if let Some(rules) = version.and_then(|v| v.rules.as_ref())
        && !rules.is_empty()
    {
        if blocking(&errors) {
            errors.push(FieldError::invalid(
                &Path::none(),
                Value::Null,
                "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
            ));
        } else {
            errors.extend(rules.validate(new, old));
        }
    }
    if !errors.is_empty() {
        // The error names the kind the body gave.
        let kind = new
            .get("kind")
            .and_then(Value::as_str)
            .filter(|k| !k.is_empty())
            .unwrap_or(&res.kind);
        return Err(Status::from_field_errors(&res.group, kind, &name, &errors));
    }
    if write != Write::Status {
        for warning in finalizer_warnings(metadata_of(new), old.map(metadata_of)) {
            opts.warnings.add(warning);
        }
    }
    Ok(())
}

/// `unstructured.NestedFieldNoCopy` at a scale path: the value (none when
/// absent or null on the way), or the accessor error.
fn nested<'a>(object: &'a Value, path: &str) -> Result<Option<&'a Value>, String> {
    let fields = Scale::fields(path);
    let mut current = object;
    for (i, field) in fields.iter().enumerate() {
        match current {
            Value::Null => return Ok(None),
            Value::Object(map) => match map.get(*field) {
                Some(value) => current = value,
                None => return Ok(None),
            },
            other => {
                return Err(format!(
                    ".{} accessor error: {} is of the type {}, expected map[string]interface{{}}",
                    fields[..=i].join("."),
                    go_print(other),
                    go_type(other)
                ));
            }
        }
    }
    Ok(Some(current))
}

/// `unstructured.NestedInt64`: the integer (0 when absent), or the
/// accessor error.
fn nested_int(object: &Value, path: &str) -> Result<i64, String> {
    match nested(object, path)? {
        None => Ok(0),
        Some(Value::Number(n)) if n.is_i64() => Ok(n.as_i64().unwrap_or_default()),
        Some(other) => Err(format!(
            ".{} accessor error: {} is of the type {}, expected int64",
            Scale::fields(path).join("."),
            go_print(other),
            go_type(other)
        )),
    }
}

/// The replicas at a scale path (`ValidateScaleSpec`, `ValidateScaleStatus`):
/// an integer from 0 to the largest int32.
fn replicas_errors(object: &Value, path: &str) -> ErrorList {
    let at = Path::new([path]);
    match nested_int(object, path) {
        Err(why) => vec![FieldError::invalid(&at, 0i64, why)],
        Ok(n) if n < 0 => vec![FieldError::invalid(
            &at,
            n,
            "should be a non-negative integer",
        )],
        Ok(n) if n > i64::from(i32::MAX) => vec![FieldError::invalid(
            &at,
            n,
            format!("should be less than or equal to {}", i32::MAX),
        )],
        Ok(_) => Vec::new(),
    }
}

/// The checks of the scale subresource's fields on every write: spec
/// replicas (not on the status subresource), status replicas, and the
/// label selector a string.
fn scale_errors(scale: &Scale, object: &Value, write: Write) -> ErrorList {
    let mut errors = ErrorList::new();
    if write != Write::Status {
        errors.extend(replicas_errors(object, &scale.spec_replicas_path));
    }
    errors.extend(replicas_errors(object, &scale.status_replicas_path));
    if let Some(path) = &scale.label_selector_path {
        let found = nested(object, path).and_then(|value| match value {
            None | Some(Value::String(_)) => Ok(()),
            Some(other) => Err(format!(
                ".{} accessor error: {} is of the type {}, expected string",
                Scale::fields(path).join("."),
                go_print(other),
                go_type(other)
            )),
        });
        if let Err(why) = found {
            errors.push(FieldError::invalid(&Path::new([path.as_str()]), "", why));
        }
    }
    errors
}

/// An object's metadata (`null` when it has none).
fn metadata_of(object: &Value) -> &Value {
    object.get("metadata").unwrap_or(&Value::Null)
}

/// apiVersion and kind, as the version's storage expects them.
fn type_meta(res: &ResourceInfo, object: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let kind = object
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    // A write without them (server-side apply builds its object) gets
    // the resource's.
    if !kind.is_empty() && kind != res.kind {
        errors.push(FieldError::invalid(
            &Path::new(["kind"]),
            kind,
            format!("must be {}", res.kind),
        ));
    }
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if !api_version.is_empty() && api_version != res.api_version() {
        errors.push(FieldError::invalid(
            &Path::new(["apiVersion"]),
            api_version,
            format!("must be {}", res.api_version()),
        ));
    }
    errors
}

/// The OpenAPI schema's errors: the whole object (create, update with
/// ratcheting), or `status` alone against its own schema.
fn schema_errors(schema: &Schema, new: &Value, old: Option<&Value>, write: Write) -> ErrorList {
    use crate::schema::validate::{validate, validate_update};
    match (write, old) {
        (Write::Status, old) => {
            let Some(status) = new.get("status") else {
                return ErrorList::new();
            };
            let Some(status_schema) = schema.properties.get("status") else {
                return ErrorList::new();
            };
            let errors = match old.and_then(|o| o.get("status")) {
                Some(old_status) => validate_update(status_schema, status, old_status),
                None => validate(status_schema, status),
            };
            errors
                .into_iter()
                .map(|mut e| {
                    e.field = Path::new(["status"]).join(&e.field);
                    e
                })
                .collect()
        }
        (Write::Create, _) | (_, None) => validate(schema, new),
        (Write::Update, Some(old)) => validate_update(schema, new, old),
    }
}

/// The labels a custom resource's `version` takes (the CRD handler's
/// `ConvertFieldLabel`): its name, its namespace when it is namespaced, and
/// the version's `selectableFields`; any other is `field label not
/// supported`.
pub(crate) fn field_labels(res: &ResourceInfo, custom: &CustomSchemas) -> FieldLabels {
    let mut labels = vec!["metadata.name".to_string()];
    if res.namespaced {
        labels.push("metadata.namespace".into());
    }
    labels.extend(custom.selectable_fields(&res.version).iter().cloned());
    FieldLabels::new(labels, false)
}

/// A custom resource's field set, read from the object in the version
/// listed (`selectableFields` of the strategy's `GetAttrs`): its name and
/// namespace, and each selectable field as Go's `fmt.Sprint` prints it
/// (`3`, `true`), `""` when absent or null.
pub(crate) fn field_set(res: &ResourceInfo, custom: &CustomSchemas, object: &Value) -> FieldSet {
    let mut set = object_meta_fields(object);
    for field in custom.selectable_fields(&res.version) {
        let value = match object.pointer(&format!("/{}", field.replace('.', "/"))) {
            None | Some(Value::Null) => String::new(),
            Some(value) => go_print(value),
        };
        set.insert(field.clone(), value);
    }
    set
}
