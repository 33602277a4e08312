//! PersistentVolumeClaim (v1): quantities that decode (else `400`),
//! `volumeMode: Filesystem` (`SetDefaults_PersistentVolumeClaimSpec`),
//! `Pending` and the `kubernetes.io/pvc-protection` finalizer on create
//! (the phase default, and the `StorageObjectInUseProtection` admission
//! plugin), access modes and a storage request required, and a spec that
//! does not change but for a bound claim's storage request
//! (`ValidatePersistentVolumeClaim`, `ValidatePersistentVolumeClaimUpdate`).
//! The "spec is immutable" refusal ends with the diff of the two specs
//! (`diff.Diff` of the internal type, [`internal`]).
//!
//! Left out: `dataSource` backward-compatibility dropping, the beta
//! storage-class annotation upgrade path.

mod internal;

use serde_json::{Value, json};

use internal::go_internal_claim_spec;

use super::finalizers::add_finalizer;
use super::resources::{default_list, list_decode_error, quantity, value_errors};
use crate::apis::strategy::Rules;
use crate::go::difflib::unified_diff;
use crate::go::json::encode::indent;
use crate::machinery::field::{
    ErrorList, ErrorType, FieldError, Path, error_with_written_value, immutable,
};
use crate::machinery::labels::validate_label_selector;
use crate::machinery::names::{is_dns1123_subdomain, name_is_dns_label, name_is_dns_subdomain};

pub(crate) static RULES: Rules = Rules {
    name: name_is_dns_subdomain,
    default,
    validate,
    validate_update,
    validate_status: None,
};

const LISTS: [(&str, &str); 3] = [
    (
        "/spec/resources/requests",
        "VolumeResourceRequirements.spec.resources.requests",
    ),
    (
        "/spec/resources/limits",
        "VolumeResourceRequirements.spec.resources.limits",
    ),
    (
        "/status/capacity",
        "PersistentVolumeClaimStatus.status.capacity",
    ),
];

/// Why the real server cannot decode this claim, if it cannot.
pub(crate) fn decode(obj: &Value) -> Option<String> {
    LISTS
        .iter()
        .find_map(|(pointer, field)| list_decode_error(obj, pointer, field))
}

fn default(obj: &mut Value) {
    if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut)
        && spec.get("volumeMode").is_none_or(Value::is_null)
    {
        spec.insert("volumeMode".into(), json!("Filesystem"));
    }
    for (pointer, _) in LISTS {
        default_list(obj, pointer);
    }
    // Go writes a reference's `apiGroup` even when it has none.
    for key in ["dataSource", "dataSourceRef"] {
        if let Some(reference) = obj
            .get_mut("spec")
            .and_then(|s| s.get_mut(key))
            .and_then(Value::as_object_mut)
        {
            reference.entry("apiGroup").or_insert(Value::Null);
        }
    }
}

/// `dataSourceIsPvcOrSnapshot`.
fn pvc_or_snapshot(source: &Value) -> bool {
    let kind = source
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let group = source
        .get("apiGroup")
        .and_then(Value::as_str)
        .unwrap_or_default();
    (kind == "PersistentVolumeClaim" && group.is_empty())
        || (kind == "VolumeSnapshot" && group == "snapshot.storage.k8s.io")
}

/// `EnforceDataSourceBackwardsCompatibility` (a `dataSource` other than a
/// claim or a snapshot is dropped, unless `dataSourceRef` is given or the
/// old claim had one) and `NormalizeDataSources` (each of `dataSource` and
/// `dataSourceRef` filled from the other).
fn data_sources(obj: &mut Value, old: Option<&Value>) {
    let in_use = old.is_some_and(|o| {
        ["/spec/dataSource", "/spec/dataSourceRef"]
            .iter()
            .any(|p| o.pointer(p).is_some_and(|v| !v.is_null()))
    });
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let present = |spec: &serde_json::Map<String, Value>, key: &str| {
        spec.get(key).is_some_and(|v| !v.is_null())
    };
    if !in_use
        && !present(spec, "dataSourceRef")
        && spec.get("dataSource").is_some_and(|s| !pvc_or_snapshot(s))
    {
        spec.remove("dataSource");
    }
    let copy = |from: &Value| {
        let mut to = serde_json::Map::new();
        to.insert(
            "apiGroup".into(),
            from.get("apiGroup").cloned().unwrap_or(Value::Null),
        );
        for key in ["kind", "name"] {
            to.insert(key.into(), from.get(key).cloned().unwrap_or(json!("")));
        }
        Value::Object(to)
    };
    match (present(spec, "dataSource"), present(spec, "dataSourceRef")) {
        (true, false) => {
            let source = copy(&spec["dataSource"]);
            spec.insert("dataSourceRef".into(), source);
        }
        (false, true) => {
            let namespace = spec["dataSourceRef"]
                .get("namespace")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if namespace.is_empty() {
                let source = copy(&spec["dataSourceRef"]);
                spec.insert("dataSource".into(), source);
            }
        }
        _ => {}
    }
}

/// `PrepareForUpdate`: the data sources, as on create.
pub(crate) fn prepare_update(new: &mut Value, old: &Value) {
    data_sources(new, Some(old));
}

/// `PrepareForCreate` (the status cleared, then `Pending` by default, the
/// data sources) and the `StorageObjectInUseProtection` admission plugin's
/// finalizer.
pub(crate) fn prepare_create(obj: &mut Value) {
    data_sources(obj, None);
    let Some(claim) = obj.as_object_mut() else {
        return;
    };
    claim.insert("status".into(), json!({"phase": "Pending"}));
    add_finalizer(obj, "kubernetes.io/pvc-protection");
}

const ACCESS_MODES: [&str; 4] = [
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];

fn strings(values: &[&str]) -> Vec<String> {
    values.iter().map(|s| s.to_string()).collect()
}

/// `ValidatePersistentVolumeClaimSpec`.
fn validate(obj: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let spec = Path::new(["spec"]);
    let modes: Vec<&str> = obj
        .pointer("/spec/accessModes")
        .and_then(Value::as_array)
        .map(|m| m.iter().map(|v| v.as_str().unwrap_or_default()).collect())
        .unwrap_or_default();
    if modes.is_empty() {
        errors.push(FieldError::required(
            &spec.child("accessModes"),
            "at least 1 access mode is required",
        ));
    }
    if let Some(selector) = obj.pointer("/spec/selector").filter(|s| !s.is_null()) {
        errors.extend(validate_label_selector(
            Some(selector),
            &spec.child("selector"),
        ));
    }
    let (mut once_pod, mut other) = (false, false);
    for mode in &modes {
        if !ACCESS_MODES.contains(mode) {
            errors.push(FieldError::not_supported(
                &spec.child("accessModes"),
                *mode,
                &strings(&ACCESS_MODES),
            ));
        } else if *mode == "ReadWriteOncePod" {
            once_pod = true;
        } else {
            other = true;
        }
    }
    if once_pod && other {
        errors.push(FieldError::forbidden(
            &spec.child("accessModes"),
            "may not use ReadWriteOncePod with other access modes",
        ));
    }
    let storage_path = spec.child("resources").key("storage");
    match obj.pointer("/spec/resources/requests/storage") {
        None => errors.push(FieldError::required(&storage_path, "")),
        Some(value) => {
            let size = quantity(value);
            if size.is_negative() || size.is_zero() {
                errors.push(FieldError::invalid(
                    &storage_path,
                    size.text().as_str(),
                    "must be greater than zero",
                ));
            } else {
                errors.extend(value_errors("storage", &size, &storage_path));
            }
        }
    }
    for key in ["storageClassName", "volumeAttributesClassName"] {
        if let Some(class) = obj.pointer(&format!("/spec/{key}")).and_then(Value::as_str)
            && !class.is_empty()
        {
            for message in is_dns1123_subdomain(class) {
                errors.push(FieldError::invalid(&spec.child(key), class, message));
            }
        }
    }
    errors.extend(data_source_errors(obj));
    if let Some(mode) = obj.pointer("/spec/volumeMode").and_then(Value::as_str)
        && !["Block", "Filesystem"].contains(&mode)
    {
        errors.push(FieldError::not_supported(
            &spec.child("volumeMode"),
            mode,
            &strings(&["Block", "Filesystem"]),
        ));
    }
    errors
}

/// `validateDataSource`, `validateDataSourceRef`, and the two in step.
fn data_source_errors(obj: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let spec = Path::new(["spec"]);
    let source = obj.pointer("/spec/dataSource").filter(|v| !v.is_null());
    let reference = obj.pointer("/spec/dataSourceRef").filter(|v| !v.is_null());
    for (value, key) in [(source, "dataSource"), (reference, "dataSourceRef")] {
        let Some(value) = value else {
            continue;
        };
        let at = spec.child(key);
        let text = |k: &str| value.get(k).and_then(Value::as_str).unwrap_or_default();
        if text("name").is_empty() {
            errors.push(FieldError::required(&at.child("name"), ""));
        }
        if text("kind").is_empty() {
            errors.push(FieldError::required(&at.child("kind"), ""));
        }
        let group = text("apiGroup");
        if group.is_empty() && text("kind") != "PersistentVolumeClaim" {
            errors.push(FieldError::invalid(
                &at,
                text("kind"),
                "must be 'PersistentVolumeClaim' when referencing the default apiGroup",
            ));
        }
        if !group.is_empty() {
            for message in is_dns1123_subdomain(group) {
                errors.push(FieldError::invalid(&at.child("apiGroup"), group, message));
            }
        }
        if key == "dataSourceRef" && !text("namespace").is_empty() {
            for message in name_is_dns_label(text("namespace"), false) {
                errors.push(FieldError::invalid(
                    &at.child("namespace"),
                    text("namespace"),
                    message,
                ));
            }
        }
    }
    let namespaced = reference
        .and_then(|r| r.get("namespace"))
        .and_then(Value::as_str)
        .is_some_and(|n| !n.is_empty());
    let same = |a: &Value, b: &Value| {
        let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        text(a, "apiGroup") == text(b, "apiGroup")
            && ["kind", "name"]
                .iter()
                .all(|k| text(a, k).unwrap_or_default() == text(b, k).unwrap_or_default())
    };
    if let (Some(source), Some(reference)) = (source, reference) {
        if namespaced {
            errors.push(error_with_written_value(
                ErrorType::Invalid,
                &spec,
                "{}",
                "may not be specified when dataSourceRef.namespace is specified",
            ));
        } else if !same(source, reference) {
            errors.push(error_with_written_value(
                ErrorType::Invalid,
                &spec,
                "{}",
                "must match dataSourceRef",
            ));
        }
    }
    errors
}

/// `ValidatePersistentVolumeClaimUpdate`: the spec stays, but for the
/// volume's name once, and a bound claim's storage request.
fn validate_update(new: &Value, old: &Value) -> ErrorList {
    let mut errors = validate(new);
    let mut new_spec = new.get("spec").cloned().unwrap_or_else(|| json!({}));
    let mut old_spec = old.get("spec").cloned().unwrap_or_else(|| json!({}));
    let volume = |s: &Value| {
        s.get("volumeName")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    if volume(&old_spec).is_empty()
        && let Some(spec) = old_spec.as_object_mut()
    {
        match new_spec.get("volumeName") {
            Some(name) => spec.insert("volumeName".into(), name.clone()),
            None => spec.remove("volumeName"),
        };
    }
    if new.pointer("/status/phase").and_then(Value::as_str) == Some("Bound") {
        let old_storage = old.pointer("/spec/resources/requests/storage").cloned();
        if let Some(requests) = new_spec
            .pointer_mut("/resources/requests")
            .and_then(Value::as_object_mut)
        {
            match old_storage {
                Some(size) => requests.insert("storage".into(), size),
                None => requests.remove("storage"),
            };
        }
        let class = old_spec.get("volumeAttributesClassName").cloned();
        if let Some(spec) = new_spec.as_object_mut() {
            match class {
                Some(class) => spec.insert("volumeAttributesClassName".into(), class),
                None => spec.remove("volumeAttributesClassName"),
            };
        }
    }
    if new_spec != old_spec {
        // `diff.Diff(oldPvcClone.Spec, newPvcClone.Spec)`.
        let written = |spec: &Value| indent(&go_internal_claim_spec(spec));
        let diff = unified_diff(&written(&old_spec), &written(&new_spec));
        errors.push(FieldError::forbidden(
            &Path::new(["spec"]),
            format!("spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n{diff}"),
        ));
    }
    let size = |o: &Value, p: &str| o.pointer(p).map(quantity);
    if let (Some(new_size), Some(capacity)) = (
        size(new, "/spec/resources/requests/storage"),
        size(old, "/status/capacity/storage"),
    ) && let Some(old_size) = size(old, "/spec/resources/requests/storage")
        && new_size < old_size
        && new_size <= capacity
    {
        errors.push(FieldError::forbidden(
            &Path::new(["spec", "resources", "requests", "storage"]),
            "field can not be less than status.capacity",
        ));
    }
    if new.pointer("/spec/volumeMode") != old.pointer("/spec/volumeMode") {
        errors.extend(immutable(
            new.pointer("/spec/volumeMode"),
            old.pointer("/spec/volumeMode"),
            &Path::new(["volumeMode"]),
        ));
    }
    errors
}
