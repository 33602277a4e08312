//! The warnings a write of a Pod or a pod template gets once accepted
//! (`pkg/api/pod/warnings.go`): fractional byte amounts, environment
//! variables hiding earlier ones, ports defined twice or named twice, host
//! aliases and pull secrets named twice, a negative grace period,
//! deprecated volume types.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::go::strconv::go_quote;
use crate::machinery::field::Path;
use crate::machinery::object::{items, text};
use crate::machinery::quantity::Quantity;

/// The warnings of the pod `spec` at `path` (`spec`, or a template's
/// `spec.template.spec`).
pub(crate) fn spec_warnings(spec: &Value, path: &Path) -> Vec<String> {
    let mut warnings = Vec::new();
    if let Some(selector) = spec.get("nodeSelector").and_then(Value::as_object) {
        for key in selector.keys() {
            if let Some(message) = deprecated_node_label(key) {
                warnings.push(format!(
                    "{}: {message}",
                    path.child("nodeSelector").key(key)
                ));
            }
        }
    }
    for (i, constraint) in items(spec, "topologySpreadConstraints").iter().enumerate() {
        let at = path.child("topologySpreadConstraints").index(i);
        let key = text(constraint, "topologyKey");
        if let Some(message) = deprecated_node_label(key) {
            warnings.push(format!("{}: {key} is {message}", at.child("topologyKey")));
        }
        if constraint.get("labelSelector").is_none_or(Value::is_null) {
            warnings.push(format!("{}: {NO_POD}", at.child("labelSelector")));
        }
    }
    for (i, volume) in items(spec, "volumes").iter().enumerate() {
        let at = path.child("volumes").index(i);
        for (source, since) in [
            (
                "photonPersistentDisk",
                "deprecated in v1.11, non-functional in v1.16+",
            ),
            (
                "gitRepo",
                "deprecated in v1.11, and disabled by default in v1.33+",
            ),
            ("scaleIO", "deprecated in v1.16, non-functional in v1.22+"),
            ("flocker", "deprecated in v1.22, non-functional in v1.25+"),
            ("storageos", "deprecated in v1.22, non-functional in v1.25+"),
            ("quobyte", "deprecated in v1.22, non-functional in v1.25+"),
            ("glusterfs", "deprecated in v1.25, non-functional in v1.26+"),
            ("cephfs", "deprecated in v1.28, non-functional in v1.31+"),
            ("rbd", "deprecated in v1.28, non-functional in v1.31+"),
        ] {
            if volume.get(source).is_some_and(|v| !v.is_null()) {
                let name = if source == "storageos" {
                    "storageOS"
                } else {
                    source
                };
                warnings.push(format!("{}: {since}", at.child(name)));
            }
        }
    }
    for (list, key, what) in [
        ("hostAliases", "ip", "ip"),
        ("imagePullSecrets", "name", "name"),
    ] {
        let mut seen = Vec::new();
        for (i, item) in items(spec, list).iter().enumerate() {
            let value = text(item, key);
            if seen.contains(&value) {
                warnings.push(format!(
                    "{}: duplicate {what} {}",
                    path.child(list).index(i).child(key),
                    go_quote(value)
                ));
            } else {
                seen.push(value);
            }
        }
    }
    for (i, secret) in items(spec, "imagePullSecrets").iter().enumerate() {
        if text(secret, "name").is_empty() {
            warnings.push(format!(
                "{}: invalid empty name \"\"",
                path.child("imagePullSecrets").index(i).child("name")
            ));
        }
    }
    let containers = containers_with_paths(spec, path);
    for (container, at) in &containers {
        for (list, resource) in [
            ("limits", "memory"),
            ("requests", "memory"),
            ("limits", "ephemeral-storage"),
            ("requests", "ephemeral-storage"),
        ] {
            let value = container
                .get("resources")
                .and_then(|r| r.get(list))
                .and_then(|l| l.get(resource));
            if let Some(q) = value.and_then(|v| Quantity::from_json(v).ok())
                && !q.is_whole_in_millis()
            {
                warnings.push(format!(
                    "{}: fractional byte value {} is invalid, must be an integer",
                    at.child("resources").child(list).key(resource),
                    go_quote(&q.text())
                ));
            }
        }
        let mut seen = Vec::new();
        for (i, env) in items(container, "env").iter().enumerate() {
            let name = text(env, "name");
            if !seen.contains(&name) {
                seen.push(name);
                continue;
            }
            let reference = format!("$({name})");
            let value = text(env, "value");
            let bad = env.get("valueFrom").is_some_and(|v| !v.is_null())
                || value == reference
                || !value.contains(&reference);
            if bad {
                warnings.push(format!(
                    "{}: hides previous definition of {}, which may be dropped when using apply",
                    at.child("env").index(i),
                    go_quote(name)
                ));
            }
        }
    }
    warnings.extend(port_warnings(&containers));
    if spec
        .get("terminationGracePeriodSeconds")
        .and_then(Value::as_i64)
        .is_some_and(|g| g < 0)
    {
        warnings.push(format!(
            "{}: must be >= 0; negative values are invalid and will be treated as 1",
            path.child("terminationGracePeriodSeconds")
        ));
    }
    for kind in ["podAffinity", "podAntiAffinity"] {
        let Some(affinity) = spec.get("affinity").and_then(|a| a.get(kind)) else {
            continue;
        };
        let at = path.child("affinity").child(kind);
        let required = "requiredDuringSchedulingIgnoredDuringExecution";
        for (i, term) in items(affinity, required).iter().enumerate() {
            if term.get("labelSelector").is_none_or(Value::is_null) {
                let here = at.child(required).index(i).child("labelSelector");
                warnings.push(format!("{here}: {NO_POD}"));
            }
        }
        let preferred = "preferredDuringSchedulingIgnoredDuringExecution";
        for (i, weighted) in items(affinity, preferred).iter().enumerate() {
            let term = weighted.get("podAffinityTerm");
            if term
                .and_then(|t| t.get("labelSelector"))
                .is_none_or(Value::is_null)
            {
                let here = at
                    .child(preferred)
                    .index(i)
                    .child("podAffinityTerm")
                    .child("labelSelector");
                warnings.push(format!("{here}: {NO_POD}"));
            }
        }
    }
    warnings
}

/// What a selector that is null selects.
const NO_POD: &str = "a null labelSelector results in matching no pod";

/// The message of a deprecated node label (`pkg/api/node/util.go`).
fn deprecated_node_label(key: &str) -> Option<&'static str> {
    Some(match key {
        "beta.kubernetes.io/arch" => r#"deprecated since v1.14; use "kubernetes.io/arch" instead"#,
        "beta.kubernetes.io/os" => r#"deprecated since v1.14; use "kubernetes.io/os" instead"#,
        "failure-domain.beta.kubernetes.io/region" => {
            r#"deprecated since v1.17; use "topology.kubernetes.io/region" instead"#
        }
        "failure-domain.beta.kubernetes.io/zone" => {
            r#"deprecated since v1.17; use "topology.kubernetes.io/zone" instead"#
        }
        "beta.kubernetes.io/instance-type" => {
            r#"deprecated since v1.17; use "node.kubernetes.io/instance-type" instead"#
        }
        "app.kubernetes.io/created-by" => "deprecated since v1.9",
        "scheduler.alpha.kubernetes.io/preferAvoidPods" => {
            "deprecated since v1.22; use Taints and Tolerations instead"
        }
        _ => return None,
    })
}

/// Ports defined twice (or overlapping) and port names used twice, across
/// the pod's containers.
fn port_warnings(containers: &[(&Value, Path)]) -> Vec<String> {
    let mut warnings = Vec::new();
    let mut by_port: BTreeMap<String, Vec<(Path, &Value)>> = BTreeMap::new();
    for (container, at) in containers {
        for (i, port) in items(container, "ports").iter().enumerate() {
            let here = at.child("ports").index(i);
            let host_ip = text(port, "hostIP");
            let host_port = port.get("hostPort").and_then(Value::as_i64).unwrap_or(0);
            let container_port = port
                .get("containerPort")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            if !host_ip.is_empty() && host_port == 0 {
                // Go's `%+v` of the internal ContainerPort.
                warnings.push(format!(
                    "{here}: hostIP set without hostPort: {{Name:{} HostPort:{host_port} ContainerPort:{container_port} Protocol:{} HostIP:{host_ip}}}",
                    text(port, "name"),
                    text(port, "protocol"),
                ));
            }
            let key = format!(
                "{}/{}",
                port.get("containerPort")
                    .and_then(Value::as_i64)
                    .unwrap_or(0),
                text(port, "protocol")
            );
            let others = by_port.entry(key).or_default();
            for (other_path, other) in others.iter() {
                let other_ip = text(other, "hostIP");
                let other_port = other.get("hostPort").and_then(Value::as_i64).unwrap_or(0);
                let what = if host_ip == other_ip && host_port == other_port {
                    "duplicate"
                } else if host_port == 0 || other_port == 0 {
                    "overlapping"
                } else if host_port == other_port && (host_ip.is_empty() != other_ip.is_empty()) {
                    "dangerously ambiguous"
                } else {
                    continue;
                };
                warnings.push(format!("{here}: {what} port definition with {other_path}"));
            }
            others.push((here, port));
        }
    }
    let mut names: BTreeMap<&str, Path> = BTreeMap::new();
    for (container, at) in containers {
        for (i, port) in items(container, "ports").iter().enumerate() {
            let name = text(port, "name");
            if name.is_empty() {
                continue;
            }
            let here = at.child("ports").index(i);
            match names.get(name) {
                Some(other) => warnings.push(format!(
                    "{here}: duplicate port name {} with {other}, services and probes that select ports by name will use {other}",
                    go_quote(name)
                )),
                None => {
                    names.insert(name, here);
                }
            }
        }
    }
    warnings
}

/// The containers in the order the real server visits them: init
/// containers, containers, ephemeral containers.
fn containers_with_paths<'a>(spec: &'a Value, path: &Path) -> Vec<(&'a Value, Path)> {
    ["initContainers", "containers", "ephemeralContainers"]
        .iter()
        .flat_map(|key| {
            items(spec, key)
                .iter()
                .enumerate()
                .map(move |(i, c)| (c, path.child(key).index(i)))
        })
        .collect()
}
