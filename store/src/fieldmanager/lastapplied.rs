//! kubectl's client-side apply annotation under server-side apply, as the
//! real field manager keeps it for the manager `kubectl` (managedfields'
//! `internal/lastappliedmanager.go` and `internal/lastappliedupdater.go`):
//! the conflicts an object's last client-side apply allows a first
//! server-side apply to take over, and the annotation rewritten to what
//! was applied.

use serde_json::Value;

use super::compare::compare;
use super::fieldpath::FieldSet;
use super::managed::{ownable, root_type};
use super::set::field_set;
use crate::go::json::encode::go_json;
use crate::resource::info::ResourceInfo;

/// The annotation `kubectl apply` (client-side) writes.
pub(crate) const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The manager whose applies read and write the annotation; another
/// manager opts out.
pub(crate) const KUBECTL: &str = "kubectl";

/// The configuration `obj`'s annotation holds, when it has a non-empty
/// one that is a JSON object.
pub(crate) fn last_applied(obj: &Value) -> Option<Value> {
    let text = obj
        .pointer("/metadata/annotations")?
        .get(LAST_APPLIED)?
        .as_str()
        .filter(|t| !t.is_empty())?;
    serde_json::from_str::<Value>(text)
        .ok()
        .filter(Value::is_object)
}

/// The fields of `live` an apply by kubectl may take from their owners
/// without force (`allowedConflictsFromLastApplied`): those the last
/// client-side apply (`applied`, already typed by the caller) set to the
/// value they still hold. None when that configuration is of another
/// version than the object's: the conflicts stand.
pub(crate) fn allowed_conflicts(
    res: &ResourceInfo,
    live: &Value,
    applied: &Value,
) -> Option<FieldSet> {
    if applied.get("apiVersion").and_then(Value::as_str) != Some(res.api_version().as_str()) {
        return None;
    }
    let ty = root_type(res);
    let applied = ownable(res, applied, None);
    let changes = compare(Some(&applied), Some(&ownable(res, live, None)), ty);
    let mut allowed = field_set(&applied, ty);
    for changed in [changes.modified, changes.added, changes.removed] {
        allowed.retain(|p| !changed.contains(p));
    }
    Some(allowed)
}

/// After an apply by kubectl (`manager`), an object (`result`) that has
/// the annotation gets it rewritten to the configuration applied, without
/// the annotation itself, as Go encodes an unstructured object
/// (`buildLastApplied`: keys sorted, a newline at the end).
pub(crate) fn update_last_applied(manager: &str, result: &mut Value, config: &Value) {
    if manager != KUBECTL
        || result
            .pointer(&format!(
                "/metadata/annotations/{}",
                LAST_APPLIED.replace('/', "~1")
            ))
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
    {
        return;
    }
    let mut applied = config.clone();
    if let Some(md) = applied.get_mut("metadata").and_then(Value::as_object_mut) {
        // `SetAnnotations` of what `GetAnnotations` read: a map without
        // the annotation (empty, if it held nothing else), or none.
        match md.get_mut("annotations").and_then(Value::as_object_mut) {
            Some(annotations) => {
                annotations.remove(LAST_APPLIED);
            }
            None => {
                md.remove("annotations");
            }
        }
    }
    let text = format!("{}\n", go_json(&applied));
    if let Some(annotations) = result
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        annotations.insert(LAST_APPLIED.into(), Value::String(text));
    }
}
