//! The `scale` subresource: the request read (PUT's Scale, PATCH's type
//! and body, the options) and handed to the store, which writes the
//! object through its `autoscaling/v1` Scale as the scale registries do.

use rekon_store::calls::method_not_allowed;
use rekon_store::{ScaleWrite, Status, WriteOptions};
use serde_json::Value;

use super::body::parse_json;
use super::get::table_options;
use super::patch::patch_type;
use super::request::Request;
use crate::printers::{TableMeta, scale_columns, table};

/// The Scale answered, or the Table of it the request asks for
/// (`kubectl get --subresource=scale`).
pub(crate) fn scale_answer(
    req: &Request<'_>,
    name: &str,
    opts: &WriteOptions,
) -> Result<Value, Status> {
    let scale = scale(req, name, opts)?;
    let Some(options) = table_options(req)? else {
        return Ok(scale);
    };
    let columns = scale_columns(req.store, req.res);
    Ok(table(
        &columns,
        TableMeta::default(),
        std::slice::from_ref(&scale),
        options,
        true,
    ))
}

/// The Scale of a Deployment, ReplicaSet, StatefulSet,
/// ReplicationController or custom resource, read or written.
pub(crate) fn scale(req: &Request<'_>, name: &str, opts: &WriteOptions) -> Result<Value, Status> {
    let (store, res, namespace, body) = (req.store, req.res, req.namespace, req.body.as_slice());
    let ptype;
    let write = match req.method.as_str() {
        "GET" => None,
        "PUT" => Some(ScaleWrite::Replace(parse_json(body, res)?)),
        "PATCH" => {
            ptype = patch_type(&req.content_type, req.query)?;
            Some(ScaleWrite::Patch(&ptype, body))
        }
        _ => return Err(method_not_allowed()),
    };
    store.scale(res, namespace, name, write, opts)
}
