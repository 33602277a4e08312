//! The storage's preconditions of an update (`Store.Update`): the
//! resourceVersion read as a number, an unconditional update where the
//! kind allows it, the stored version otherwise; and the metadata a
//! status write may change.

use serde_json::Value;

use crate::apis::updates::allow_unconditional_update;
use crate::machinery::field::{FieldError, Path};
use crate::machinery::object::meta;
use crate::meta::status::Status;
use crate::resource::info::ResourceInfo;

/// The metadata a status write of a built-in kind may change: what its
/// status strategy's `PrepareForUpdate` does not put back (a Deployment's
/// labels are; a Pod's owner references are).
pub(crate) fn status_write_keeps(res: &ResourceInfo) -> &'static [&'static str] {
    match (res.group.as_str(), res.kind.as_str()) {
        ("apps", "Deployment") => &["annotations", "finalizers", "ownerReferences"],
        ("", "Pod") => &["labels", "annotations", "finalizers"],
        _ => &["labels", "annotations", "finalizers", "ownerReferences"],
    }
}

/// The resourceVersion an update names, as the storage reads it
/// (`ObjectResourceVersion`): none, `""` and `"0"` are 0; one that is not a
/// number is the storage's error, which the handler answers as a bare 500.
pub(crate) fn object_version(given: Option<&str>) -> Result<u64, Status> {
    match given.filter(|v| !v.is_empty()) {
        None => Ok(0),
        Some(v) => v.parse::<u64>().map_err(|_| {
            Status::unknown(format!(
                "strconv.ParseUint: parsing \"{v}\": invalid syntax"
            ))
        }),
    }
}

/// The storage's precondition of an update (`Store.Update`): version 0
/// writes over what is stored where the kind allows an unconditional
/// update, and is refused where it does not; another version must be the
/// stored one.
pub(crate) fn precondition(
    res: &ResourceInfo,
    name: &str,
    version: u64,
    existing: &Value,
) -> Result<(), Status> {
    if version == 0 {
        if allow_unconditional_update(res) {
            return Ok(());
        }
        // The resource's name where the kind's should be, as upstream.
        return Err(Status::from_field_errors(
            &res.group,
            &res.plural,
            name,
            &[FieldError::invalid(
                &Path::new(["metadata", "resourceVersion"]),
                0i64,
                "must be specified for an update",
            )],
        ));
    }
    if Some(version.to_string()) != meta(existing, "resourceVersion") {
        return Err(Status::conflict(res, name));
    }
    Ok(())
}
