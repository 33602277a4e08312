//! Printers of the core group (`v1`).

use serde_json::{Value, json};

use super::cells::{
    access_modes, component_condition, condition, containers, endpoints, items, labels, len,
    node_roles, none_if_empty, quota, strings, text_or,
};
use super::columns::{CONTAINERS, IMAGES, age_column, column, created_at_column, wide};
use super::workloads::replicated;
use crate::printers::column::Column;

pub(super) fn core(kind: &str) -> Option<Vec<Column>> {
    Some(match kind {
        "ConfigMap" => vec![
            column(
                "Data",
                "string",
                "Data contains the configuration data.",
                |o| json!(len(o, "/data") + len(o, "/binaryData")),
            ),
            age_column(),
        ],
        "Secret" => vec![
            column("Type", "string", "The type of the secret", |o| {
                text_or(o, "/type", "")
            }),
            column("Data", "string", "Data contains the secret data.", |o| {
                json!(len(o, "/data"))
            }),
            age_column(),
        ],
        "Namespace" => vec![
            column("Status", "string", "The status of the namespace", |o| {
                text_or(o, "/status/phase", "")
            }),
            age_column(),
        ],
        "Pod" => pod(),
        "PodTemplate" => vec![
            column("Containers", "string", CONTAINERS, |o| {
                containers(o, "/template/spec", "name")
            }),
            column("Images", "string", IMAGES, |o| {
                containers(o, "/template/spec", "image")
            }),
            column(
                "Pod Labels",
                "string",
                "The labels for the pod template.",
                |o| json!(labels(o.pointer("/template/metadata/labels"))),
            ),
        ],
        "Service" => service(),
        "ServiceAccount" => vec![
            column(
                "Secrets",
                "string",
                "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use.",
                |o| json!(len(o, "/secrets")),
            ),
            age_column(),
        ],
        "ReplicationController" => replicated(|o| json!(labels(o.pointer("/spec/selector")))),
        "PersistentVolumeClaim" => claim(),
        "PersistentVolume" => volume(),
        "Endpoints" => vec![
            column(
                "Endpoints",
                "string",
                "The set of all endpoints is the union of all subsets.",
                endpoints,
            ),
            age_column(),
        ],
        "ResourceQuota" => vec![
            age_column(),
            column(
                "Request",
                "string",
                "Request represents a minimum amount of cpu/memory that a container may consume.",
                |o| quota(o, false),
            ),
            column(
                "Limit",
                "string",
                "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.",
                |o| quota(o, true),
            ),
        ],
        "LimitRange" => vec![created_at_column()],
        "ComponentStatus" => vec![
            column(
                "Status",
                "string",
                "Status of the component conditions",
                |o| {
                    json!(match condition(o, "Healthy").as_deref() {
                        Some("True") => "Healthy",
                        Some(_) => "Unhealthy",
                        None => "Unknown",
                    })
                },
            ),
            column(
                "Message",
                "string",
                "Message of the component conditions",
                |o| component_condition(o, "message"),
            ),
            column(
                "Error",
                "string",
                "Error of the component conditions",
                |o| component_condition(o, "error"),
            ),
        ],
        "Node" => vec![
            column("Status", "string", "The status of the node", |o| {
                json!(match condition(o, "Ready").as_deref() {
                    Some("True") => "Ready",
                    Some("False") => "NotReady",
                    _ => "Unknown",
                })
            }),
            column("Roles", "string", "The roles of the node", node_roles),
            age_column(),
            column(
                "Version",
                "string",
                "Kubelet Version reported by the node.",
                |o| text_or(o, "/status/nodeInfo/kubeletVersion", ""),
            ),
        ],
        _ => return None,
    })
}

pub(super) fn pod() -> Vec<Column> {
    vec![
        column(
            "Ready",
            "string",
            "The aggregate readiness state of this pod for accepting traffic.",
            |o| {
                let ready = o
                    .pointer("/status/containerStatuses")
                    .and_then(Value::as_array)
                    .map_or(0, |s| s.iter().filter(|s| s["ready"] == true).count());
                json!(format!("{ready}/{}", len(o, "/spec/containers")))
            },
        ),
        column(
            "Status",
            "string",
            "The aggregate status of the containers in this pod.",
            |o| {
                if o.pointer("/metadata/deletionTimestamp")
                    .is_some_and(|t| !t.is_null())
                {
                    return json!("Terminating");
                }
                match o.pointer("/status/reason").and_then(Value::as_str) {
                    Some(reason) if !reason.is_empty() => json!(reason),
                    _ => text_or(o, "/status/phase", "Pending"),
                }
            },
        ),
        column(
            "Restarts",
            "string",
            "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
            |o| {
                let restarts: i64 = o
                    .pointer("/status/containerStatuses")
                    .and_then(Value::as_array)
                    .map_or(0, |s| {
                        s.iter().filter_map(|s| s["restartCount"].as_i64()).sum()
                    });
                json!(restarts.to_string())
            },
        ),
        age_column(),
        wide("IP", "string", "podIP address allocated to the pod.", |o| {
            text_or(o, "/status/podIP", "<none>")
        }),
        wide(
            "Node",
            "string",
            "NodeName indicates in which node this pod is scheduled.",
            |o| text_or(o, "/spec/nodeName", "<none>"),
        ),
        wide(
            "Nominated Node",
            "string",
            "nominatedNodeName is set when this pod preempts other pods on the node.",
            |o| text_or(o, "/status/nominatedNodeName", "<none>"),
        ),
        wide(
            "Readiness Gates",
            "string",
            "If specified, all readiness gates will be evaluated for pod readiness.",
            |o| match len(o, "/spec/readinessGates") {
                0 => json!("<none>"),
                n => json!(format!("0/{n}")),
            },
        ),
    ]
}

pub(super) fn service() -> Vec<Column> {
    vec![
        column(
            "Type",
            "string",
            "type determines how the Service is exposed.",
            |o| text_or(o, "/spec/type", "ClusterIP"),
        ),
        column(
            "Cluster-IP",
            "string",
            "clusterIP is the IP address of the service.",
            |o| text_or(o, "/spec/clusterIP", "<none>"),
        ),
        column(
            "External-IP",
            "string",
            "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.",
            service_external_ip,
        ),
        column(
            "Port(s)",
            "string",
            "The list of ports that are exposed by this service.",
            |o| {
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
            },
        ),
        age_column(),
        wide(
            "Selector",
            "string",
            "Route service traffic to pods with label keys and values matching this selector.",
            |o| json!(labels(o.pointer("/spec/selector"))),
        ),
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

pub(super) fn claim() -> Vec<Column> {
    vec![
        column(
            "Status",
            "string",
            "phase represents the current phase of PersistentVolumeClaim.",
            |o| text_or(o, "/status/phase", "Pending"),
        ),
        column(
            "Volume",
            "string",
            "volumeName is the binding reference to the PersistentVolume backing this claim.",
            |o| text_or(o, "/spec/volumeName", ""),
        ),
        column(
            "Capacity",
            "string",
            "capacity represents the actual resources of the underlying volume.",
            |o| text_or(o, "/status/capacity/storage", ""),
        ),
        column(
            "Access Modes",
            "string",
            "accessModes contains the actual access modes the volume backing the PVC has.",
            |o| access_modes(o, "/status/accessModes"),
        ),
        column(
            "StorageClass",
            "string",
            "storageClassName is the name of the StorageClass required by the claim.",
            |o| text_or(o, "/spec/storageClassName", "<unset>"),
        ),
        column(
            "VolumeAttributesClass",
            "string",
            "volumeAttributesClassName may be used to set the VolumeAttributesClass used by this claim.",
            |o| text_or(o, "/spec/volumeAttributesClassName", "<unset>"),
        ),
        age_column(),
        wide(
            "VolumeMode",
            "string",
            "volumeMode defines what type of volume is required by the claim.",
            |o| text_or(o, "/spec/volumeMode", "Filesystem"),
        ),
    ]
}

pub(super) fn volume() -> Vec<Column> {
    vec![
        column(
            "Capacity",
            "string",
            "capacity is the description of the persistent volume's resources and capacity.",
            |o| text_or(o, "/spec/capacity/storage", ""),
        ),
        column(
            "Access Modes",
            "string",
            "accessModes contains all ways the volume can be mounted.",
            |o| access_modes(o, "/spec/accessModes"),
        ),
        column(
            "Reclaim Policy",
            "string",
            "persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim.",
            |o| text_or(o, "/spec/persistentVolumeReclaimPolicy", "Retain"),
        ),
        column(
            "Status",
            "string",
            "phase indicates if a volume is available, bound to a claim, or released by a claim.",
            |o| text_or(o, "/status/phase", "Pending"),
        ),
        column(
            "Claim",
            "string",
            "claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim.",
            |o| match o.pointer("/spec/claimRef") {
                Some(r) if r.is_object() => json!(format!(
                    "{}/{}",
                    r["namespace"].as_str().unwrap_or(""),
                    r["name"].as_str().unwrap_or("")
                )),
                _ => json!(""),
            },
        ),
        column(
            "StorageClass",
            "string",
            "storageClassName is the name of StorageClass to which this persistent volume belongs.",
            |o| text_or(o, "/spec/storageClassName", ""),
        ),
        column(
            "VolumeAttributesClass",
            "string",
            "Name of VolumeAttributesClass to which this persistent volume belongs.",
            |o| text_or(o, "/spec/volumeAttributesClassName", "<unset>"),
        ),
        column(
            "Reason",
            "string",
            "reason is a brief CamelCase string that describes any failure.",
            |o| text_or(o, "/status/reason", ""),
        ),
        age_column(),
        wide(
            "VolumeMode",
            "string",
            "volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state.",
            |o| text_or(o, "/spec/volumeMode", "Filesystem"),
        ),
    ]
}
