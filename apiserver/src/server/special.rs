//! Resources that are not plain stored objects: reviews and bindings (a
//! real server answers them without storing anything), the `scale`
//! subresource, and verbs a resource does not serve.

use super::prelude::*;

/// 405: the resource does not serve this verb (as `POST` to an item URL).
pub(crate) fn method_not_allowed() -> Status {
    Status::new(
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
    )
}

/// The answer to a create of a kind that is not stored: the object with
/// the status a real server would give it in `rekon dev`, where every
/// request is allowed and there is no authentication.
pub(crate) fn review(
    res: &ResourceInfo,
    namespace: Option<&str>,
    body: &[u8],
) -> Result<Value, Status> {
    let mut object = parse_json(body, res)?;
    if !object.is_object() {
        return Err(Status::bad_request(format!(
            "the object provided is unrecognized (must be of type {})",
            res.kind
        )));
    }
    object["apiVersion"] = json!(res.api_version());
    object["kind"] = json!(res.kind);
    if let Some(ns) = namespace.filter(|_| res.namespaced) {
        object["metadata"]["namespace"] = json!(ns);
    }
    if object.get("metadata").is_none_or(Value::is_null) {
        object["metadata"] = json!({});
    }
    let status = match (res.group.as_str(), res.kind.as_str()) {
        ("authorization.k8s.io", "SelfSubjectRulesReview") => json!({
            "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
            "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
            "incomplete": false,
        }),
        ("authorization.k8s.io", _) => json!({
            "allowed": true,
            "reason": "rekon dev allows every request",
        }),
        ("authentication.k8s.io", "SelfSubjectReview") => json!({
            "userInfo": {"username": "rekon-dev", "groups": ["system:masters", "system:authenticated"]},
        }),
        ("authentication.k8s.io", "TokenReview") => json!({
            "authenticated": false,
            "error": "rekon dev issues no tokens",
        }),
        // A Binding needs no status: the server answers with the object.
        _ => return Ok(object),
    };
    object["status"] = status;
    Ok(object)
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
