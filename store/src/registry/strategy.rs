//! The strategy that serves a resource: a built-in kind's rules
//! ([`crate::apis::builtin`]) or a custom resource's schemas
//! ([`crate::apis::apiextensions::customresource`]); the registry's calls
//! into it.

use serde_json::Value;

use super::registry::Registry;
use crate::apis::apiextensions::customresource::{self, Write};
use crate::apis::builtin::decode_fields;
use crate::meta::status::Status;
use crate::meta::types::WriteOptions;
use crate::resource::info::ResourceInfo;

impl Registry {
    /// A request's body decoded as a new object of `res`'s kind: it must
    /// be an object (`400` otherwise), then decoded as [`Self::decode_body`]
    /// decodes it.
    pub(crate) fn decode_request(
        &self,
        res: &ResourceInfo,
        object: &mut Value,
        opts: &WriteOptions,
    ) -> Result<(), Status> {
        if !object.is_object() {
            return Err(Status::bad_request(format!(
                "the body of the request was not a {} object",
                res.kind
            )));
        }
        self.decode_body(res, object, None, opts)
    }

    /// Decodes a body written in `res`'s version, as the real server's
    /// decoder does (a custom resource's by its schema, a built-in kind's by
    /// its declared fields). `stored` is the object it replaces.
    pub(crate) fn decode_body(
        &self,
        res: &ResourceInfo,
        object: &mut Value,
        stored: Option<&Value>,
        opts: &WriteOptions,
    ) -> Result<(), Status> {
        match &res.custom {
            Some(custom) => customresource::decode(res, custom, object, stored, opts),
            None => decode_fields(res, object, opts),
        }
    }

    /// Validates a custom resource about to be stored in `res`'s version;
    /// `old` is the object it replaces (update, status).
    pub(crate) fn validate_custom(
        &self,
        res: &ResourceInfo,
        new: &Value,
        old: Option<&Value>,
        write: Write,
        opts: &WriteOptions,
    ) -> Result<(), Status> {
        match &res.custom {
            Some(custom) => customresource::validate(res, custom, new, old, write, opts),
            None => Ok(()),
        }
    }
}
