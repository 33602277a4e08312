//! A built-in kind's strategy: the rule its names follow, its defaults,
//! its checks of a new object, of an update and of a status write, and how
//! its objects are selected by fields.

use serde_json::Value;

use crate::machinery::field::ErrorList;
use crate::machinery::names::NameFn;
use crate::meta::selector::{FieldLabels, FieldSet, Refusal};

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

/// How a built-in kind's objects are selected by fields: the labels the
/// version it is served in takes, each with the field it selects, and the
/// words it refuses another with (`AddFieldLabelConversionFunc`, in the
/// real server's `pkg/apis/<group>/<version>/conversion.go`), and the
/// kind's field set (its strategy's `GetAttrs`, in
/// `pkg/registry/<group>/<kind>/strategy.go`), read from the object as
/// stored.
pub(crate) struct Selectable {
    /// The labels taken, with the field of the field set each selects.
    pub labels: &'static [(&'static str, &'static str)],
    /// How a label not taken is refused.
    pub refusal: Refusal,
    /// The object's field set.
    pub fields: fn(&Value) -> FieldSet,
}

impl Selectable {
    /// The labels as a [`FieldLabels`] conversion.
    pub(crate) fn field_labels(&self) -> FieldLabels {
        FieldLabels::mapped(self.labels, self.refusal)
    }
}
