//! The subresources of a Pod that write part of its spec
//! (`ephemeralcontainers`, `resize`): what each takes from a write, and its
//! checks.

use serde_json::Value;

use super::{ephemeral, resize};
use crate::machinery::field::ErrorList;

/// The subresources of a Pod that write part of its spec.
pub(crate) const SPEC_SUBRESOURCES: [&str; 2] = ["ephemeralcontainers", "resize"];

/// A write to one of [`SPEC_SUBRESOURCES`]: `new` (the write) becomes the
/// stored Pod with what the subresource changes taken from it.
pub(crate) fn prepare_subresource_update(subresource: &str, new: &mut Value, old: &Value) {
    match subresource {
        "ephemeralcontainers" => ephemeral::prepare_ephemeral_update(new, old),
        "resize" => resize::prepare_resize_update(new, old),
        _ => {}
    }
}

/// The checks of a write to one of [`SPEC_SUBRESOURCES`].
pub(crate) fn validate_subresource_update(
    subresource: &str,
    new: &Value,
    old: &Value,
) -> ErrorList {
    match subresource {
        "ephemeralcontainers" => ephemeral::validate_ephemeral_update(new, old),
        "resize" => resize::validate_resize(new, old),
        _ => ErrorList::new(),
    }
}
