//! Reviews and bindings: kinds a real server answers without storing
//! (`create` is their only verb). In rekon every request is allowed and
//! nothing is authenticated, and the answers say so.

use serde_json::{Value, json};

use crate::meta::decode::decode_object;
use crate::meta::status::Status;
use crate::resource::info::ResourceInfo;

/// The answer to a create of a kind that is not stored: the object with
/// the status a real server would give it in `rekon dev`, where every
/// request is allowed and there is no authentication.
pub fn answer(res: &ResourceInfo, namespace: Option<&str>, body: &[u8]) -> Result<Value, Status> {
    let mut object = decode_object(body, res)?;
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
