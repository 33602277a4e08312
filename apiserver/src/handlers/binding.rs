//! A Pod's `binding` (and the namespace's `bindings`) and `log`
//! subresources (`BindingREST`, `LegacyBindingREST` and `LogREST` in
//! `pkg/registry/core/pod`): the request read, then handed to the store.

use http::{Response, StatusCode};
use rekon_store::{ResourceInfo, Status, WriteOptions};
use serde_json::{Value, json};

use super::body::parse_json;
use super::request::Request;
use crate::respond::{Body, audit_headers, body_of, json_response};

/// POST of a Binding to the Pod `name`'s `binding` subresource, or (no
/// name) to the namespace's `bindings`, which binds the Pod it names:
/// `201` with a `Success` Status.
pub(crate) fn bind(
    req: &Request<'_>,
    name: Option<&str>,
    opts: &WriteOptions,
) -> Result<Response<Body>, Status> {
    let kind = ResourceInfo::new("", "v1", "Binding", "bindings", true);
    let binding = parse_json(&req.body, &kind)?;
    let sent = binding
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let name = match name {
        Some(name) if name != sent => {
            return Err(Status::bad_request(
                "name in URL does not match name in Binding object",
            ));
        }
        Some(name) => name,
        None => sent,
    };
    let namespace = req.namespace.unwrap_or_default();
    if binding
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .is_some_and(|ns| !ns.is_empty() && ns != namespace)
    {
        return Err(Status::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    let pods = req
        .store
        .resource_for_plural("", "v1", "pods")
        .ok_or_else(|| Status::internal("pods are not served"))?;
    req.store
        .bind(&pods, namespace, name, &binding, opts.dry_run)?;
    let status = json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
        "status": "Success", "code": 201});
    Ok(json_response(201, &status, req.ctx))
}

/// GET of the Pod `name`'s `log`: empty (`204`) while the Pod is on no
/// node.
pub(crate) fn log(req: &Request<'_>, name: &str) -> Result<Response<Body>, Status> {
    let container = req.query.get("container");
    let namespace = req.namespace.unwrap_or_default();
    req.store.pod_log(req.res, namespace, name, container)?;
    let mut resp = Response::new(body_of(Vec::new()));
    *resp.status_mut() = StatusCode::NO_CONTENT;
    audit_headers(&mut resp);
    Ok(resp)
}
