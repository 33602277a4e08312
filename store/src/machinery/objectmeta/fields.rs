//! The checks of the parts of `metadata` that create and update share
//! (`ValidateLabels`, `ValidateAnnotations`, `ValidateOwnerReferences`,
//! `ValidateFinalizers`, `ValidateManagedFields`).

use serde_json::{Map, Value, json};

use crate::go::json::encode::go_json;
use crate::go::strconv::is_print;
use crate::machinery::field::{ErrorList, ErrorType, FieldError, Path, error_with_written_value};
use crate::machinery::names::{is_qualified_name, is_valid_label_value};
use crate::machinery::object::{string_list, string_map, text};

/// `FieldManagerMaxLength`.
const FIELD_MANAGER_MAX_LENGTH: i64 = 128;

/// `MaxSubresourceNameLength`.
const MAX_SUBRESOURCE_NAME_LENGTH: i64 = 256;

/// An owner reference as `GetOwnerReferences` reads it, as Go's JSON of
/// the struct: `apiVersion`, `kind`, `name`, `uid`, then the flags set.
fn owner_references(meta: &Value) -> Vec<Value> {
    let Some(items) = meta.get("ownerReferences").and_then(Value::as_array) else {
        return Vec::new();
    };
    let mut references = Vec::new();
    for item in items {
        let Some(item) = item.as_object() else {
            return Vec::new();
        };
        let string = |key: &str| item.get(key).and_then(Value::as_str).unwrap_or_default();
        let mut reference = Map::new();
        for key in ["apiVersion", "kind", "name", "uid"] {
            reference.insert(key.into(), json!(string(key)));
        }
        for key in ["controller", "blockOwnerDeletion"] {
            if let Some(flag) = item.get(key).and_then(Value::as_bool) {
                reference.insert(key.into(), json!(flag));
            }
        }
        references.push(Value::Object(reference));
    }
    references
}

/// `ValidateLabels`: keys are qualified names, values label values; both
/// errors point at `labels` itself.
pub fn validate_labels(meta: &Value, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    for (key, value) in string_map(meta, "labels") {
        for message in is_qualified_name(key) {
            errors.push(FieldError::invalid(path, key, message));
        }
        for message in is_valid_label_value(value) {
            errors.push(FieldError::invalid(path, value, message));
        }
    }
    errors
}

/// `ValidateAnnotations`: keys are qualified names of any case, and all
/// keys and values together at most 256 kB.
pub fn validate_annotations(meta: &Value, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let annotations = string_map(meta, "annotations");
    let mut size = 0;
    for (key, value) in &annotations {
        for message in is_qualified_name(&key.to_lowercase()) {
            errors.push(FieldError::invalid(path, *key, message));
        }
        size += (key.len() + value.len()) as i64;
    }
    if size > TOTAL_ANNOTATION_SIZE_LIMIT {
        errors.push(FieldError::too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT));
    }
    errors
}

/// An owner reference as Go's JSON writes a `metav1.OwnerReference`: the
/// fields in the struct's order (`apiVersion`, `kind`, `name`, `uid`,
/// then `controller` and `blockOwnerDeletion` when set).
fn go_owner_reference(reference: &Value) -> String {
    let mut fields: Vec<String> = ["apiVersion", "kind", "name", "uid"]
        .iter()
        .map(|key| {
            let text = reference[*key].as_str().unwrap_or_default();
            format!("\"{key}\":{}", go_json(&Value::String(text.to_string())))
        })
        .collect();
    for key in ["controller", "blockOwnerDeletion"] {
        if let Some(flag) = reference.get(key).and_then(Value::as_bool) {
            fields.push(format!("\"{key}\":{flag}"));
        }
    }
    format!("{{{}}}", fields.join(","))
}

/// `ValidateOwnerReferences`: each reference complete, not to an Event,
/// and at most one controller. The errors point at `ownerReferences`
/// itself, not at an item.
pub fn validate_owner_references(meta: &Value, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let references = owner_references(meta);
    let mut first_controller: Option<String> = None;
    for reference in &references {
        let field = |key: &str| reference[key].as_str().unwrap_or_default().to_string();
        let (api_version, kind) = (field("apiVersion"), field("kind"));
        // schema.FromAPIVersionAndKind: an apiVersion with two slashes
        // has no group and no version.
        let (group, version) = match api_version.matches('/').count() {
            0 => ("", api_version.as_str()),
            1 => api_version.split_once('/').unwrap_or_default(),
            _ => ("", ""),
        };
        if version.is_empty() {
            errors.push(FieldError::invalid(
                &path.child("apiVersion"),
                api_version.as_str(),
                "version must not be empty",
            ));
        }
        for (key, detail) in [
            ("kind", "must not be empty"),
            ("name", "must not be empty"),
            ("uid", "must not be empty"),
        ] {
            if field(key).is_empty() {
                errors.push(FieldError::invalid(&path.child(key), "", detail));
            }
        }
        if group.is_empty() && version == "v1" && kind == "Event" {
            errors.push(error_with_written_value(
                ErrorType::Invalid,
                path,
                &go_owner_reference(reference),
                &format!("{group}/{version}, Kind={kind} is disallowed from being an owner"),
            ));
        }
        if reference.get("controller") == Some(&Value::Bool(true)) {
            let name = format!("{kind}/{}", field("name"));
            match &first_controller {
                Some(first) => {
                    let all: Vec<String> = references.iter().map(go_owner_reference).collect();
                    errors.push(error_with_written_value(
                        ErrorType::Invalid,
                        path,
                        &format!("[{}]", all.join(",")),
                        &format!(
                            "Only one reference can have Controller set to true. Found \"true\" in references for {first} and {name}"
                        ),
                    ));
                }
                None => first_controller = Some(name),
            }
        }
    }
    errors
}

/// `ValidateFinalizers`: each a qualified name, and not both `orphan` and
/// `foregroundDeletion`.
pub fn validate_finalizers(meta: &Value, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let finalizers = string_list(meta, "finalizers");
    for finalizer in &finalizers {
        for message in is_qualified_name(finalizer) {
            errors.push(FieldError::invalid(path, *finalizer, message));
        }
    }
    if finalizers.contains(&"orphan") && finalizers.contains(&"foregroundDeletion") {
        errors.push(FieldError::invalid(
            path,
            json!(finalizers),
            "finalizer orphan and foregroundDeletion cannot be both set",
        ));
    }
    errors
}

/// `ValidateFieldManager`: at most 128 bytes, all printable.
pub fn validate_field_manager(manager: &str, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    if manager.len() as i64 > FIELD_MANAGER_MAX_LENGTH {
        errors.push(FieldError::too_long(path, FIELD_MANAGER_MAX_LENGTH));
    }
    for (position, c) in manager.char_indices() {
        if !is_print(c) {
            errors.push(FieldError::invalid(
                path,
                manager,
                format!(
                    "invalid character U+{:04X} (at position {position})",
                    c as u32
                ),
            ));
        }
    }
    errors
}

/// `ValidateManagedFields`: `Apply` or `Update`, `FieldsV1`, the manager,
/// and a subresource of at most 256 bytes.
pub fn validate_managed_fields(meta: &Value, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let Some(entries) = meta.get("managedFields").and_then(Value::as_array) else {
        return errors;
    };
    for (index, entry) in entries.iter().enumerate() {
        let path = path.index(index);
        let operation = text(entry, "operation");
        if operation != "Apply" && operation != "Update" {
            errors.push(FieldError::invalid(
                &path.child("operation"),
                operation,
                "must be `Apply` or `Update`",
            ));
        }
        let fields_type = text(entry, "fieldsType");
        if !fields_type.is_empty() && fields_type != "FieldsV1" {
            errors.push(FieldError::invalid(
                &path.child("fieldsType"),
                fields_type,
                "must be `FieldsV1`",
            ));
        }
        errors.extend(validate_field_manager(
            text(entry, "manager"),
            &path.child("manager"),
        ));
        if text(entry, "subresource").len() as i64 > MAX_SUBRESOURCE_NAME_LENGTH {
            errors.push(FieldError::too_long(
                &path.child("subresource"),
                MAX_SUBRESOURCE_NAME_LENGTH,
            ));
        }
    }
    errors
}

/// `TotalAnnotationSizeLimitB`: 256 kB of keys and values.
pub const TOTAL_ANNOTATION_SIZE_LIMIT: i64 = 256 * 1024;
