//! In-place resize: the `resize` subresource's strategy
//! (`podResizeStrategy` in `pkg/registry/core/pod/strategy.go`): a write
//! there changes the containers' (and init containers') `resources` and
//! `resizePolicy` and the Pod-level `resources`, nothing else, and may only
//! change CPU and memory (`ValidatePodResize`).

use serde_json::{Map, Value};

use super::ephemeral::{is_static, keep_managed};
use super::qos::qos_class;
use super::validation::validate_pod;
use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::object::{items, items_at, text};

/// The container lists a resize may change, with their path's name.
const LISTS: [&str; 2] = ["containers", "initContainers"];

/// `dropNonResizeUpdates`: the stored Pod with the write's resources and
/// resize policies, container by container; a write that adds, removes,
/// renames or reorders containers is kept as it is, for the checks to
/// refuse.
pub(crate) fn prepare_resize_update(new: &mut Value, old: &Value) {
    let mut lists = Vec::new();
    for key in LISTS {
        let pointer = format!("/spec/{key}");
        let (written, stored) = (items_at(new, &pointer), items_at(old, &pointer));
        if written.len() != stored.len() {
            return;
        }
        if written.is_empty() {
            lists.push((key, None));
            continue;
        }
        let mut merged = stored.to_vec();
        for (before, after) in merged.iter_mut().zip(written) {
            if text(before, "name") != text(after, "name") {
                return;
            }
            for field in ["resources", "resizePolicy"] {
                set(before, field, after.get(field));
            }
        }
        lists.push((key, Some(merged)));
    }
    let pod_resources = new.pointer("/spec/resources").cloned();
    let managed = new.pointer("/metadata/managedFields").cloned();
    *new = old.clone();
    if let Some(spec) = new.get_mut("spec") {
        set(spec, "resources", pod_resources.as_ref());
        for (key, list) in lists {
            if let Some(list) = list {
                set(spec, key, Some(&Value::Array(list)));
            }
        }
    }
    keep_managed(new, managed);
}

/// Sets (or, given none, removes) `field` of an object.
fn set(object: &mut Value, field: &str, value: Option<&Value>) {
    if let Some(map) = object.as_object_mut() {
        match value.filter(|v| !v.is_null()) {
            Some(v) => map.insert(field.to_string(), v.clone()),
            None => map.remove(field),
        };
    }
}

/// `ValidatePodResize` past the metadata: the Pod's spec, not a static or
/// Windows Pod, the same QoS class, the same containers in the same order,
/// no request or limit removed, and nothing but CPU and memory changed.
pub(crate) fn validate_resize(new: &Value, old: &Value) -> ErrorList {
    let mut errors = validate_pod(new);
    let whole = Path::new([""]);
    if is_static(old) {
        return vec![FieldError::forbidden(
            &whole,
            "static pods cannot be resized",
        )];
    }
    if old.pointer("/spec/os/name").and_then(Value::as_str) == Some("windows") {
        return vec![FieldError::forbidden(
            &whole,
            "windows pods cannot be resized",
        )];
    }
    let spec_path = Path::new(["spec"]);
    let empty = Value::Null;
    let (new_spec, old_spec) = (
        new.get("spec").unwrap_or(&empty),
        old.get("spec").unwrap_or(&empty),
    );
    let stored_class = match old.pointer("/status/qosClass").and_then(Value::as_str) {
        Some(class) if !class.is_empty() => class,
        _ => qos_class(old_spec),
    };
    if stored_class != qos_class(new_spec) {
        let shown = new
            .pointer("/status/qosClass")
            .and_then(Value::as_str)
            .unwrap_or_default();
        errors.push(FieldError::invalid(
            &spec_path,
            shown,
            "Pod QOS Class may not change as a result of resizing",
        ));
    }
    let pod_level = |spec: &Value| {
        spec.get("resources").is_some_and(|r| {
            ["requests", "limits"].iter().any(|k| {
                r.get(*k)
                    .and_then(Value::as_object)
                    .is_some_and(|m| !m.is_empty())
            })
        })
    };
    let mut masked = new_spec.clone();
    if pod_level(old_spec) || pod_level(new_spec) {
        if old_spec.get("resources").is_some() && new_spec.get("resources").is_none() {
            errors.push(FieldError::forbidden(
                &spec_path.child("resources"),
                "pod-level resources cannot be removed",
            ));
            return errors;
        }
        if let Some(resources) = masked.get_mut("resources") {
            mask_cpu_memory(resources, old_spec.get("resources"));
        }
    }
    let ordering = container_ordering(new_spec, old_spec, &spec_path);
    if !ordering.is_empty() {
        errors.extend(ordering);
        return errors;
    }
    for key in LISTS {
        let (written, stored) = (items(new_spec, key), items(old_spec, key));
        for (i, (after, before)) in written.iter().zip(stored).enumerate() {
            let at = spec_path.child(key).index(i).child("resources");
            for part in ["requests", "limits"] {
                if removed(after, before, part) {
                    errors.push(FieldError::forbidden(
                        &at.child(part),
                        format!("resource {part} cannot be removed"),
                    ));
                }
            }
        }
    }
    for key in LISTS {
        let stored = items(old_spec, key);
        let Some(containers) = masked.get_mut(key).and_then(Value::as_array_mut) else {
            continue;
        };
        for (i, (container, before)) in containers.iter_mut().zip(stored).enumerate() {
            mask_cpu_memory_of(container, before);
            if container != before {
                let (at, words) = match key {
                    "containers" => (
                        spec_path.clone(),
                        "only cpu and memory resources are mutable",
                    ),
                    _ => (
                        spec_path.child(key).index(i),
                        "only cpu and memory resources for init or sidecar containers are mutable",
                    ),
                };
                errors.push(FieldError::forbidden(&at, words));
            }
        }
    }
    if errors.is_empty() && &masked != old_spec {
        errors.push(FieldError::forbidden(
            &spec_path,
            "only cpu and memory resources are mutable",
        ));
    }
    errors
}

/// `validatePodResizeContainerOrdering`: no container added, removed,
/// renamed or moved.
fn container_ordering(new_spec: &Value, old_spec: &Value, spec_path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    for key in LISTS {
        let (written, stored) = (items(new_spec, key), items(old_spec, key));
        if written.len() != stored.len() {
            errors.push(FieldError::forbidden(
                &spec_path.child(key),
                format!("{key} may not be added or removed on resize"),
            ));
            continue;
        }
        for (i, (after, before)) in written.iter().zip(stored).enumerate() {
            if text(after, "name") != text(before, "name") {
                errors.push(FieldError::forbidden(
                    &spec_path.child(key).index(i).child("name"),
                    format!("{key} may not be renamed or reordered on resize"),
                ));
            }
        }
    }
    errors
}

/// `resourcesRemoved`: a resource the stored container requests (or
/// limits) that the write leaves out.
fn removed(after: &Value, before: &Value, part: &str) -> bool {
    let pointer = format!("/resources/{part}");
    let now = after.pointer(&pointer).and_then(Value::as_object);
    let then = before.pointer(&pointer).and_then(Value::as_object);
    then.into_iter()
        .flat_map(Map::keys)
        .any(|k| !now.is_some_and(|n| n.contains_key(k)))
}

/// `dropCPUMemoryResourcesFromContainer`: a container's requests and
/// limits with CPU and memory as the stored container has them.
fn mask_cpu_memory_of(container: &mut Value, before: &Value) {
    if let Some(resources) = container.get_mut("resources") {
        mask_cpu_memory(resources, before.get("resources"));
    }
}

/// `dropCPUMemoryUpdates` on both lists of a `resources`.
fn mask_cpu_memory(resources: &mut Value, before: Option<&Value>) {
    for part in ["requests", "limits"] {
        let stored = before.and_then(|r| r.get(part)).and_then(Value::as_object);
        let Some(map) = resources.as_object_mut() else {
            return;
        };
        let mut list: Map<String, Value> = map
            .get(part)
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        for name in ["cpu", "memory"] {
            match stored.and_then(|s| s.get(name)) {
                Some(v) => list.insert(name.to_string(), v.clone()),
                None => list.remove(name),
            };
        }
        if list.is_empty() && stored.is_none() {
            map.remove(part);
        } else {
            map.insert(part.to_string(), Value::Object(list));
        }
    }
}
