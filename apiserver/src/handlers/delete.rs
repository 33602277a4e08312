//! DELETE of an object (with its DeleteOptions: propagation,
//! preconditions, dry run) and of a collection.

use http::Response;
use rekon_store::{DeleteOutcome, Propagation, Status, WriteOptions, is_builtin};
use serde_json::{Value, json};

use super::body::{strip_kind, success_status};
use super::request::Request;
use crate::respond::{Body, json_response};

/// DELETE of one object.
pub(crate) fn delete(
    req: &Request<'_>,
    n: &str,
    opts: &WriteOptions,
) -> Result<Response<Body>, Status> {
    let (store, res, namespace, body) = (req.store, req.res, req.namespace, req.body.as_slice());
    let opts_body: Value = if body.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(body)
            .map_err(|e| Status::bad_request(format!("error decoding DeleteOptions: {e}")))?
    };
    let policy = opts_body
        .get("propagationPolicy")
        .and_then(Value::as_str)
        .or_else(|| req.query.get("propagationPolicy"));
    let propagation = match policy {
        Some("Foreground") => Some(Propagation::Foreground),
        Some("Orphan") => Some(Propagation::Orphan),
        Some("Background") => Some(Propagation::Background),
        _ if opts_body.get("orphanDependents").and_then(Value::as_bool) == Some(true) => {
            Some(Propagation::Orphan)
        }
        _ => None,
    };
    let current = store.get(res, namespace, n)?;
    if let Some(pre) = opts_body.get("preconditions") {
        let uid = current
            .pointer("/metadata/uid")
            .and_then(Value::as_str)
            .unwrap_or("");
        // `rest.BeforeDelete` checks them before anything else.
        if let Some(want) = pre.get("uid").and_then(Value::as_str)
            && want != uid
        {
            return Err(Status::precondition_failed(res, n, "UID", want, uid));
        }
        let rv = current
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        if let Some(want) = pre.get("resourceVersion").and_then(Value::as_str)
            && want != rv
        {
            return Err(Status::precondition_failed(
                res,
                n,
                "ResourceVersion",
                want,
                rv,
            ));
        }
    }
    let dry = opts.dry_run
        || opts_body
            .get("dryRun")
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|v| v == "All"));
    let outcome = if dry {
        DeleteOutcome::Deleted(current)
    } else {
        store.delete(res, namespace, n, propagation)?
    };
    match outcome {
        DeleteOutcome::Deleted(o) => Ok(json_response(200, &success_status(res, n, &o), req.ctx)),
        DeleteOutcome::Pending(o) => Ok(json_response(200, &o, req.ctx)),
    }
}

/// DELETE of a collection: every object the list options select.
pub(crate) fn delete_collection(req: &Request<'_>) -> Result<Response<Body>, Status> {
    let (store, res) = (req.store, req.res);
    let list = store.list(res, &req.list_options())?;
    let mut items = Vec::new();
    for o in list.items {
        let n = o
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let ns = o
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .map(str::to_string);
        match store.delete(res, ns.as_deref(), &n, None) {
            Ok(DeleteOutcome::Deleted(o) | DeleteOutcome::Pending(o)) => {
                items.push(strip_kind(is_builtin(res), o))
            }
            Err(e) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    let doc = json!({
        "kind": format!("{}List", res.kind),
        "apiVersion": res.api_version(),
        "metadata": {"resourceVersion": store.resource_version()},
        "items": items,
    });
    Ok(json_response(200, &doc, req.ctx))
}
