//! The checks of a CustomResourceDefinition itself, as kube-apiserver 1.36
//! makes them before it stores one (`apiextensions-apiserver/pkg/apis/
//! apiextensions/validation`), with the real server's field paths and
//! words: its spec and versions ([`spec`]), names ([`names`]), API approval
//! ([`approval`]), subresources, printer columns and selectable fields
//! ([`subresources`]), conversion webhook ([`conversion`]) and schemas
//! ([`schema`], which asks the structural schema's own checks,
//! [`crate::schema::structural`] and [`crate::schema::defaulting`]), and
//! the warnings a write gets ([`warnings`]).
//!
//! The real server validates its internal form of the CRD: when every
//! version has the same schema (or subresources, or printer columns), it
//! is moved to the top (`spec.validation`, `spec.subresources`,
//! `spec.additionalPrinterColumns`) and its errors are reported there.
//! [`validate_crd`] reports them at the same places.

mod approval;
mod conversion;
mod names;
mod schema;
mod spec;
mod subresources;
#[cfg(test)]
mod tests;
mod warnings;

use serde_json::{Value, json};

use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::object::strings;
use crate::machinery::object::text_at;
use crate::machinery::objectmeta::{validate_object_meta, validate_object_meta_update};

/// What a CRD's checks depend on besides the CRD.
#[derive(Clone, Copy)]
pub(super) struct Options {
    /// A schema is required in every version (relaxed on update when the
    /// old CRD had none somewhere).
    pub(super) require_schema: bool,
}

/// Checks a CustomResourceDefinition (`apiextensions.k8s.io/v1`, its
/// defaults filled in by [`default_crd`]) about to be created, or to
/// replace `old`: its name, group, scope, names, versions, schemas
/// (structural, the OpenAPI keywords Kubernetes allows, list and map
/// types, `default:` values, CEL rules), subresources, printer columns,
/// conversion, stored versions and API approval. Returns the errors of a
/// 422 answer, none when the CRD is fine.
pub fn validate_crd(crd: &Value, old: Option<&Value>) -> ErrorList {
    let mut errors = ErrorList::new();
    let meta = crd.get("metadata").cloned().unwrap_or_else(|| json!({}));
    let spec = crd.get("spec").cloned().unwrap_or_else(|| json!({}));
    let name = text_at(&meta, "/name");
    let metadata = Path::new(["metadata"]);
    match old {
        None => {
            errors.extend(validate_object_meta(&meta, false, &metadata));
            let expected = format!(
                "{}.{}",
                text_at(&spec, "/names/plural"),
                text_at(&spec, "/group")
            );
            if !name.is_empty() && name != expected {
                errors.push(FieldError::invalid(
                    &metadata.child("name"),
                    name,
                    "must be spec.names.plural+\".\"+spec.group",
                ));
            }
        }
        Some(old) => {
            let old_meta = old.get("metadata").cloned().unwrap_or_else(|| json!({}));
            errors.extend(validate_object_meta_update(&meta, &old_meta, &metadata));
        }
    }
    let options = Options {
        require_schema: old
            .is_none_or(|old| all_versions_have_schemas(old.get("spec").unwrap_or(&Value::Null))),
    };
    errors.extend(validate_spec(&spec, options));
    if let Some(old) = old {
        let old_spec = old.get("spec").cloned().unwrap_or_else(|| json!({}));
        errors.extend(validate_spec_update(&spec, &old_spec, established(old)));
    }
    let stored = strings(crd.pointer("/status/storedVersions"));
    errors.extend(validate_stored_versions(&stored, &spec));
    errors.extend(validate_api_approval(crd, old));
    if spec["preserveUnknownFields"] == true
        && old.is_none_or(|old| old.pointer("/spec/preserveUnknownFields") != Some(&json!(true)))
    {
        errors.push(FieldError::invalid(
            &Path::new(["spec", "preserveUnknownFields"]),
            json!(true),
            "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead",
        ));
    }
    errors
}

pub(super) fn established(crd: &Value) -> bool {
    crd.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == "Established" && c["status"] == "True")
        })
}

pub(super) fn versions(spec: &Value) -> &[Value] {
    spec.get("versions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

pub(super) fn all_versions_have_schemas(spec: &Value) -> bool {
    versions(spec)
        .iter()
        .all(|v| v.pointer("/schema/openAPIV3Schema").is_some())
}

/// Whether every version has the same value at `key` (the real server
/// then moves it to the top of its internal form).
pub(super) fn identical(spec: &Value, key: &str) -> bool {
    let versions = versions(spec);
    versions
        .first()
        .is_some_and(|first| versions.iter().all(|v| v.get(key) == first.get(key)))
}

use crate::apis::apiextensions::validation::approval::validate_api_approval;
use crate::apis::apiextensions::validation::spec::validate_spec;
use crate::apis::apiextensions::validation::spec::validate_spec_update;
use crate::apis::apiextensions::validation::spec::validate_stored_versions;
pub(crate) use warnings::warnings;
