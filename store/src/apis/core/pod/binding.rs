//! Binding a Pod to a node (the scheduler's write, `BindingREST` in
//! `pkg/registry/core/pod/storage/storage.go`): the Binding's checks
//! (`ValidatePodBinding`) and what it does to the stored Pod
//! (`setPodNodeAndMetadata`): the node named, the Binding's annotations
//! and labels merged in, the `PodScheduled` condition true.

use serde_json::{Map, Value, json};

use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::object::{is_deleting, now, text, text_at};

/// `ValidatePodBinding`: a target that is a node (its kind `Node` or
/// none) and has a name.
pub(crate) fn validate_binding(binding: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let kind = text_at(binding, "/target/kind");
    if !kind.is_empty() && kind != "Node" {
        errors.push(FieldError::not_supported(
            &Path::new(["target", "kind"]),
            kind,
            &["Node".to_string(), "<empty>".to_string()],
        ));
    }
    if text_at(binding, "/target/name").is_empty() {
        errors.push(FieldError::required(&Path::new(["target", "name"]), ""));
    }
    errors
}

/// Binds `pod` to `node`, or says why not (a Pod being deleted, one
/// already on a node, one with scheduling gates), in the words the
/// conflict answer carries.
pub(crate) fn bind(
    pod: &mut Value,
    node: &str,
    annotations: &Value,
    labels: &Value,
) -> Result<(), String> {
    let name = text_at(pod, "/metadata/name").to_string();
    if is_deleting(pod) {
        return Err(format!(
            "pod {name} is being deleted, cannot be assigned to a host"
        ));
    }
    let assigned = text_at(pod, "/spec/nodeName");
    if !assigned.is_empty() {
        return Err(format!(
            "pod {name} is already assigned to node {assigned:?}"
        ));
    }
    if pod
        .pointer("/spec/schedulingGates")
        .and_then(Value::as_array)
        .is_some_and(|g| !g.is_empty())
    {
        return Err(format!("pod {name} has non-empty .spec.schedulingGates"));
    }
    let Some(object) = pod.as_object_mut() else {
        return Ok(());
    };
    let spec = object.entry("spec").or_insert_with(|| json!({}));
    spec["nodeName"] = json!(node);
    let status = object.entry("status").or_insert_with(|| json!({}));
    if let Some(s) = status.as_object_mut() {
        s.remove("nominatedNodeName");
    }
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        for (key, given) in [("annotations", annotations), ("labels", labels)] {
            let Some(given) = given.as_object().filter(|m| !m.is_empty()) else {
                continue;
            };
            let merged = meta.entry(key).or_insert_with(|| Value::Object(Map::new()));
            if let Some(m) = merged.as_object_mut() {
                for (k, v) in given {
                    m.insert(k.clone(), v.clone());
                }
            }
        }
    }
    set_condition(
        pod,
        json!({"type": "PodScheduled", "status": "True", "lastProbeTime": null,
            "lastTransitionTime": now()}),
    );
    Ok(())
}

/// `UpdatePodCondition`: the condition of its type replaced (its
/// transition time kept while its status stays) or added.
pub(crate) fn set_condition(pod: &mut Value, mut condition: Value) {
    let Some(obj) = pod.as_object_mut() else {
        return;
    };
    let status = obj.entry("status").or_insert_with(|| json!({}));
    if !status.is_object() {
        *status = json!({});
    }
    let conditions = &mut status["conditions"];
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    let Some(list) = conditions.as_array_mut() else {
        return;
    };
    let kind = text(&condition, "type").to_string();
    match list.iter_mut().find(|c| text(c, "type") == kind) {
        Some(old) => {
            if old["status"] == condition["status"] {
                condition["lastTransitionTime"] = old["lastTransitionTime"].clone();
            }
            *old = condition;
        }
        None => list.push(condition),
    }
}
