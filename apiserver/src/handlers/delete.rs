//! DELETE of an object (with its DeleteOptions: propagation,
//! preconditions, dry run) and of a collection.

use http::Response;
use rekon_store::{DeleteOutcome, Deletion, Propagation, Status, WriteOptions, is_builtin};
use serde_json::{Value, json};

use super::body::{strip_kind, success_status};
use super::options::options_invalid;
use super::request::Request;
use crate::respond::{Body, json_response};

/// The kinds whose DELETE answers the object it deleted (their registry's
/// `ReturnDeletedObject`); the others answer a `Status`.
fn answers_the_object(group: &str, kind: &str) -> bool {
    match group {
        "" => matches!(
            kind,
            "Namespace"
                | "PersistentVolume"
                | "PersistentVolumeClaim"
                | "Pod"
                | "PodTemplate"
                | "ResourceQuota"
                | "Service"
                | "ServiceAccount"
        ),
        "storage.k8s.io" => matches!(
            kind,
            "CSIDriver" | "CSINode" | "StorageClass" | "VolumeAttachment" | "VolumeAttributesClass"
        ),
        "resource.k8s.io" => true,
        _ => false,
    }
}

/// What a Job's DELETE without a propagation policy warns (batch/v1 keeps
/// its pods by default).
const JOB_ORPHANS: &str = "child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning";

/// How the DELETE goes, from its body and query (the body wins), checked
/// as `ValidateDeleteOptions` checks them.
fn deletion(req: &Request<'_>, body: &Value, dry_run: bool) -> Result<Deletion, Status> {
    let policy = body
        .get("propagationPolicy")
        .and_then(Value::as_str)
        .or_else(|| req.query.get("propagationPolicy"));
    let orphan_dependents = body
        .get("orphanDependents")
        .and_then(Value::as_bool)
        .or_else(|| req.query.get("orphanDependents").map(|v| v == "true"));
    let mut causes = Vec::new();
    if let (Some(policy), Some(_)) = (policy, orphan_dependents) {
        causes.push((
            "propagationPolicy",
            "FieldValueInvalid",
            format!(
                "Invalid value: \"{policy}\": orphanDependents and deletionPropagation cannot be both set"
            ),
        ));
    }
    let propagation = match policy {
        Some("Foreground") => Some(Propagation::Foreground),
        Some("Orphan") => Some(Propagation::Orphan),
        Some("Background") => Some(Propagation::Background),
        Some(other) => {
            causes.push((
                "propagationPolicy",
                "FieldValueNotSupported",
                format!(
                    "Unsupported value: \"{other}\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\""
                ),
            ));
            None
        }
        None => match orphan_dependents {
            Some(true) => Some(Propagation::Orphan),
            Some(false) => Some(Propagation::Background),
            None => None,
        },
    };
    if !causes.is_empty() {
        let causes: Vec<(&str, &str, &str)> = causes
            .iter()
            .map(|(f, r, m)| (*f, *r, m.as_str()))
            .collect();
        return Err(options_invalid("DeleteOptions", &causes));
    }
    let grace_period = body
        .get("gracePeriodSeconds")
        .and_then(Value::as_i64)
        .or_else(|| {
            req.query
                .get("gracePeriodSeconds")
                .and_then(|g| g.parse().ok())
        });
    let dry_run = dry_run
        || body
            .get("dryRun")
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|v| v == "All"));
    Ok(Deletion {
        propagation,
        dry_run,
        grace_period,
    })
}

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
    let current = store.get(res, namespace, n)?;
    let how = deletion(req, &opts_body, opts.dry_run)?;
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
    if res.group == "batch" && res.version == "v1" && res.kind == "Job" && how.propagation.is_none()
    {
        opts.warnings.add(JOB_ORPHANS);
    }
    match store.delete_with(res, namespace, n, how)? {
        DeleteOutcome::Deleted(o) if !answers_the_object(&res.group, &res.kind) => {
            Ok(json_response(200, &success_status(res, n, &o), req.ctx))
        }
        DeleteOutcome::Deleted(o) | DeleteOutcome::Pending(o) => {
            Ok(json_response(200, &o, req.ctx))
        }
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
        // Each answered as it was before its delete.
        match store.delete(res, ns.as_deref(), &n, None) {
            Ok(_) => items.push(strip_kind(is_builtin(res), o)),
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
