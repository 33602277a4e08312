//! Printers of the core group (`v1`).

use serde_json::{Value, json};

use super::cells::{
    access_modes, component_condition, condition, containers, endpoints, items, labels, len,
    node_roles, none_if_empty, quota, strings, text_or,
};
use super::columns::{Cells, column};
use super::workloads::replicated;

pub(super) fn core(kind: &str) -> Option<Cells> {
    Some(match kind {
        "ConfigMap" => vec![column("Data", |o| {
            json!(len(o, "/data") + len(o, "/binaryData"))
        })],
        "Secret" => vec![
            column("Type", |o| text_or(o, "/type", "")),
            column("Data", |o| json!(len(o, "/data"))),
        ],
        "Namespace" => vec![column("Status", |o| text_or(o, "/status/phase", ""))],
        "Pod" => pod(),
        "PodTemplate" => vec![
            column("Containers", |o| containers(o, "/template/spec", "name")),
            column("Images", |o| containers(o, "/template/spec", "image")),
            column("Pod Labels", |o| {
                json!(labels(o.pointer("/template/metadata/labels")))
            }),
        ],
        "Service" => service(),
        "ServiceAccount" => vec![],
        "ReplicationController" => replicated(|o| json!(labels(o.pointer("/spec/selector")))),
        "PersistentVolumeClaim" => claim(),
        "PersistentVolume" => volume(),
        "Endpoints" => vec![column("Endpoints", endpoints)],
        "ResourceQuota" => vec![
            column("Request", |o| quota(o, false)),
            column("Limit", |o| quota(o, true)),
        ],
        "ComponentStatus" => vec![
            column("Status", |o| {
                json!(match condition(o, "Healthy").as_deref() {
                    Some("True") => "Healthy",
                    Some(_) => "Unhealthy",
                    None => "Unknown",
                })
            }),
            column("Message", |o| component_condition(o, "message")),
            column("Error", |o| component_condition(o, "error")),
        ],
        "Node" => vec![
            column("Status", |o| {
                let mut status = match condition(o, "Ready").as_deref() {
                    Some("True") => "Ready",
                    Some(_) => "NotReady",
                    None => "Unknown",
                }
                .to_string();
                if o.pointer("/spec/unschedulable") == Some(&json!(true)) {
                    status.push_str(",SchedulingDisabled");
                }
                json!(status)
            }),
            column("Roles", node_roles),
            column("Version", |o| {
                text_or(o, "/status/nodeInfo/kubeletVersion", "")
            }),
            column("Internal-IP", |o| node_address(o, "InternalIP")),
            column("External-IP", |o| node_address(o, "ExternalIP")),
            column("OS-Image", |o| {
                text_or(o, "/status/nodeInfo/osImage", "<unknown>")
            }),
            column("Kernel-Version", |o| {
                let kernel = text_or(o, "/status/nodeInfo/kernelVersion", "<unknown>");
                let kernel = kernel.as_str().unwrap_or_default();
                json!(match o
                    .pointer("/status/nodeInfo/architecture")
                    .and_then(Value::as_str)
                {
                    Some(arch) if !arch.is_empty() => format!("{kernel} ({arch})"),
                    _ => kernel.to_string(),
                })
            }),
            column("Container-Runtime", |o| {
                text_or(o, "/status/nodeInfo/containerRuntimeVersion", "<unknown>")
            }),
        ],
        _ => return None,
    })
}

pub(super) fn pod() -> Cells {
    vec![
        column("Ready", |o| {
            let status = super::pod::status(o);
            json!(format!("{}/{}", status.ready, status.total))
        }),
        column("Status", |o| json!(super::pod::status(o).reason)),
        column("Restarts", |o| json!(super::pod::status(o).restarts)),
        column("IP", |o| text_or(o, "/status/podIP", "<none>")),
        column("Node", |o| text_or(o, "/spec/nodeName", "<none>")),
        column("Nominated Node", |o| {
            text_or(o, "/status/nominatedNodeName", "<none>")
        }),
        column("Readiness Gates", super::pod::readiness_gates),
    ]
}

pub(super) fn service() -> Cells {
    vec![
        column("Type", |o| text_or(o, "/spec/type", "ClusterIP")),
        column("Cluster-IP", |o| text_or(o, "/spec/clusterIP", "<none>")),
        column("External-IP", service_external_ip),
        column("Port(s)", |o| {
            let ports: Vec<String> = items(o, "/spec/ports")
                .iter()
                .map(|p| {
                    let protocol = p["protocol"].as_str().unwrap_or("TCP");
                    match p["nodePort"].as_i64() {
                        Some(node) => format!("{}:{node}/{protocol}", p["port"]),
                        None => format!("{}/{protocol}", p["port"]),
                    }
                })
                .collect();
            json!(none_if_empty(ports.join(",")))
        }),
        column("Selector", |o| json!(labels(o.pointer("/spec/selector")))),
    ]
}

pub(super) fn service_external_ip(o: &Value) -> Value {
    let mut ips: Vec<String> = strings(o, "/spec/externalIPs");
    match o.pointer("/spec/type").and_then(Value::as_str) {
        Some("ExternalName") => return text_or(o, "/spec/externalName", "<none>"),
        Some("LoadBalancer") => {
            let ingress: Vec<String> = items(o, "/status/loadBalancer/ingress")
                .iter()
                .filter_map(|i| i["ip"].as_str().or(i["hostname"].as_str()))
                .map(str::to_string)
                .collect();
            let mut all = ingress;
            all.append(&mut ips);
            if all.is_empty() {
                return json!("<pending>");
            }
            ips = all;
        }
        _ => {}
    }
    json!(none_if_empty(ips.join(",")))
}

/// `printPersistentVolumeClaim`: `Terminating` once deleted; the volume's
/// capacity and access modes only once it names a volume; its class
/// (`GetPersistentVolumeClaimClass`: the beta annotation, else
/// `storageClassName`, else empty).
pub(super) fn claim() -> Cells {
    vec![
        column("Status", |o| {
            if o.pointer("/metadata/deletionTimestamp")
                .is_some_and(|t| !t.is_null())
            {
                return json!("Terminating");
            }
            text_or(o, "/status/phase", "")
        }),
        column("Volume", |o| text_or(o, "/spec/volumeName", "")),
        column("Capacity", |o| {
            if bound(o) {
                text_or(o, "/status/capacity/storage", "0")
            } else {
                json!("")
            }
        }),
        column("Access Modes", |o| {
            if bound(o) {
                access_modes(o, "/status/accessModes")
            } else {
                json!("")
            }
        }),
        column("StorageClass", |o| {
            let annotation = o
                .pointer("/metadata/annotations/volume.beta.kubernetes.io~1storage-class")
                .and_then(Value::as_str);
            let class = o.pointer("/spec/storageClassName").and_then(Value::as_str);
            json!(annotation.or(class).unwrap_or(""))
        }),
        column("VolumeAttributesClass", |o| {
            text_or(o, "/spec/volumeAttributesClassName", "<unset>")
        }),
        column("VolumeMode", |o| text_or(o, "/spec/volumeMode", "<unset>")),
    ]
}

/// Whether a claim names its volume.
fn bound(o: &Value) -> bool {
    o.pointer("/spec/volumeName")
        .and_then(Value::as_str)
        .is_some_and(|v| !v.is_empty())
}

pub(super) fn volume() -> Cells {
    vec![
        column("Capacity", |o| text_or(o, "/spec/capacity/storage", "")),
        column("Access Modes", |o| access_modes(o, "/spec/accessModes")),
        column("Reclaim Policy", |o| {
            text_or(o, "/spec/persistentVolumeReclaimPolicy", "Retain")
        }),
        column("Status", |o| text_or(o, "/status/phase", "Pending")),
        column("Claim", |o| match o.pointer("/spec/claimRef") {
            Some(r) if r.is_object() => json!(format!(
                "{}/{}",
                r["namespace"].as_str().unwrap_or(""),
                r["name"].as_str().unwrap_or("")
            )),
            _ => json!(""),
        }),
        column("StorageClass", |o| text_or(o, "/spec/storageClassName", "")),
        column("VolumeAttributesClass", |o| {
            text_or(o, "/spec/volumeAttributesClassName", "<unset>")
        }),
        column("Reason", |o| text_or(o, "/status/reason", "")),
        column("VolumeMode", |o| {
            text_or(o, "/spec/volumeMode", "Filesystem")
        }),
    ]
}

/// A node's first address of type `kind` (`getNodeInternalIP`,
/// `getNodeExternalIP`), `<none>` without one.
fn node_address(o: &Value, kind: &str) -> Value {
    let address = items(o, "/status/addresses")
        .iter()
        .find(|a| a["type"] == kind)
        .and_then(|a| a["address"].as_str().map(str::to_string));
    json!(address.unwrap_or_else(|| "<none>".into()))
}
