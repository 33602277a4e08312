//! The generic checks of an object's `metadata`, shared by custom
//! resources and built-in kinds, as apimachinery makes them
//! (`pkg/api/validation/objectmeta.go`: `ValidateObjectMetaAccessor`,
//! `ValidateObjectMetaAccessorUpdate`), with the real server's words, and
//! the finalizer warnings custom resources give
//! (`apiextensions-apiserver/pkg/registry/customresource`:
//! `generateWarningsFromObj`).
//!
//! Every function takes an object's `metadata` (not the object), read as
//! the unstructured accessors read it: a field of the wrong type counts as
//! absent. The name formats they use are `machinery::names`.
//!
//! A Go struct as a bad value (an owner reference, `Only one reference can
//! have Controller set to true`) prints its fields in the struct's order,
//! as the real server's messages show them.

pub(crate) mod fields;
#[cfg(test)]
mod tests;

use std::collections::BTreeSet;

use serde_json::Value;

use crate::machinery::field::{ErrorList, FieldError, Path};

use crate::go::strconv::go_quote;

use crate::machinery::names::NameFn;
use crate::machinery::names::is_qualified_name;
use crate::machinery::names::name_is_dns_label;
use crate::machinery::names::name_is_dns_subdomain;
use crate::machinery::object::{string_list, text};
pub use fields::{
    TOTAL_ANNOTATION_SIZE_LIMIT, validate_annotations, validate_field_manager, validate_finalizers,
    validate_labels, validate_managed_fields, validate_owner_references,
};

/// The finalizers Kubernetes itself uses (`standardFinalizers`).
const STANDARD_FINALIZERS: [&str; 3] = ["orphan", "foregroundDeletion", "kubernetes"];

/// Checks the metadata of a new object (`ValidateObjectMetaAccessor`) whose
/// name is a DNS subdomain, as custom resources' are.
pub fn validate_object_meta(meta: &Value, namespaced: bool, path: &Path) -> ErrorList {
    validate_object_meta_with(meta, namespaced, name_is_dns_subdomain, path)
}

/// Checks the metadata of a new object (`ValidateObjectMetaAccessor`), its
/// name (and `generateName`, as a prefix) by `name_fn`. The name must
/// already have been generated.
pub fn validate_object_meta_with(
    meta: &Value,
    namespaced: bool,
    name_fn: NameFn,
    path: &Path,
) -> ErrorList {
    let mut errors = ErrorList::new();
    let generate_name = text(meta, "generateName");
    if !generate_name.is_empty() {
        for message in name_fn(generate_name, true) {
            errors.push(FieldError::invalid(
                &path.child("generateName"),
                generate_name,
                message,
            ));
        }
    }
    let name = text(meta, "name");
    if name.is_empty() {
        errors.push(FieldError::required(
            &path.child("name"),
            "name or generateName is required",
        ));
    } else {
        for message in name_fn(name, false) {
            errors.push(FieldError::invalid(&path.child("name"), name, message));
        }
    }
    let namespace = text(meta, "namespace");
    if namespaced {
        if namespace.is_empty() {
            errors.push(FieldError::required(&path.child("namespace"), ""));
        } else {
            for message in name_is_dns_label(namespace, false) {
                errors.push(FieldError::invalid(
                    &path.child("namespace"),
                    namespace,
                    message,
                ));
            }
        }
    } else if !namespace.is_empty() {
        errors.push(FieldError::forbidden(
            &path.child("namespace"),
            "not allowed on this type",
        ));
    }
    let generation = meta.get("generation").and_then(Value::as_i64).unwrap_or(0);
    if generation < 0 {
        errors.push(FieldError::invalid(
            &path.child("generation"),
            generation,
            "must be greater than or equal to 0",
        ));
    }
    errors.extend(validate_labels(meta, &path.child("labels")));
    errors.extend(validate_annotations(meta, &path.child("annotations")));
    errors.extend(validate_owner_references(
        meta,
        &path.child("ownerReferences"),
    ));
    errors.extend(validate_finalizers(meta, &path.child("finalizers")));
    errors.extend(validate_managed_fields(meta, &path.child("managedFields")));
    errors
}

/// Checks the metadata of an object replacing `old`
/// (`ValidateObjectMetaAccessorUpdate`): no new finalizers while it is
/// being deleted, a resourceVersion, no smaller generation, the same name,
/// namespace, uid, creationTimestamp, deletionTimestamp and
/// deletionGracePeriodSeconds, then labels, annotations, owner references
/// and managedFields as on create. Names and finalizers are not checked.
pub fn validate_object_meta_update(new: &Value, old: &Value, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let deleting = old
        .get("deletionTimestamp")
        .is_some_and(|t| t.as_str().is_some_and(|t| !t.is_empty()));
    if deleting {
        let old_finalizers: BTreeSet<&str> = string_list(old, "finalizers").into_iter().collect();
        let extra: BTreeSet<&str> = string_list(new, "finalizers")
            .into_iter()
            .filter(|f| !old_finalizers.contains(f))
            .collect();
        if !extra.is_empty() {
            let quoted: Vec<String> = extra.iter().map(|f| go_quote(f)).collect();
            errors.push(FieldError::forbidden(
                &path.child("finalizers"),
                format!(
                    "no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
                    quoted.join(", ")
                ),
            ));
        }
    }
    let resource_version = text(new, "resourceVersion");
    if resource_version.is_empty() {
        errors.push(FieldError::invalid(
            &path.child("resourceVersion"),
            resource_version,
            "must be specified for an update",
        ));
    }
    let generation = |meta: &Value| meta.get("generation").and_then(Value::as_i64).unwrap_or(0);
    if generation(new) < generation(old) {
        errors.push(FieldError::invalid(
            &path.child("generation"),
            generation(new),
            "must not be decremented",
        ));
    }
    for key in ["name", "namespace", "uid"] {
        if text(new, key) != text(old, key) {
            errors.push(FieldError::invalid(
                &path.child(key),
                text(new, key),
                "field is immutable",
            ));
        }
    }
    for key in [
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
    ] {
        let value = |meta: &Value| meta.get(key).cloned().unwrap_or(Value::Null);
        if value(new) != value(old) {
            errors.push(FieldError::invalid(
                &path.child(key),
                value(new),
                "field is immutable",
            ));
        }
    }
    errors.extend(validate_labels(new, &path.child("labels")));
    errors.extend(validate_annotations(new, &path.child("annotations")));
    errors.extend(validate_owner_references(
        new,
        &path.child("ownerReferences"),
    ));
    errors.extend(validate_managed_fields(new, &path.child("managedFields")));
    errors
}

/// `validateKubeFinalizerName`: the warnings about one finalizer.
fn finalizer_name_warnings(finalizer: &str) -> Vec<String> {
    let path = "metadata.finalizers";
    let quoted = go_quote(finalizer);
    let mut warnings: Vec<String> = is_qualified_name(finalizer)
        .into_iter()
        .map(|message| format!("{path}: {quoted}: {message}"))
        .collect();
    if !finalizer.contains('/') && !STANDARD_FINALIZERS.contains(&finalizer) {
        if finalizer.contains('.') {
            warnings.push(format!(
                "{path}: {quoted}: prefer a domain-qualified finalizer name including a path (/) to avoid accidental conflicts with other finalizer writers"
            ));
        } else {
            warnings.push(format!(
                "{path}: {quoted}: prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers"
            ));
        }
    }
    warnings
}

/// The warnings a custom resource's finalizers give on create (`old`:
/// none) or update (`generateWarningsFromObj`): for each finalizer `new`
/// adds, in sorted order, what is wrong with its name, and a nudge
/// towards a domain-qualified name with a path (`metadata.finalizers:
/// "cleanup": prefer a domain-qualified finalizer name to avoid accidental
/// conflicts with other finalizer writers`).
pub fn finalizer_warnings(new: &Value, old: Option<&Value>) -> Vec<String> {
    let old: BTreeSet<&str> = old
        .map(|old| string_list(old, "finalizers").into_iter().collect())
        .unwrap_or_default();
    let added: BTreeSet<&str> = string_list(new, "finalizers")
        .into_iter()
        .filter(|f| !old.contains(f))
        .collect();
    added
        .into_iter()
        .flat_map(finalizer_name_warnings)
        .collect()
}
