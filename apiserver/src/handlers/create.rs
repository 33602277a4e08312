//! POST to a collection: a create.

use http::Response;
use rekon_store::{Status, WriteOptions};

use super::body::{check_api_version, parse_json};
use super::request::Request;
use crate::respond::{Body, json_response};

/// POST of a new object to its collection.
pub(crate) fn create(req: &Request<'_>, opts: &WriteOptions) -> Result<Response<Body>, Status> {
    let res = req.res;
    if res.namespaced && req.namespace.is_none() {
        return Err(Status::resource_not_found());
    }
    let obj = parse_json(&req.body, res)?;
    check_api_version(res, &obj)?;
    let out = req.store.create(res, req.namespace, obj, opts)?;
    Ok(json_response(201, &out, req.ctx))
}
