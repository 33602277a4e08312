//! `ValidatePodSpec` and `ValidatePodTemplateSpec`: the checks of a
//! PodSpec every workload's template shares with a Pod (its containers'
//! in `containers.rs`).

use serde_json::{Value, json};

use super::containers::{Volumes, dns_label, validate_containers, validate_init_containers};
use super::defaults::VOLUME_SOURCES;
use super::ephemeral::validate_ephemeral_containers;
use super::scheduling::{validate_affinity, validate_spread, validate_tolerations};
use super::security::validate_pod_security;
use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::names::is_dns1123_subdomain;
use crate::machinery::object::text;
use crate::machinery::objectmeta::{validate_annotations, validate_labels};

/// `ValidatePodCreate`, as far as the spec goes.
pub(crate) fn validate_pod(pod: &Value) -> ErrorList {
    let spec = pod.get("spec").unwrap_or(&Value::Null);
    validate_pod_spec(spec, &Path::new(["spec"]))
}

/// `ValidatePodSpec` of `spec` at `path`.
pub(crate) fn validate_pod_spec(spec: &Value, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    if spec
        .get("terminationGracePeriodSeconds")
        .is_none_or(Value::is_null)
    {
        errors.push(FieldError::required(
            &path.child("terminationGracePeriodSeconds"),
            "",
        ));
    }
    let (volumes, volume_errors) = validate_volumes(spec, &path.child("volumes"));
    errors.extend(volume_errors);
    errors.extend(validate_containers(
        spec,
        &volumes,
        &path.child("containers"),
    ));
    errors.extend(validate_init_containers(
        spec,
        &volumes,
        &path.child("initContainers"),
    ));
    errors.extend(validate_ephemeral_containers(
        spec,
        &volumes,
        &path.child("ephemeralContainers"),
    ));
    errors.extend(one_of(
        text(spec, "restartPolicy"),
        &["Always", "OnFailure", "Never"],
        &path.child("restartPolicy"),
    ));
    errors.extend(one_of(
        text(spec, "dnsPolicy"),
        &["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"],
        &path.child("dnsPolicy"),
    ));
    if let Some(selector) = spec.get("nodeSelector").filter(|s| s.is_object()) {
        errors.extend(validate_labels(
            &json!({"labels": selector}),
            &path.child("nodeSelector"),
        ));
    }
    for key in ["serviceAccountName", "nodeName", "priorityClassName"] {
        let value = text(spec, key);
        if !value.is_empty() {
            for message in is_dns1123_subdomain(value) {
                errors.push(FieldError::invalid(&path.child(key), value, message));
            }
        }
    }
    if let Some(deadline) = spec.get("activeDeadlineSeconds").and_then(Value::as_i64)
        && !(1..=i64::from(i32::MAX)).contains(&deadline)
    {
        errors.push(FieldError::invalid(
            &path.child("activeDeadlineSeconds"),
            deadline,
            "must be between 1 and 2147483647, inclusive",
        ));
    }
    for key in ["hostname", "subdomain"] {
        let value = text(spec, key);
        if !value.is_empty() {
            errors.extend(dns_label(value, &path.child(key)));
        }
    }
    errors.extend(validate_pod_security(spec, path));
    errors.extend(validate_affinity(spec, &path.child("affinity")));
    errors.extend(validate_tolerations(spec, &path.child("tolerations")));
    errors.extend(validate_spread(
        spec,
        &path.child("topologySpreadConstraints"),
    ));
    if let Some(policy) = spec.get("preemptionPolicy").and_then(Value::as_str) {
        errors.extend(one_of(
            policy,
            &["PreemptLowerPriority", "Never"],
            &path.child("preemptionPolicy"),
        ));
    }
    errors
}

/// A required enumeration: `Required` when empty, `NotSupported` outside
/// `allowed` (listed in the real server's order).
pub(crate) fn one_of(value: &str, allowed: &[&str], path: &Path) -> ErrorList {
    if value.is_empty() {
        return vec![FieldError::required(path, "")];
    }
    if allowed.contains(&value) {
        return ErrorList::new();
    }
    let allowed: Vec<String> = allowed.iter().map(|s| s.to_string()).collect();
    vec![FieldError::not_supported(path, value, &allowed)]
}

/// `ValidateVolumes`: names (DNS labels, distinct), one source each; the
/// names of the valid ones.
fn validate_volumes(spec: &Value, path: &Path) -> (Volumes, ErrorList) {
    let mut names = Volumes::new();
    let mut errors = ErrorList::new();
    for (i, volume) in spec
        .get("volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = path.index(i);
        let mut own = validate_volume_source(volume, &at);
        let name = text(volume, "name");
        if name.is_empty() {
            own.push(FieldError::required(&at.child("name"), ""));
        } else {
            own.extend(dns_label(name, &at.child("name")));
        }
        if names.contains(name) {
            own.push(FieldError::duplicate(&at.child("name"), name));
        }
        if own.is_empty() {
            names.insert(name.to_string());
        } else {
            errors.extend(own);
        }
    }
    (names, errors)
}

/// `validateVolumeSource`, as far as one source and its required name.
fn validate_volume_source(volume: &Value, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let mut count = 0;
    for source in VOLUME_SOURCES {
        let Some(value) = volume.get(source).filter(|v| !v.is_null()) else {
            continue;
        };
        if count > 0 {
            errors.push(FieldError::forbidden(
                &path.child(source),
                "may not specify more than 1 volume type",
            ));
            continue;
        }
        count += 1;
        let at = path.child(source);
        match source {
            "secret" | "configMap" => {
                let name_key = if source == "secret" {
                    "secretName"
                } else {
                    "name"
                };
                if text(value, name_key).is_empty() {
                    errors.push(FieldError::required(&at.child(name_key), ""));
                }
                errors.extend(file_mode(value, "defaultMode", &at));
                let items = value.get("items").and_then(Value::as_array);
                for (i, item) in items.into_iter().flatten().enumerate() {
                    let item_path = at.child("items").index(i);
                    if text(item, "key").is_empty() {
                        errors.push(FieldError::required(&item_path.child("key"), ""));
                    }
                    errors.extend(file_path(item, &item_path));
                    errors.extend(file_mode(item, "mode", &item_path));
                }
            }
            "downwardAPI" => {
                errors.extend(file_mode(value, "defaultMode", &at));
                let items = value.get("items").and_then(Value::as_array);
                for item in items.into_iter().flatten() {
                    errors.extend(file_path(item, &at));
                    let field_ref = item.get("fieldRef").filter(|f| !f.is_null());
                    let resource_ref = item.get("resourceFieldRef").filter(|r| !r.is_null());
                    match (field_ref, resource_ref) {
                        (Some(_), Some(_)) => errors.push(FieldError::invalid(
                            &at,
                            "resource",
                            "fieldRef and resourceFieldRef can not be specified simultaneously",
                        )),
                        (None, None) => errors.push(FieldError::required(
                            &at,
                            "one of fieldRef and resourceFieldRef is required",
                        )),
                        _ => {}
                    }
                    errors.extend(file_mode(item, "mode", &at));
                }
            }
            "projected" => errors.extend(file_mode(value, "defaultMode", &at)),
            "persistentVolumeClaim" if text(value, "claimName").is_empty() => {
                errors.push(FieldError::required(&at.child("claimName"), ""));
            }
            "hostPath" => {
                let host_path = text(value, "path");
                if host_path.is_empty() {
                    errors.push(FieldError::required(&at.child("path"), ""));
                } else {
                    errors.extend(no_backsteps(host_path, &at.child("path")));
                    let kind = value.get("type").and_then(Value::as_str);
                    if let Some(kind) = kind.filter(|k| !HOST_PATH_TYPES.contains(k)) {
                        errors.push(FieldError::not_supported(
                            &at.child("type"),
                            kind,
                            &HOST_PATH_TYPES.map(str::to_string),
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    if count == 0 {
        errors.push(FieldError::required(path, "must specify a volume type"));
    }
    errors
}

/// `ValidatePodTemplateSpec` of `template` at `path`: its labels and
/// annotations, its spec, no ephemeral containers.
pub(crate) fn validate_template(template: &Value, path: &Path) -> ErrorList {
    let empty = json!({});
    let metadata = template.get("metadata").unwrap_or(&empty);
    let mut errors = validate_labels(metadata, &path.child("labels"));
    errors.extend(validate_annotations(metadata, &path.child("annotations")));
    let spec = template.get("spec").unwrap_or(&empty);
    errors.extend(validate_pod_spec(spec, &path.child("spec")));
    if spec
        .get("ephemeralContainers")
        .and_then(Value::as_array)
        .is_some_and(|c| !c.is_empty())
    {
        errors.push(FieldError::forbidden(
            &path.child("spec").child("ephemeralContainers"),
            "ephemeral containers not allowed in pod template",
        ));
    }
    errors
}

/// The host path types, as the real server lists them (sorted).
const HOST_PATH_TYPES: [&str; 8] = [
    "",
    "BlockDevice",
    "CharDevice",
    "Directory",
    "DirectoryOrCreate",
    "File",
    "FileOrCreate",
    "Socket",
];

/// A file mode from 0 to 0777.
fn file_mode(value: &Value, key: &str, path: &Path) -> ErrorList {
    match value.get(key).and_then(Value::as_i64) {
        Some(mode) if !(0..=0o777).contains(&mode) => vec![FieldError::invalid(
            &path.child(key),
            mode,
            "must be a number between 0 and 0777 (octal), both inclusive",
        )],
        _ => ErrorList::new(),
    }
}

/// `validatePathNoBacksteps`.
fn no_backsteps(target: &str, path: &Path) -> ErrorList {
    if target.split('/').any(|part| part == "..") {
        return vec![FieldError::invalid(path, target, "must not contain '..'")];
    }
    ErrorList::new()
}

/// An item's `path`: required, relative, without `..` (`ValidateLocalNonReservedPath`).
fn file_path(item: &Value, item_path: &Path) -> ErrorList {
    let target = text(item, "path");
    let at = item_path.child("path");
    let mut errors = ErrorList::new();
    if target.is_empty() {
        errors.push(FieldError::required(&at, ""));
    }
    if target.starts_with('/') {
        errors.push(FieldError::invalid(&at, target, "must be a relative path"));
    }
    errors.extend(no_backsteps(target, &at));
    if target.starts_with("..") && !target.starts_with("../") {
        errors.push(FieldError::invalid(&at, target, "must not start with '..'"));
    }
    errors
}
