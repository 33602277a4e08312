//! A built-in kind's strategy: the rule its names follow, its defaults,
//! its checks of a new object, of an update and of a status write.

use serde_json::Value;

use crate::machinery::field::ErrorList;
use crate::machinery::names::NameFn;

/// What a built-in kind's strategy does to an object it stores.
pub(crate) struct Rules {
    /// The rule its names follow (`ValidateObjectMeta`'s name function).
    pub name: NameFn,
    /// Fills the real server's defaults, in place.
    pub default: fn(&mut Value),
    /// The kind's checks of a new object (metadata aside).
    pub validate: fn(&Value) -> ErrorList,
    /// The kind's checks of `new` replacing `old` (metadata aside):
    /// immutable fields, and the create checks again where the real
    /// server runs them.
    pub validate_update: fn(&Value, &Value) -> ErrorList,
    /// The checks of a write to the `status` subresource, when the kind has
    /// their own (`Validate<Kind>StatusUpdate`).
    pub validate_status: Option<fn(&Value, &Value) -> ErrorList>,
}

/// No checks.
pub(crate) fn nothing(_: &Value) -> ErrorList {
    ErrorList::new()
}

/// No update checks.
pub(crate) fn nothing_on_update(_: &Value, _: &Value) -> ErrorList {
    ErrorList::new()
}

/// No defaults.
pub(crate) fn no_defaults(_: &mut Value) {}
