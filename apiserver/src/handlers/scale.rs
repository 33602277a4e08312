//! The `scale` subresource: an `autoscaling/v1` Scale read from and
//! written to the object's replicas (Kubernetes' scale registries).

use rekon_store::calls::method_not_allowed;
use rekon_store::{CustomSchemas, PatchType, ResourceInfo, Status, WriteOptions};
use serde_json::{Map, Value, json};

use super::body::parse_json;
use super::request::Request;

/// The `scale` subresource of a Deployment, ReplicaSet, StatefulSet,
/// ReplicationController or custom resource: an `autoscaling/v1` Scale
/// over `spec.replicas`. `patch` is the merge patch of a PATCH, `put` the
/// Scale of a PUT.
pub(crate) fn scale(req: &Request<'_>, name: &str, opts: &WriteOptions) -> Result<Value, Status> {
    let (store, res, namespace, body) = (req.store, req.res, req.namespace, req.body.as_slice());
    let object = store.get(res, namespace, name)?;
    let current = scale_of(&object, res);
    let wanted = match req.method.as_str() {
        "GET" => return Ok(current),
        "PUT" => parse_json(body, res)?,
        "PATCH" => {
            let patch: Value = serde_json::from_slice(body)
                .map_err(|e| Status::bad_request(format!("error decoding patch: {e}")))?;
            let mut scale = current.clone();
            json_patch::merge(&mut scale, &patch);
            scale
        }
        _ => return Err(method_not_allowed()),
    };
    let Some(replicas) = wanted.pointer("/spec/replicas").and_then(Value::as_i64) else {
        return Err(Status::invalid(
            res,
            name,
            "spec.replicas",
            "FieldValueRequired",
            "Required value",
        ));
    };
    // A Scale naming a resourceVersion is written only over that version.
    if let Some(version) = wanted
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .filter(|v| !v.is_empty())
        && Some(version)
            != object
                .pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
    {
        return Err(Status::conflict(res, name));
    }
    let mut opts = opts.clone();
    opts.subresource = Some("scale".into());
    let spec_path = res
        .custom
        .as_ref()
        .and_then(|custom| custom.scale(&res.version))
        .map_or_else(
            || ".spec.replicas".to_string(),
            |p| p.spec_replicas_path.clone(),
        );
    let patch = CustomSchemas::scale_patch(&spec_path, json!(replicas)).to_string();
    let updated = store.patch(
        res,
        namespace,
        name,
        &PatchType::Merge,
        patch.as_bytes(),
        &opts,
    )?;
    Ok(scale_of(&updated, res))
}

/// The value at a simple JSON path (`.spec.replicas`).
fn at_path<'a>(object: &'a Value, path: &str) -> Option<&'a Value> {
    let pointer = path.replace('.', "/");
    object.pointer(&pointer)
}

/// The Scale of an object: for a custom resource, at its CRD's paths
/// (`scaleFromCustomResource`).
fn scale_of(object: &Value, res: &ResourceInfo) -> Value {
    let meta = &object["metadata"];
    let mut metadata = Map::new();
    for field in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        if let Some(value) = meta.get(field) {
            metadata.insert(field.into(), value.clone());
        }
    }
    let (spec_replicas, status) = match res
        .custom
        .as_ref()
        .and_then(|custom| custom.scale(&res.version))
    {
        Some(paths) => {
            let replicas = |path: &str| at_path(object, path).and_then(Value::as_i64).unwrap_or(0);
            let mut status = json!({"replicas": replicas(&paths.status_replicas_path)});
            if let Some(selector) = paths
                .label_selector_path
                .as_deref()
                .and_then(|p| at_path(object, p))
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
            {
                status["selector"] = json!(selector);
            }
            (json!(replicas(&paths.spec_replicas_path)), status)
        }
        None => {
            let selector = object
                .pointer("/spec/selector/matchLabels")
                .and_then(Value::as_object)
                .map(|labels| {
                    labels
                        .iter()
                        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
                        .collect::<Vec<_>>()
                        .join(",")
                });
            let mut status = json!({"replicas": object.pointer("/status/replicas").cloned().unwrap_or(json!(0))});
            if let Some(selector) = selector {
                status["selector"] = json!(selector);
            }
            let spec = object
                .pointer("/spec/replicas")
                .cloned()
                .unwrap_or(json!(0));
            (spec, status)
        }
    };
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": metadata,
        "spec": {"replicas": spec_replicas},
        "status": status,
    })
}
