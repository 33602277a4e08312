//! The OpenAPI schema validation of a custom resource, as a 1.36
//! kube-apiserver performs it: kube-openapi's `validate.SchemaValidator`
//! run on the whole object against its version's `openAPIV3Schema`, its
//! result turned into field errors as apiextensions does
//! (`pkg/apiserver/validation/validation.go`), and, on update, ratcheting
//! (`ratcheting.go`, feature CRDValidationRatcheting): errors on values
//! that did not change are dropped.
//!
//! The checks are those of the schema only; the type meta and metadata of
//! the object, list-type uniqueness, CEL rules, defaults and pruning are
//! done elsewhere. Values are seen as the server decodes them: a number
//! written as an integer that fits is an int64, any other a float64.
//!
//! One job per file: `schema` runs the validators of a node in Go's
//! order; `type_check`, `composition` (allOf, anyOf, oneOf, not),
//! `values` (string rules and enum), `number`, `slice` and `object` are
//! kube-openapi's validators; `formats` and the `format_*` files the
//! string formats; `pattern` Go's regexp syntax; `ratchet` the
//! correlation of old and new values; `errors` and `result` kube-openapi's
//! errors and results; `go` how Go holds and compares the values.

mod composition;
mod errors;
mod formats;
mod go;
mod number;
mod object;
mod ratchet;
mod result;
mod schema;
mod slice;
mod type_check;
mod values;

#[cfg(test)]
mod tests;

use serde_json::Value;

use crate::machinery::field::{ErrorList, Path};
use crate::schema::Schema;

/// Whether a 1.36 server checks `format` on a node of type `kind` (""
/// when untyped); the others are dropped, and a CRD naming one gets the
/// warning `unrecognized format`.
pub(crate) fn format_checked(kind: &str, format: &str) -> bool {
    let types: &[&str] = if kind.is_empty() { &[] } else { &[kind] };
    !formats::kept(types, Some(format)).is_empty()
}

/// Whether `data` is valid for the (known) string format `format`, as
/// strfmt checks it (`uuid`, `byte`, `date-time`...).
pub(crate) fn format_valid(format: &str, data: &str) -> bool {
    formats::validates(format, data)
}

/// Validates `value` (the whole custom resource as JSON) against `schema`
/// (its CRD version's openAPIV3Schema).
pub fn validate(schema: &Schema, value: &Value) -> ErrorList {
    validate_at(&Path::none(), schema, value)
}

/// The same for an update, with ratcheting (feature
/// CRDValidationRatcheting, on in 1.36): errors on parts of `new` that are
/// unchanged from `old` are dropped, as apiextensions' ratcheting
/// validator does.
pub fn validate_update(schema: &Schema, new: &Value, old: &Value) -> ErrorList {
    validate_update_at(&Path::none(), schema, new, old)
}

/// Validates `value` against `schema` with the errors under `field`: the
/// status subresource validates the status against the status schema
/// under `status` (`readyReplicas in body ...` on `status.readyReplicas`),
/// the CRD's checks validate a default under the path of its `default`.
pub fn validate_at(field: &Path, schema: &Schema, value: &Value) -> ErrorList {
    let result = schema::validate(schema, "", value, None);
    errors::to_field_errors(field, result.errors())
}

/// [`validate_update`] with the errors under `field` (for the status
/// subresource: the new and old status, `Value::Null` when there was
/// none).
pub fn validate_update_at(field: &Path, schema: &Schema, new: &Value, old: &Value) -> ErrorList {
    let result = ratchet::validate(schema, "", new, old);
    errors::to_field_errors(field, result.errors())
}
