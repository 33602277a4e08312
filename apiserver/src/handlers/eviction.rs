//! A Pod's `eviction` subresource: the POST of an Eviction read
//! (`EvictionREST.Create` in `pkg/registry/core/pod/storage/eviction.go`:
//! the name it gives, its DeleteOptions and their dry run) and handed to
//! the store, which deletes the Pod when its disruption budget allows.

use http::{Method, Response};
use rekon_store::calls::method_not_allowed;
use rekon_store::{Deletion, ResourceInfo, Status, WriteOptions};
use serde_json::{Value, json};

use super::body::parse_json;
use super::deleteoptions::eviction_delete_options;
use super::request::Request;
use crate::respond::{Body, json_response};

/// POST of an Eviction of the Pod `name`: `201` with the `Status` the
/// store answers (its code the answer's when it names none).
pub(crate) fn evict(
    req: &Request<'_>,
    name: &str,
    opts: &WriteOptions,
) -> Result<Response<Body>, Status> {
    if req.method != Method::POST {
        return Err(method_not_allowed());
    }
    let kind = ResourceInfo::new("policy", "v1", "Eviction", "evictions", true);
    let eviction = parse_json(&req.body, &kind)?;
    let sent = eviction
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if sent != name {
        return Err(Status::bad_request(
            "name in URL does not match name in Eviction object",
        ));
    }
    let options = eviction.get("deleteOptions").filter(|o| !o.is_null());
    if options
        .and_then(|o| o.get("ignoreStoreReadErrorWithClusterBreakingPotential"))
        .and_then(Value::as_bool)
        == Some(true)
    {
        return Err(Status::invalid(
            &kind,
            name,
            "deleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential",
            "FieldValueInvalid",
            "Invalid value: true: can not be set for pod eviction, try after removing the option",
        ));
    }
    let mut how = match options {
        Some(options) => eviction_delete_options(options)?.deletion,
        None => Deletion::default(),
    };
    // `propagateDryRun`: the request's dry run when the options name none.
    how.dry_run |= opts.dry_run;
    let mut status = req.store.evict(req.res, req.namespace, name, how)?;
    if let Some(m) = status.as_object_mut() {
        m.entry("code").or_insert(json!(201));
    }
    Ok(json_response(201, &status, req.ctx))
}
