//! PATCH: the patch type of the content type, the checks the real
//! handler makes before patching, and the patch.

use http::Response;
use rekon_store::gojson::{json_kind, syntax_error};
use rekon_store::{PatchType, ResourceInfo, Status, Store, WriteOptions};
use serde_json::{Value, json};

use super::request::Request;
use crate::respond::{Body, Query, json_response};

/// PATCH of an object (created by an apply when missing).
pub(crate) fn patch(
    req: &Request<'_>,
    name: &str,
    opts: &WriteOptions,
) -> Result<Response<Body>, Status> {
    let (store, res, namespace) = (req.store, req.res, req.namespace);
    let ptype = patch_type(&req.content_type, req.query)?;
    let mut opts = opts.clone();
    if matches!(ptype, PatchType::Apply { .. }) {
        opts.field_manager = req.query.get("fieldManager").map(str::to_string);
    }
    check_patch(store, res, namespace, name, &ptype, &req.body)?;
    let (out, created) = store.patch_created(res, namespace, name, &ptype, &req.body, &opts)?;
    Ok(json_response(
        if created { 201 } else { 200 },
        &out,
        req.ctx,
    ))
}

/// The patch type of a PATCH request's content type.
pub(crate) fn patch_type(content_type: &str, query: &Query) -> Result<PatchType, Status> {
    let ct = content_type.split(';').next().unwrap_or("").trim();
    Ok(match ct {
        "application/merge-patch+json" => PatchType::Merge,
        "application/json-patch+json" => PatchType::Json,
        "application/strategic-merge-patch+json" => PatchType::StrategicMerge,
        "application/apply-patch+yaml" => PatchType::Apply {
            force: query.flag("force"),
        },
        _ => {
            return Err(Status {
                code: 415,
                reason: "UnsupportedMediaType".into(),
                message: "415: Unsupported Media Type".into(),
                details: Some(json!({})),
            });
        }
    })
}

/// What the real patch handler refuses before it patches (400): a merge
/// or JSON patch of an existing object that is not JSON of the right
/// shape (`error decoding patch: ...`, in Go's words), and an apply
/// configuration of another apiVersion or kind (`invalid object type:
/// dbs.acme.io/v1alpha1, Kind=Database`, `/v1, Kind=Secret`).
fn check_patch(
    store: &Store,
    res: &ResourceInfo,
    namespace: Option<&str>,
    name: &str,
    ptype: &PatchType,
    body: &[u8],
) -> Result<(), Status> {
    let decoding = |why: String| Status::bad_request(format!("error decoding patch: {why}"));
    match ptype {
        PatchType::Merge | PatchType::Json => {
            if !store.exists(res, namespace, name) {
                return Ok(());
            }
            // What serde_json reads, Go reads too: Go's words are only
            // needed for a body it refuses.
            let patch: Value = match serde_json::from_slice(body) {
                Ok(patch) => patch,
                Err(e) => {
                    return Err(decoding(
                        syntax_error(body).unwrap_or_else(|| e.to_string()),
                    ));
                }
            };
            let (fits, go_type) = match ptype {
                PatchType::Merge => (
                    patch.is_object() || patch.is_null(),
                    "map[string]interface {}",
                ),
                _ => (
                    patch.is_array() || patch.is_null(),
                    "[]handlers.jsonPatchOp",
                ),
            };
            if !fits {
                return Err(decoding(format!(
                    "json: cannot unmarshal {} into Go value of type {go_type}",
                    json_kind(&patch)
                )));
            }
            Ok(())
        }
        PatchType::Apply { .. } => {
            /// What an apply configuration says it is (JSON, what clients
            /// send, read as JSON; YAML otherwise).
            #[derive(serde::Deserialize)]
            #[serde(rename_all = "camelCase")]
            struct TypeMeta {
                #[serde(default)]
                api_version: String,
                #[serde(default)]
                kind: String,
            }
            let config = serde_json::from_slice::<TypeMeta>(body)
                .ok()
                .or_else(|| serde_yaml_ng::from_slice::<TypeMeta>(body).ok());
            let Some(TypeMeta { api_version, kind }) = config else {
                return Ok(());
            };
            let (api_version, kind) = (api_version.as_str(), kind.as_str());
            if api_version == res.api_version() && kind == res.kind {
                return Ok(());
            }
            let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
            Err(Status::bad_request(format!(
                "invalid object type: {group}/{version}, Kind={kind}"
            )))
        }
        _ => Ok(()),
    }
}
