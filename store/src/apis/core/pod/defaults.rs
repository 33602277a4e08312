//! The PodSpec's defaults (`SetDefaults_PodSpec`, `SetDefaults_Container`,
//! `SetDefaults_Volume` and the generated ones beneath them), which every
//! pod template gets, and the Pod's own (`SetDefaults_Pod`).

use serde_json::{Map, Value, json};

use super::image::pull_policy;
use crate::machinery::quantity::default_resource_list;

/// The fields of `value` when it is an object.
pub(crate) fn fields(value: &mut Value) -> Option<&mut Map<String, Value>> {
    value.as_object_mut()
}

/// The object at `key` of `map`, made an empty one when absent or null (a
/// struct field, always written).
pub(crate) fn object_at<'a>(
    map: &'a mut Map<String, Value>,
    key: &str,
) -> Option<&'a mut Map<String, Value>> {
    let value = map.entry(key).or_insert_with(|| json!({}));
    if value.is_null() {
        *value = json!({});
    }
    value.as_object_mut()
}

/// The spec of a workload, made when absent.
pub(crate) fn spec_of(object: &mut Value) -> Option<&mut Map<String, Value>> {
    object_at(object.as_object_mut()?, "spec")
}

/// Sets `key` to `default` when it is absent, null or (for strings) empty,
/// as Go's zero-value checks do.
pub(crate) fn or_default(map: &mut Map<String, Value>, key: &str, default: Value) {
    let unset = match map.get(key) {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty() && default.is_string(),
        Some(Value::Number(n)) => n.as_i64() == Some(0) && default.is_number(),
        _ => false,
    };
    if unset {
        map.insert(key.to_string(), default);
    }
}

/// Sets `key` to `default` when it is absent or null (a pointer field).
pub(crate) fn or_pointer(map: &mut Map<String, Value>, key: &str, default: Value) {
    if map.get(key).is_none_or(Value::is_null) {
        map.insert(key.to_string(), default);
    }
}

/// `SetDefaults_PodSpec` and the defaults of what it holds (containers,
/// volumes, probes, ports); the same for a Pod and for every template.
pub(crate) fn default_pod_spec(spec: &mut Value) {
    let Some(map) = fields(spec) else {
        return;
    };
    or_default(map, "dnsPolicy", json!("ClusterFirst"));
    or_default(map, "restartPolicy", json!("Always"));
    or_pointer(map, "securityContext", json!({}));
    or_pointer(map, "terminationGracePeriodSeconds", json!(30));
    or_default(map, "schedulerName", json!("default-scheduler"));
    // v1's `serviceAccount` is the deprecated spelling of
    // `serviceAccountName`: read when the name is not given, always written.
    let account = map
        .get("serviceAccountName")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .or_else(|| map.get("serviceAccount").and_then(Value::as_str))
        .unwrap_or_default()
        .to_string();
    if account.is_empty() {
        map.remove("serviceAccountName");
        map.remove("serviceAccount");
    } else {
        map.insert("serviceAccountName".into(), json!(account));
        map.insert("serviceAccount".into(), json!(account));
    }
    for key in ["containers", "initContainers", "ephemeralContainers"] {
        if let Some(containers) = map.get_mut(key).and_then(Value::as_array_mut) {
            containers.iter_mut().for_each(default_container);
        }
    }
    if let Some(volumes) = map.get_mut("volumes").and_then(Value::as_array_mut) {
        volumes.iter_mut().for_each(default_volume);
    }
}

/// The items of the list `key` of `map`, when there is one.
fn items_mut<'a>(map: &'a mut Map<String, Value>, key: &str) -> std::slice::IterMut<'a, Value> {
    match map.get_mut(key).and_then(Value::as_array_mut) {
        Some(items) => items.iter_mut(),
        None => [].iter_mut(),
    }
}

/// `SetDefaults_Pod`: what only a Pod gets (not a template): requests
/// from limits, `enableServiceLinks`, host ports on the host's network.
pub(crate) fn default_pod_only(spec: &mut Value) {
    let Some(map) = fields(spec) else {
        return;
    };
    let host_network = map.get("hostNetwork") == Some(&Value::Bool(true));
    for key in ["containers", "initContainers"] {
        for container in items_mut(map, key) {
            requests_from_limits(container);
            let Some(container) = fields(container) else {
                continue;
            };
            for port in items_mut(container, "ports").filter_map(fields) {
                if host_network
                    && port.get("hostPort").and_then(Value::as_i64).unwrap_or(0) == 0
                    && let Some(container_port) = port.get("containerPort").cloned()
                {
                    port.insert("hostPort".into(), container_port);
                }
            }
        }
    }
    or_pointer(map, "enableServiceLinks", json!(true));
}

/// Limits that have no request become requests.
fn requests_from_limits(container: &mut Value) {
    let Some(resources) = container
        .get_mut("resources")
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    let Some(limits) = resources.get("limits").and_then(Value::as_object).cloned() else {
        return;
    };
    if let Some(requests) = object_at(resources, "requests") {
        for (name, value) in limits {
            requests.entry(name).or_insert(value);
        }
    }
}

/// `SetDefaults_Container` and the generated defaults of its parts.
fn default_container(container: &mut Value) {
    let Some(map) = fields(container) else {
        return;
    };
    if map
        .get("imagePullPolicy")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        let image = map.get("image").and_then(Value::as_str).unwrap_or_default();
        map.insert("imagePullPolicy".into(), json!(pull_policy(image)));
    }
    or_default(map, "terminationMessagePath", json!("/dev/termination-log"));
    or_default(map, "terminationMessagePolicy", json!("File"));
    for port in items_mut(map, "ports").filter_map(fields) {
        or_default(port, "protocol", json!("TCP"));
    }
    for env in items_mut(map, "env") {
        if let Some(from) = env.get_mut("valueFrom") {
            if let Some(field_ref) = from.get_mut("fieldRef").and_then(Value::as_object_mut) {
                or_default(field_ref, "apiVersion", json!("v1"));
            }
            if let Some(file) = from.get_mut("fileKeyRef").and_then(Value::as_object_mut) {
                or_pointer(file, "optional", json!(false));
            }
        }
    }
    // A struct, not a pointer: always there.
    if let Some(resources) = object_at(map, "resources") {
        default_resource_list(resources.get_mut("limits"));
        default_resource_list(resources.get_mut("requests"));
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(probe) = map.get_mut(probe).and_then(Value::as_object_mut) {
            default_probe(probe);
        }
    }
    if let Some(lifecycle) = map.get_mut("lifecycle").and_then(Value::as_object_mut) {
        for hook in ["postStart", "preStop"] {
            if let Some(handler) = lifecycle.get_mut(hook).and_then(Value::as_object_mut) {
                default_http_get(handler);
            }
        }
    }
}

/// `SetDefaults_Probe` and its handler's.
fn default_probe(probe: &mut Map<String, Value>) {
    or_default(probe, "timeoutSeconds", json!(1));
    or_default(probe, "periodSeconds", json!(10));
    or_default(probe, "successThreshold", json!(1));
    or_default(probe, "failureThreshold", json!(3));
    default_http_get(probe);
    if let Some(grpc) = probe.get_mut("grpc").and_then(Value::as_object_mut) {
        or_pointer(grpc, "service", json!(""));
    }
}

/// `SetDefaults_HTTPGetAction` of a handler's `httpGet`.
fn default_http_get(handler: &mut Map<String, Value>) {
    if let Some(get) = handler.get_mut("httpGet").and_then(Value::as_object_mut) {
        or_default(get, "path", json!("/"));
        or_default(get, "scheme", json!("HTTP"));
    }
}

/// The volume sources a Volume may name, in the order the real server
/// checks them.
pub(crate) const VOLUME_SOURCES: [&str; 30] = [
    "emptyDir",
    "hostPath",
    "gitRepo",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "flocker",
    "persistentVolumeClaim",
    "rbd",
    "cinder",
    "cephfs",
    "quobyte",
    "downwardAPI",
    "fc",
    "flexVolume",
    "configMap",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "storageos",
    "projected",
    "scaleIO",
    "csi",
    "ephemeral",
    "image",
];

/// `SetDefaults_Volume` (no source is an `emptyDir`) and its sources'.
fn default_volume(volume: &mut Value) {
    let Some(map) = fields(volume) else {
        return;
    };
    if !VOLUME_SOURCES
        .iter()
        .any(|source| map.get(*source).is_some_and(|v| !v.is_null()))
    {
        map.insert("emptyDir".into(), json!({}));
    }
    for source in ["secret", "configMap", "downwardAPI", "projected"] {
        if let Some(source) = map.get_mut(source).and_then(Value::as_object_mut) {
            or_pointer(source, "defaultMode", json!(420));
        }
    }
    if let Some(host_path) = map.get_mut("hostPath").and_then(Value::as_object_mut) {
        or_pointer(host_path, "type", json!(""));
    }
    if let Some(items) = map
        .get_mut("downwardAPI")
        .and_then(|d| d.get_mut("items"))
        .and_then(Value::as_array_mut)
    {
        items.iter_mut().for_each(default_field_ref);
    }
    for source in map
        .get_mut("projected")
        .and_then(|p| p.get_mut("sources"))
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        if let Some(items) = source
            .get_mut("downwardAPI")
            .and_then(|d| d.get_mut("items"))
            .and_then(Value::as_array_mut)
        {
            items.iter_mut().for_each(default_field_ref);
        }
        if let Some(token) = source
            .get_mut("serviceAccountToken")
            .and_then(Value::as_object_mut)
        {
            or_pointer(token, "expirationSeconds", json!(3600));
        }
    }
    if let Some(claim) = map
        .get_mut("ephemeral")
        .and_then(|e| e.get_mut("volumeClaimTemplate"))
        .and_then(|t| t.get_mut("spec"))
    {
        default_claim_spec(claim);
    }
}

/// `SetDefaults_ObjectFieldSelector` of an item's `fieldRef`.
fn default_field_ref(item: &mut Value) {
    if let Some(field_ref) = item.get_mut("fieldRef").and_then(Value::as_object_mut) {
        or_default(field_ref, "apiVersion", json!("v1"));
    }
}

/// `SetDefaults_PersistentVolumeClaimSpec` (a claim template's or an
/// ephemeral volume's): `volumeMode: Filesystem`, quantities canonical.
pub(crate) fn default_claim_spec(spec: &mut Value) {
    let Some(map) = fields(spec) else {
        return;
    };
    or_pointer(map, "volumeMode", json!("Filesystem"));
    if let Some(resources) = map.get_mut("resources").and_then(Value::as_object_mut) {
        default_resource_list(resources.get_mut("limits"));
        default_resource_list(resources.get_mut("requests"));
    }
}
