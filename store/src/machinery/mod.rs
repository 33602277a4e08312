//! apimachinery, as the real server's checks use it: field errors
//! ([`field`]), the formats of names, keys and values ([`names`]), the
//! checks of an object's `metadata` ([`objectmeta`]), label selectors
//! ([`labels`]), conditions ([`conditions`]), quantities ([`quantity`]),
//! version priority ([`version`]), and an object's fields read and written
//! as JSON ([`object`]).

pub(crate) mod conditions;
pub mod field;
pub(crate) mod labels;
pub(crate) mod names;
pub(crate) mod object;
pub mod objectmeta;
pub(crate) mod quantity;
pub(crate) mod version;
