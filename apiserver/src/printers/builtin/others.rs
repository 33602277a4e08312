//! Printers of the other groups: RBAC, networking, policy, storage…

use serde_json::{Value, json};

use super::cells::{budget, condition, int, items, len, list_with_more, selector, text_or};
use super::columns::{Cells, column};
use crate::printers::column::{Cell, human_duration};

pub(super) fn other(group: &str, kind: &str) -> Option<Cells> {
    Some(match (group, kind) {
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => role_binding(),
        ("coordination.k8s.io", "Lease") => {
            vec![column("Holder", |o| text_or(o, "/spec/holderIdentity", ""))]
        }
        ("networking.k8s.io", "Ingress") => vec![
            column("Class", |o| text_or(o, "/spec/ingressClassName", "<none>")),
            column("Hosts", |o| {
                let hosts: Vec<String> = items(o, "/spec/rules")
                    .iter()
                    .filter_map(|r| r["host"].as_str().map(str::to_string))
                    .collect();
                json!(if hosts.is_empty() {
                    "*".into()
                } else {
                    hosts.join(",")
                })
            }),
            column("Address", |o| {
                let points: Vec<String> = items(o, "/status/loadBalancer/ingress")
                    .iter()
                    .filter_map(|i| i["ip"].as_str().or(i["hostname"].as_str()))
                    .map(str::to_string)
                    .collect();
                json!(points.join(","))
            }),
            column("Ports", |o| {
                json!(if len(o, "/spec/tls") > 0 {
                    "80, 443"
                } else {
                    "80"
                })
            }),
        ],
        // `printIngressClass`: the default class marked, the parameters'
        // kind qualified by their group.
        ("networking.k8s.io", "IngressClass") => vec![
            column("Name", |o| {
                let name = o
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let default = o
                    .pointer("/metadata/annotations/ingressclass.kubernetes.io~1is-default-class")
                    .and_then(Value::as_str)
                    == Some("true");
                json!(if default {
                    format!("{name} (default)")
                } else {
                    name.to_string()
                })
            }),
            column("Controller", |o| text_or(o, "/spec/controller", "")),
            column("Parameters", |o| match o.pointer("/spec/parameters") {
                Some(p) if p.is_object() => {
                    let kind = p["kind"].as_str().unwrap_or("");
                    let kind = match p["apiGroup"].as_str() {
                        Some(group) => format!("{kind}.{group}"),
                        None => kind.to_string(),
                    };
                    json!(format!("{kind}/{}", p["name"].as_str().unwrap_or("")))
                }
                _ => json!("<none>"),
            }),
        ],
        // `printEndpointSlice`: at most three ports (a port without a
        // number by its name, else `*`) and three addresses.
        ("discovery.k8s.io", "EndpointSlice") => vec![
            column("AddressType", |o| text_or(o, "/addressType", "")),
            column("Ports", |o| {
                let ports: Vec<String> = items(o, "/ports")
                    .iter()
                    .map(|p| match (p["port"].as_i64(), p["name"].as_str()) {
                        (Some(port), _) => port.to_string(),
                        (None, Some(name)) => name.to_string(),
                        (None, None) => "*".to_string(),
                    })
                    .collect();
                list_with_more(&ports, 3)
            }),
            column("Endpoints", |o| {
                let addresses: Vec<String> = items(o, "/endpoints")
                    .iter()
                    .flat_map(|e| items(e, "/addresses"))
                    .filter_map(|a| a.as_str().map(str::to_string))
                    .collect();
                list_with_more(&addresses, 3)
            }),
        ],
        ("networking.k8s.io", "NetworkPolicy") => vec![column("Pod-Selector", |o| {
            json!(selector(o.pointer("/spec/podSelector")))
        })],
        ("policy", "PodDisruptionBudget") => vec![
            column("Min Available", |o| budget(o, "/spec/minAvailable")),
            column("Max Unavailable", |o| budget(o, "/spec/maxUnavailable")),
            column("Allowed Disruptions", |o| {
                int(o, "/status/disruptionsAllowed")
            }),
        ],
        ("autoscaling", "HorizontalPodAutoscaler") => autoscaler(),
        // `printScale`: a Scale read through a `scale` subresource (its Name
        // declared without the name format).
        ("autoscaling", "Scale") => vec![
            ("Name", Cell::Name),
            column("Desired", |o| int(o, "/spec/replicas")),
            column("Available", |o| int(o, "/status/replicas")),
        ],
        // `printStorageClass`: the default class marked
        // (`IsDefaultAnnotation`: the GA annotation or the beta one).
        ("storage.k8s.io", "StorageClass") => vec![
            column("Name", |o| {
                let name = o
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let annotation = |key: &str| {
                    o.pointer("/metadata/annotations")
                        .and_then(|a| a.get(key))
                        .and_then(Value::as_str)
                        == Some("true")
                };
                let default = annotation("storageclass.kubernetes.io/is-default-class")
                    || annotation("storageclass.beta.kubernetes.io/is-default-class");
                json!(if default {
                    format!("{name} (default)")
                } else {
                    name.to_string()
                })
            }),
            column("Provisioner", |o| text_or(o, "/provisioner", "")),
            column("ReclaimPolicy", |o| text_or(o, "/reclaimPolicy", "Delete")),
            column("VolumeBindingMode", |o| {
                text_or(o, "/volumeBindingMode", "Immediate")
            }),
            column("AllowVolumeExpansion", |o| {
                flag(o, "/allowVolumeExpansion", false)
            }),
        ],
        // `printCSIDriver`: its flags as booleans (attaching by default),
        // the token audiences, the lifecycle modes.
        ("storage.k8s.io", "CSIDriver") => vec![
            column("AttachRequired", |o| flag(o, "/spec/attachRequired", true)),
            column("PodInfoOnMount", |o| flag(o, "/spec/podInfoOnMount", false)),
            column("StorageCapacity", |o| {
                flag(o, "/spec/storageCapacity", false)
            }),
            column("TokenRequests", |o| {
                match o.pointer("/spec/tokenRequests") {
                    Some(Value::Array(requests)) => {
                        let audiences: Vec<&str> = requests
                            .iter()
                            .map(|r| r["audience"].as_str().unwrap_or(""))
                            .collect();
                        json!(audiences.join(","))
                    }
                    _ => json!("<unset>"),
                }
            }),
            column("RequiresRepublish", |o| {
                flag(o, "/spec/requiresRepublish", false)
            }),
            column("Modes", |o| {
                let modes = items(o, "/spec/volumeLifecycleModes");
                let modes: Vec<&str> = modes.iter().filter_map(Value::as_str).collect();
                json!(if modes.is_empty() {
                    "<none>".to_string()
                } else {
                    modes.join(",")
                })
            }),
        ],
        ("scheduling.k8s.io", "PriorityClass") => vec![
            column("Value", |o| int(o, "/value")),
            column("Global-Default", |o| {
                json!(
                    o.get("globalDefault")
                        .and_then(Value::as_bool)
                        .unwrap_or(false)
                )
            }),
            column("PreemptionPolicy", |o| {
                text_or(o, "/preemptionPolicy", "PreemptLowerPriority")
            }),
        ],
        ("node.k8s.io", "RuntimeClass") => vec![column("Handler", |o| text_or(o, "/handler", ""))],
        (
            "admissionregistration.k8s.io",
            "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration",
        ) => vec![column("Webhooks", |o| json!(len(o, "/webhooks")))],
        ("certificates.k8s.io", "CertificateSigningRequest") => certificate_request(),
        ("apiregistration.k8s.io", "APIService") => vec![
            column("Service", |o| match o.pointer("/spec/service") {
                Some(s) if s.is_object() => json!(format!(
                    "{}/{}",
                    s["namespace"].as_str().unwrap_or(""),
                    s["name"].as_str().unwrap_or("")
                )),
                _ => json!("Local"),
            }),
            column("Available", |o| {
                json!(match condition(o, "Available").as_deref() {
                    Some("True") => "True".to_string(),
                    Some(other) => other.to_string(),
                    None => "Unknown".to_string(),
                })
            }),
        ],
        _ => return None,
    })
}

/// A boolean field, `default` when unset (a Go `*bool` printed).
fn flag(o: &Value, pointer: &str, default: bool) -> Value {
    json!(
        o.pointer(pointer)
            .and_then(Value::as_bool)
            .unwrap_or(default)
    )
}

pub(super) fn role_binding() -> Cells {
    vec![
        column("Role", |o| {
            json!(format!(
                "{}/{}",
                o.pointer("/roleRef/kind")
                    .and_then(Value::as_str)
                    .unwrap_or(""),
                o.pointer("/roleRef/name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
            ))
        }),
        column("Users", |o| subjects(o, "User")),
        column("Groups", |o| subjects(o, "Group")),
        column("ServiceAccounts", |o| subjects(o, "ServiceAccount")),
    ]
}

pub(super) fn subjects(o: &Value, kind: &str) -> Value {
    let names: Vec<String> = items(o, "/subjects")
        .iter()
        .filter(|s| s["kind"] == kind)
        .map(|s| {
            let name = s["name"].as_str().unwrap_or("");
            match s["namespace"].as_str() {
                Some(ns) if kind == "ServiceAccount" => format!("{ns}/{name}"),
                _ => name.to_string(),
            }
        })
        .collect();
    json!(names.join(", "))
}

pub(super) fn autoscaler() -> Cells {
    vec![
        column("Reference", |o| {
            json!(format!(
                "{}/{}",
                o.pointer("/spec/scaleTargetRef/kind")
                    .and_then(Value::as_str)
                    .unwrap_or(""),
                o.pointer("/spec/scaleTargetRef/name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
            ))
        }),
        column("Targets", |o| {
            // autoscaling/v1 carries one CPU target; v2 a list of metrics.
            if let Some(cpu) = o.pointer("/spec/targetCPUUtilizationPercentage") {
                let current = o
                    .pointer("/status/currentCPUUtilizationPercentage")
                    .map_or("<unknown>".into(), |c| format!("{c}%"));
                return json!(format!("cpu: {current}/{cpu}%"));
            }
            let targets: Vec<String> = items(o, "/spec/metrics")
                .iter()
                .map(|m| {
                    let resource = m.pointer("/resource/name").and_then(Value::as_str);
                    let target = m
                        .pointer("/resource/target/averageUtilization")
                        .map(|u| format!("{u}%"))
                        .or_else(|| {
                            m.pointer("/resource/target/averageValue")
                                .and_then(Value::as_str)
                                .map(str::to_string)
                        })
                        .unwrap_or_else(|| "<unknown>".into());
                    match resource {
                        Some(name) => format!("{name}: <unknown>/{target}"),
                        None => format!("<unknown>/{target}"),
                    }
                })
                .collect();
            json!(if targets.is_empty() {
                "<none>".into()
            } else {
                targets.join(", ")
            })
        }),
        column("MinPods", |o| {
            json!(
                o.pointer("/spec/minReplicas")
                    .and_then(Value::as_i64)
                    .unwrap_or(1)
                    .to_string()
            )
        }),
        column("MaxPods", |o| int(o, "/spec/maxReplicas")),
        column("Replicas", |o| int(o, "/status/currentReplicas")),
    ]
}

pub(super) fn certificate_request() -> Cells {
    vec![
        column("SignerName", |o| text_or(o, "/spec/signerName", "")),
        column("Requestor", |o| text_or(o, "/spec/username", "")),
        column("RequestedDuration", |o| {
            match o.pointer("/spec/expirationSeconds").and_then(Value::as_i64) {
                Some(s) => json!(human_duration(s)),
                None => json!("<none>"),
            }
        }),
        column("Condition", |o| {
            let states: Vec<String> = items(o, "/status/conditions")
                .iter()
                .filter_map(|c| c["type"].as_str().map(str::to_string))
                .collect();
            json!(if states.is_empty() {
                "Pending".into()
            } else {
                states.join(",")
            })
        }),
    ]
}
