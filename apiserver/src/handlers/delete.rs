//! DELETE of an object (with its DeleteOptions: propagation,
//! preconditions, dry run) and of a collection.

use http::Response;
use rekon_store::{DeleteOutcome, Deletion, ResourceInfo, Status, WriteOptions, is_builtin};
use serde_json::json;

use super::body::{list_metadata, strip_kind, success_status};
use super::deleteoptions::delete_options;
use super::options::validate_list_options;
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

/// Whether a DELETE of `res` with `how` keeps its pods without being
/// told so: a batch/v1 Job's without a policy (`REST.Delete` and
/// `REST.DeleteCollection` in `pkg/registry/batch/job/storage/storage.go`
/// warn then).
fn orphans_by_default(res: &ResourceInfo, how: &Deletion) -> bool {
    res.group == "batch" && res.version == "v1" && res.kind == "Job" && how.propagation.is_none()
}

/// DELETE of one object: its options read and checked before the object
/// is looked up; `202 Accepted` when the object stays and the options
/// said `orphanDependents: false` (`DeleteResource`). Of `opts`, only
/// the warnings are its (the rest are read from the DeleteOptions).
pub(crate) fn delete(
    req: &Request<'_>,
    n: &str,
    opts: &WriteOptions,
) -> Result<Response<Body>, Status> {
    let (store, res, namespace) = (req.store, req.res, req.namespace);
    let options = delete_options(req)?;
    let how = options.deletion;
    if orphans_by_default(res, &how) {
        opts.warnings.add(JOB_ORPHANS);
    }
    match store.delete_with(res, namespace, n, how)? {
        DeleteOutcome::Deleted(o) if !answers_the_object(&res.group, &res.kind) => {
            Ok(json_response(200, &success_status(res, n, &o), req.ctx))
        }
        DeleteOutcome::Deleted(o) => Ok(json_response(200, &o, req.ctx)),
        DeleteOutcome::Pending(o) => {
            let code = if options.orphan_dependents == Some(false) {
                202
            } else {
                200
            };
            Ok(json_response(code, &o, req.ctx))
        }
    }
}

/// DELETE of a collection (`DeleteCollection`): the list options checked,
/// then the DeleteOptions; every object the list selects deleted with
/// them, and the answer the list of them as they were.
pub(crate) fn delete_collection(
    req: &Request<'_>,
    opts: &WriteOptions,
) -> Result<Response<Body>, Status> {
    let (store, res) = (req.store, req.res);
    validate_list_options(req.query)?;
    let options = delete_options(req)?;
    if orphans_by_default(res, &options.deletion) {
        opts.warnings.add(JOB_ORPHANS);
    }
    let list = store.delete_collection(res, &req.list_options(), &options.deletion)?;
    let builtin = is_builtin(res);
    let doc = json!({
        "kind": format!("{}List", res.kind),
        "apiVersion": res.api_version(),
        "metadata": list_metadata(builtin, &list),
        "items": list.items.into_iter().map(|o| strip_kind(builtin, o)).collect::<Vec<_>>(),
    });
    Ok(json_response(200, &doc, req.ctx))
}
