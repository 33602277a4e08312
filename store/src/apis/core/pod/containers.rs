//! A PodSpec's containers as `validateContainers`,
//! `validateInitContainers` and `validateContainerCommon` check them:
//! names, images, ports, resources, mounts, pull, restart and termination
//! policies (their environment in `env.rs`, probes in `probes.rs`).

use std::collections::BTreeSet;

use serde_json::Value;

use super::env::validate_env;
use super::probes::{validate_handler, validate_probe};
use super::security::validate_container_security;
use crate::apis::core::resources::{
    container_name_errors, overcommit_allowed, quantity, value_errors,
};
use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::names::{is_dns1123_label, port_name_errors, port_number_errors};
use crate::machinery::object::text;

/// `IsNegativeErrorMsg`.
pub(crate) const NEGATIVE: &str = "must be greater than or equal to 0";

/// `ValidateNonnegativeField` of an integer field of `map`, when set.
pub(crate) fn nonnegative(map: &Value, key: &str, path: &Path) -> ErrorList {
    match map.get(key).and_then(Value::as_i64) {
        Some(value) if value < 0 => vec![FieldError::invalid(&path.child(key), value, NEGATIVE)],
        _ => ErrorList::new(),
    }
}

/// `ValidateDNS1123Label`.
pub(crate) fn dns_label(value: &str, path: &Path) -> ErrorList {
    is_dns1123_label(value)
        .into_iter()
        .map(|message| FieldError::invalid(path, value, message))
        .collect()
}

/// `IsValidPortNum`: the words for a port outside 1..65535.
pub(super) fn port_number(port: i64) -> Option<String> {
    port_number_errors(port).into_iter().next()
}

/// The volumes a container may mount: names of the spec's valid volumes.
pub(crate) type Volumes = BTreeSet<String>;

/// `validateContainers`: at least one, each checked, names unique, probes.
pub(crate) fn validate_containers(spec: &Value, volumes: &Volumes, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let containers = spec
        .get("containers")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if containers.is_empty() {
        errors.push(FieldError::required(path, ""));
        return errors;
    }
    let mut names = BTreeSet::new();
    for (i, container) in containers.iter().enumerate() {
        let at = path.index(i);
        errors.extend(validate_common(container, volumes, &at));
        let name = text(container, "name");
        if !names.insert(name) {
            errors.push(FieldError::duplicate(&at.child("name"), name));
        }
        for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
            if let Some(p) = container.get(probe).filter(|p| p.is_object()) {
                errors.extend(validate_probe(p, &at.child(probe)));
                if probe != "readinessProbe"
                    && p.get("successThreshold").and_then(Value::as_i64) != Some(1)
                {
                    let value = p
                        .get("successThreshold")
                        .and_then(Value::as_i64)
                        .unwrap_or(0);
                    errors.push(FieldError::invalid(
                        &at.child(probe).child("successThreshold"),
                        value,
                        "must be 1",
                    ));
                }
            }
        }
        if let Some(lifecycle) = container.get("lifecycle").filter(|l| l.is_object()) {
            for hook in ["postStart", "preStop"] {
                if let Some(handler) = lifecycle.get(hook).filter(|h| h.is_object()) {
                    errors.extend(validate_handler(
                        handler,
                        &at.child("lifecycle").child(hook),
                    ));
                }
            }
        }
        errors.extend(container_restart_policy(container, &at));
    }
    errors.extend(host_port_conflicts(containers, path));
    errors
}

/// `checkHostPortConflicts`: a host port (with its protocol and address)
/// used once among `containers`.
fn host_port_conflicts(containers: &[Value], path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let mut seen = BTreeSet::new();
    for (i, container) in containers.iter().enumerate() {
        for (j, port) in container
            .get("ports")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let host_port = port.get("hostPort").and_then(Value::as_i64).unwrap_or(0);
            if host_port == 0 {
                continue;
            }
            let key = format!(
                "{}/{}/{host_port}",
                text(port, "protocol"),
                text(port, "hostIP")
            );
            if seen.contains(&key) {
                let at = path.index(i).child("ports").index(j).child("hostPort");
                errors.push(FieldError::duplicate(&at, key.as_str()));
            } else {
                seen.insert(key);
            }
        }
    }
    errors
}

/// `validateInitContainers`: each checked, names unique among init and
/// regular containers, no probes unless it restarts always.
pub(crate) fn validate_init_containers(spec: &Value, volumes: &Volumes, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let mut names: BTreeSet<&str> = spec
        .get("containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| text(c, "name"))
        .collect();
    for (i, container) in spec
        .get("initContainers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = path.index(i);
        errors.extend(validate_common(container, volumes, &at));
        let name = text(container, "name");
        if names.contains(name) {
            errors.push(FieldError::duplicate(&at.child("name"), name));
        } else if !name.is_empty() {
            names.insert(name);
        }
        // Init containers run one by one: each is checked alone (and named
        // as the first, as the real server names it).
        errors.extend(host_port_conflicts(std::slice::from_ref(container), path));
        let restart = container.get("restartPolicy").and_then(Value::as_str);
        errors.extend(container_restart_policy(container, &at));
        if restart == Some("Always") {
            for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
                if let Some(p) = container.get(probe).filter(|p| p.is_object()) {
                    errors.extend(validate_probe(p, &at.child(probe)));
                }
            }
        } else {
            for field in [
                "lifecycle",
                "livenessProbe",
                "readinessProbe",
                "startupProbe",
            ] {
                if container.get(field).is_some_and(|v| !v.is_null()) {
                    errors.push(FieldError::forbidden(
                        &at.child(field),
                        "may not be set for init containers without restartPolicy=Always",
                    ));
                }
            }
        }
    }
    errors
}

/// `validateContainerRestartPolicy`: a container's own restart policy,
/// when given, is one of the pod's.
fn container_restart_policy(container: &Value, path: &Path) -> ErrorList {
    match container.get("restartPolicy").and_then(Value::as_str) {
        None | Some("Always" | "Never" | "OnFailure") => ErrorList::new(),
        Some(other) => vec![FieldError::not_supported(
            &path.child("restartPolicy"),
            other,
            &[
                "Always".to_string(),
                "Never".to_string(),
                "OnFailure".to_string(),
            ],
        )],
    }
}

/// `validateContainerCommon`: what every kind of container must hold.
pub(super) fn validate_common(container: &Value, volumes: &Volumes, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let name = text(container, "name");
    if name.is_empty() {
        errors.push(FieldError::required(&path.child("name"), ""));
    } else {
        errors.extend(dns_label(name, &path.child("name")));
    }
    if text(container, "image").is_empty() {
        errors.push(FieldError::required(&path.child("image"), ""));
    }
    match text(container, "terminationMessagePolicy") {
        "File" | "FallbackToLogsOnError" => {}
        "" => errors.push(FieldError::required(
            &path.child("terminationMessagePolicy"),
            "",
        )),
        other => errors.push(FieldError::not_supported(
            &path.child("terminationMessagePolicy"),
            other,
            &["File".to_string(), "FallbackToLogsOnError".to_string()],
        )),
    }
    errors.extend(validate_ports(container, &path.child("ports")));
    errors.extend(validate_resources(container, &path.child("resources")));
    errors.extend(validate_container_security(container, path));
    errors.extend(validate_env(container, path));
    errors.extend(validate_mounts(
        container,
        volumes,
        &path.child("volumeMounts"),
    ));
    match text(container, "imagePullPolicy") {
        "Always" | "IfNotPresent" | "Never" => {}
        "" => errors.push(FieldError::required(&path.child("imagePullPolicy"), "")),
        other => errors.push(FieldError::not_supported(
            &path.child("imagePullPolicy"),
            other,
            &[
                "Always".to_string(),
                "IfNotPresent".to_string(),
                "Never".to_string(),
            ],
        )),
    }
    errors
}

/// `ValidateContainerResourceRequirements`: names, amounts, requests
/// within limits (equal for what cannot be overcommitted).
fn validate_resources(container: &Value, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let (limits_path, requests_path) = (path.child("limits"), path.child("requests"));
    let list = |key: &str| {
        container
            .get("resources")
            .and_then(|r| r.get(key))
            .and_then(Value::as_object)
    };
    let limits = list("limits");
    for (name, value) in limits.into_iter().flatten() {
        let at = limits_path.key(name);
        errors.extend(container_name_errors(name, &at));
        errors.extend(value_errors(name, &quantity(value), &at));
    }
    for (name, value) in list("requests").into_iter().flatten() {
        let at = requests_path.key(name);
        errors.extend(container_name_errors(name, &at));
        let request = quantity(value);
        errors.extend(value_errors(name, &request, &at));
        match limits.and_then(|l| l.get(name)).map(quantity) {
            Some(limit) if request != limit && !overcommit_allowed(name) => {
                errors.push(FieldError::invalid(
                    &requests_path,
                    request.text().as_str(),
                    format!("must be equal to {name} limit of {}", limit.text()),
                ));
            }
            Some(limit) if request > limit => errors.push(FieldError::invalid(
                &requests_path,
                request.text().as_str(),
                format!(
                    "must be less than or equal to {name} limit of {}",
                    limit.text()
                ),
            )),
            Some(_) => {}
            None if !overcommit_allowed(name) => errors.push(FieldError::required(
                &limits_path,
                "Limit must be set for non overcommitable resources",
            )),
            None => {}
        }
    }
    errors
}

/// `validateContainerPorts`.
fn validate_ports(container: &Value, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let mut names = BTreeSet::new();
    for (i, port) in container
        .get("ports")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = path.index(i);
        let name = text(port, "name");
        if !name.is_empty() {
            let messages = port_name_errors(name);
            if !messages.is_empty() {
                for message in messages {
                    errors.push(FieldError::invalid(&at.child("name"), name, message));
                }
            } else if !names.insert(name) {
                errors.push(FieldError::duplicate(&at.child("name"), name));
            }
        }
        let container_port = port
            .get("containerPort")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if container_port == 0 {
            errors.push(FieldError::required(&at.child("containerPort"), ""));
        } else if let Some(message) = port_number(container_port) {
            errors.push(FieldError::invalid(
                &at.child("containerPort"),
                container_port,
                message,
            ));
        }
        let host_port = port.get("hostPort").and_then(Value::as_i64).unwrap_or(0);
        if host_port != 0
            && let Some(message) = port_number(host_port)
        {
            errors.push(FieldError::invalid(
                &at.child("hostPort"),
                host_port,
                message,
            ));
        }
        match text(port, "protocol") {
            "TCP" | "UDP" | "SCTP" => {}
            "" => errors.push(FieldError::required(&at.child("protocol"), "")),
            other => errors.push(FieldError::not_supported(
                &at.child("protocol"),
                other,
                &["SCTP".to_string(), "TCP".to_string(), "UDP".to_string()],
            )),
        }
    }
    errors
}

/// `ValidateVolumeMounts`: names of the spec's volumes, paths given and
/// distinct.
fn validate_mounts(container: &Value, volumes: &Volumes, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let mut paths = BTreeSet::new();
    for (i, mount) in container
        .get("volumeMounts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let at = path.index(i);
        let name = text(mount, "name");
        if name.is_empty() {
            errors.push(FieldError::required(&at.child("name"), ""));
        }
        if !volumes.contains(name) {
            errors.push(FieldError::not_found(&at.child("name"), name));
        }
        let mount_path = text(mount, "mountPath");
        if mount_path.is_empty() {
            errors.push(FieldError::required(&at.child("mountPath"), ""));
        }
        if !paths.insert(mount_path) {
            errors.push(FieldError::invalid(
                &at.child("mountPath"),
                mount_path,
                "must be unique",
            ));
        }
        // The real server names these without the mount's index.
        let sub_path = text(mount, "subPath");
        let sub_path_expr = text(mount, "subPathExpr");
        if !sub_path.is_empty() {
            errors.extend(local_descending(sub_path, &path.child("subPath")));
        }
        if !sub_path_expr.is_empty() {
            if !sub_path.is_empty() {
                errors.push(FieldError::invalid(
                    &at.child("subPathExpr"),
                    sub_path_expr,
                    "subPathExpr and subPath are mutually exclusive",
                ));
            }
            errors.extend(local_descending(sub_path_expr, &path.child("subPathExpr")));
        }
    }
    errors
}

/// `validateLocalDescendingPath`: relative, without `..`.
fn local_descending(target: &str, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    if target.starts_with('/') {
        errors.push(FieldError::invalid(path, target, "must be a relative path"));
    }
    if target.split('/').any(|part| part == "..") {
        errors.push(FieldError::invalid(path, target, "must not contain '..'"));
    }
    errors
}
