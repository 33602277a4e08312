//! Reading a request's body and writing the objects of an answer: the
//! object of a create or replace, its apiVersion check, list items, and
//! the Success status of a delete.

use rekon_store::calls::decode_object;
use rekon_store::{ObjectList, ResourceInfo, Status};
use serde_json::{Map, Value, json};

/// The object of a create or replace, decoded as the real server does.
pub(crate) fn parse_json(body: &[u8], res: &ResourceInfo) -> Result<Value, Status> {
    decode_object(body, res)
}

/// List items of built-in kinds carry no kind and apiVersion (custom ones do).
pub(crate) fn strip_kind(builtin: bool, mut o: Value) -> Value {
    if builtin && let Some(m) = o.as_object_mut() {
        m.remove("kind");
        m.remove("apiVersion");
    }
    o
}

/// A list's `metadata` as the real server writes it: a built-in list's
/// ListMeta in field order without an empty continue; a custom resource
/// list's (unstructured) keys sorted, with `continue` even when empty.
pub(crate) fn list_metadata(builtin: bool, list: &ObjectList) -> Map<String, Value> {
    if builtin {
        let mut md = typed_list_metadata(list);
        // Only typed lists carry the shard selector applied (an
        // unstructured list has no `SetShardInfo`).
        if let Some(selector) = &list.shard_info {
            md.insert("shardInfo".into(), json!({ "selector": selector }));
        }
        return md;
    }
    let mut md = Map::new();
    md.insert(
        "continue".into(),
        json!(list.continue_token.clone().unwrap_or_default()),
    );
    if let Some(n) = list.remaining_item_count {
        md.insert("remainingItemCount".into(), json!(n));
    }
    md.insert("resourceVersion".into(), json!(list.resource_version));
    md
}

/// The typed `metav1.ListMeta` of a list, in field order, its `continue`
/// and `remainingItemCount` left out when empty: what a
/// PartialObjectMetadataList of any resource copies from the list it
/// shows (`asPartialObjectMetadataList` in the real server's
/// `endpoints/handlers/response.go`: the version, continue and remaining
/// count, nothing else).
pub(crate) fn typed_list_metadata(list: &ObjectList) -> Map<String, Value> {
    let mut md = Map::new();
    md.insert("resourceVersion".into(), json!(list.resource_version));
    if let Some(c) = list.continue_token.as_ref().filter(|c| !c.is_empty()) {
        md.insert("continue".into(), json!(c));
    }
    if let Some(n) = list.remaining_item_count {
        md.insert("remainingItemCount".into(), json!(n));
    }
    md
}

/// The 400 of a custom resource created or replaced with a body of
/// another apiVersion than the path's (the real handlers'
/// `AcceptsGroupVersion`; the CRD handler's decoder reads any version of
/// the group, and the handler refuses all but its own).
pub(crate) fn check_api_version(res: &ResourceInfo, obj: &Value) -> Result<(), Status> {
    if res.custom.is_none() {
        return Ok(());
    }
    let given = obj
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if given == res.api_version() {
        return Ok(());
    }
    Err(Status::bad_request(format!(
        "the API version in the data ({given}) does not match the expected API version ({})",
        res.api_version()
    )))
}

/// The `Success` Status of a delete that removed the object.
pub(crate) fn success_status(res: &ResourceInfo, name: &str, obj: &Value) -> Value {
    let mut d = Map::new();
    d.insert("name".into(), json!(name));
    if !res.group.is_empty() {
        d.insert("group".into(), json!(res.group));
    }
    d.insert("kind".into(), json!(res.plural));
    if let Some(uid) = obj.pointer("/metadata/uid") {
        d.insert("uid".into(), uid.clone());
    }
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": d})
}
