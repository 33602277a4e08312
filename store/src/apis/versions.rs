//! Built-in kinds served in more than one version of one storage (the
//! autoscalers between autoscaling/v1 and v2), and what reading a body into
//! a kind's Go type does to its string maps.

use serde_json::Value;

use super::autoscaling;
use crate::resource::info::ResourceInfo;

/// A built-in object in `api_version`, when its kind is served in more
/// than one version of one storage and `o` is in another: an autoscaler
/// between autoscaling/v1 and v2. `None`: nothing to convert.
pub(crate) fn convert(res: &ResourceInfo, o: &Value, api_version: &str) -> Option<Value> {
    match (res.group.as_str(), res.kind.as_str()) {
        ("autoscaling", "HorizontalPodAutoscaler") if res.custom.is_none() => {
            autoscaling::conversion::convert(o, api_version)
        }
        _ => None,
    }
}

/// A stored built-in object as a read decodes it, when decoding defaults
/// something its stored form lacks (a Job's labels from its template).
pub(crate) fn decoded(res: &ResourceInfo, o: &Value) -> Option<Value> {
    match (res.group.as_str(), res.kind.as_str()) {
        ("batch", "Job") if res.custom.is_none() => super::batch::job_create::decoded(o),
        _ => None,
    }
}

/// The version a built-in kind served in several versions is stored in.
pub(crate) fn storage_version(res: &ResourceInfo) -> Option<&'static str> {
    match (res.group.as_str(), res.kind.as_str()) {
        ("autoscaling", "HorizontalPodAutoscaler") if res.custom.is_none() => {
            Some(autoscaling::conversion::STORAGE)
        }
        _ => None,
    }
}

/// A null value in a string map of a built-in kind (a ConfigMap's data,
/// any object's labels and annotations) read into its Go type: `""`, as
/// the real server stores an applied `y: null`.
pub(crate) fn typed_nulls(res: &ResourceInfo, obj: &mut Value) {
    if res.custom.is_some() {
        return;
    }
    let mut maps = vec!["/metadata/labels", "/metadata/annotations"];
    if res.group.is_empty() && res.kind == "ConfigMap" {
        maps.push("/data");
    }
    for pointer in maps {
        if let Some(map) = obj.pointer_mut(pointer).and_then(Value::as_object_mut) {
            for value in map.values_mut().filter(|v| v.is_null()) {
                *value = Value::String(String::new());
            }
        }
    }
}
