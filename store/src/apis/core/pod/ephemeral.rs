//! Ephemeral containers (`kubectl debug`): their checks in a Pod's spec
//! (`validateEphemeralContainers`) and the `ephemeralcontainers`
//! subresource's strategy (`podEphemeralContainersStrategy` in
//! `pkg/registry/core/pod/strategy.go`): a write there changes the
//! ephemeral containers only, may add one and never change or remove one
//! (`ValidatePodEphemeralContainersUpdate`).

use std::collections::BTreeSet;

use serde_json::Value;

use super::containers::{Volumes, validate_common};
use super::internal::go_ephemeral_container;
use super::validation::validate_pod;
use crate::go::difflib::unified_diff;
use crate::go::json::encode::indent;
use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::object::{items_at, text};

/// The fields of a container an ephemeral one may not set, in the Go
/// struct's order (what `allowedEphemeralContainerFields` leaves out).
const NOT_ALLOWED: &[&str] = &[
    "ports",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "restartPolicyRules",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
];

/// `validateEphemeralContainers`: each ephemeral container as a container,
/// named uniquely across every kind of container, targeting a container
/// the Pod has, and setting none of the fields only a workload's
/// containers may.
pub(crate) fn validate_ephemeral_containers(
    spec: &Value,
    volumes: &Volumes,
    path: &Path,
) -> ErrorList {
    let mut errors = ErrorList::new();
    let others: BTreeSet<&str> = ["containers", "initContainers"]
        .iter()
        .flat_map(|k| spec.get(*k).and_then(Value::as_array).into_iter().flatten())
        .map(|c| text(c, "name"))
        .collect();
    let mut names = others.clone();
    let list = spec.get("ephemeralContainers").and_then(Value::as_array);
    for (i, container) in list.into_iter().flatten().enumerate() {
        let at = path.index(i);
        errors.extend(validate_common(container, volumes, &at));
        let name = text(container, "name");
        if !names.insert(name) {
            errors.push(FieldError::duplicate(&at.child("name"), name));
        }
        let target = text(container, "targetContainerName");
        if !target.is_empty() && !others.contains(target) {
            errors.push(FieldError::not_found(
                &at.child("targetContainerName"),
                target,
            ));
        }
        for field in NOT_ALLOWED {
            if container.get(*field).is_some_and(|v| !is_zero(v)) {
                errors.push(FieldError::forbidden(
                    &at.child(field),
                    "cannot be set for an Ephemeral Container",
                ));
            }
        }
        let mounts = container.get("volumeMounts").and_then(Value::as_array);
        for (m, mount) in mounts.into_iter().flatten().enumerate() {
            for key in ["subPath", "subPathExpr"] {
                if !text(mount, key).is_empty() {
                    errors.push(FieldError::forbidden(
                        &at.child("volumeMounts").index(m).child(key),
                        "cannot be set for an Ephemeral Container",
                    ));
                }
            }
        }
    }
    errors
}

/// Whether a field holds its Go zero value (an empty struct, list or
/// string counts as unset).
fn is_zero(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Object(map) => map.values().all(is_zero),
        Value::Array(items) => items.is_empty(),
        Value::String(s) => s.is_empty(),
        _ => false,
    }
}

/// `dropNonEphemeralContainerUpdates`: the stored Pod with the write's
/// ephemeral containers, nothing else of it (`ResetObjectMetaForStatus`
/// keeps the stored metadata too).
pub(crate) fn prepare_ephemeral_update(new: &mut Value, old: &Value) {
    let containers = new
        .pointer("/spec/ephemeralContainers")
        .filter(|v| !v.is_null())
        .cloned();
    let managed = new.pointer("/metadata/managedFields").cloned();
    *new = old.clone();
    if let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut) {
        match containers {
            Some(list) => spec.insert("ephemeralContainers".into(), list),
            None => spec.remove("ephemeralContainers"),
        };
    }
    keep_managed(new, managed);
}

/// A static Pod (its kubelet's mirror), which no subresource changes.
pub(super) fn is_static(pod: &Value) -> bool {
    pod.pointer("/metadata/annotations/kubernetes.io~1config.mirror")
        .is_some()
}

/// Puts the tracked managedFields back on a Pod a subresource strategy
/// rebuilt from the stored one.
pub(super) fn keep_managed(pod: &mut Value, managed: Option<Value>) {
    if let Some(meta) = pod.get_mut("metadata").and_then(Value::as_object_mut) {
        match managed {
            Some(entries) => meta.insert("managedFields".into(), entries),
            None => meta.remove("managedFields"),
        };
    }
}

/// `ValidatePodEphemeralContainersUpdate` past the metadata: the Pod's
/// spec, not a static Pod, and every ephemeral container the stored Pod
/// has still there, unchanged (the refusal ends with the diff of the
/// two).
pub(crate) fn validate_ephemeral_update(new: &Value, old: &Value) -> ErrorList {
    let mut errors = validate_pod(new);
    if is_static(old) {
        return vec![FieldError::forbidden(
            &Path::new([""]),
            "static pods do not support ephemeral containers",
        )];
    }
    let path = Path::new(["spec", "ephemeralContainers"]);
    let written = items_at(new, "/spec/ephemeralContainers");
    for before in items_at(old, "/spec/ephemeralContainers") {
        let name = text(before, "name");
        let Some(after) = written.iter().find(|c| text(c, "name") == name) else {
            errors.push(FieldError::forbidden(
                &path,
                format!("existing ephemeral containers {name:?} may not be removed\n"),
            ));
            continue;
        };
        let (was, is) = (
            go_ephemeral_container(before),
            go_ephemeral_container(after),
        );
        if was != is {
            let diff = unified_diff(&indent(&was), &indent(&is));
            errors.push(FieldError::forbidden(
                &path,
                format!("existing ephemeral containers {name:?} may not be changed\n{diff}"),
            ));
        }
    }
    errors
}
