//! PUT of an object: a replace (a create when it is missing).

use http::Response;
use rekon_store::{Status, WriteOptions};

use super::body::{check_api_version, parse_json};
use super::request::Request;
use crate::respond::{Body, json_response};

/// PUT of an object.
pub(crate) fn update(
    req: &Request<'_>,
    name: &str,
    opts: &WriteOptions,
) -> Result<Response<Body>, Status> {
    let res = req.res;
    let obj = parse_json(&req.body, res)?;
    check_api_version(res, &obj)?;
    let (out, created) = req
        .store
        .replace_created(res, req.namespace, name, obj, opts)?;
    Ok(json_response(
        if created { 201 } else { 200 },
        &out,
        req.ctx,
    ))
}
