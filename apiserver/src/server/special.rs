//! Resources that are not plain stored objects: the `scale` subresource,
//! and verbs a resource does not serve. (Reviews and bindings, answered
//! without storing, are the store's: `rekon_store::answer_review`.)

use super::prelude::*;

/// 405: the resource does not serve this verb (as `POST` to an item URL).
pub(crate) fn method_not_allowed() -> Status {
    Status::new(
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
    )
}

/// The `scale` subresource of a Deployment, ReplicaSet, StatefulSet,
/// ReplicationController or custom resource: an `autoscaling/v1` Scale
/// over `spec.replicas`. `patch` is the merge patch of a PATCH, `put` the
/// Scale of a PUT.
pub(crate) fn scale(
    store: &Store,
    res: &ResourceInfo,
    namespace: Option<&str>,
    name: &str,
    method: &Method,
    body: &[u8],
    opts: &WriteOptions,
) -> Result<Value, Status> {
    let object = store.get(res, namespace, name)?;
    let current = scale_of(&object);
    let wanted = match method.as_str() {
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
    let mut opts = opts.clone();
    opts.subresource = None;
    let patch = json!({"spec": {"replicas": replicas}}).to_string();
    let updated = store.patch(
        res,
        namespace,
        name,
        &PatchType::Merge,
        patch.as_bytes(),
        &opts,
    )?;
    Ok(scale_of(&updated))
}

/// The Scale of an object.
fn scale_of(object: &Value) -> Value {
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
    let mut status =
        json!({"replicas": object.pointer("/status/replicas").cloned().unwrap_or(json!(0))});
    if let Some(selector) = selector {
        status["selector"] = json!(selector);
    }
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": metadata,
        "spec": {"replicas": object.pointer("/spec/replicas").cloned().unwrap_or(json!(0))},
        "status": status,
    })
}
