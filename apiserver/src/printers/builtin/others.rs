//! Printers of the other groups: RBAC, networking, policy, storage…

use serde_json::{Value, json};

use super::cells::{budget, condition, int, items, len, selector, text_or};
use super::columns::{age_column, column, created_at_column, wide};
use crate::printers::column::{Column, human_duration};

pub(super) fn other(group: &str, kind: &str) -> Option<Vec<Column>> {
    Some(match (group, kind) {
        ("rbac.authorization.k8s.io", "Role" | "ClusterRole") => vec![created_at_column()],
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => role_binding(),
        ("coordination.k8s.io", "Lease") => vec![
            column(
                "Holder",
                "string",
                "holderIdentity contains the identity of the holder of a current lease.",
                |o| text_or(o, "/spec/holderIdentity", ""),
            ),
            age_column(),
        ],
        ("networking.k8s.io", "Ingress") => vec![
            column(
                "Class",
                "string",
                "The name of the IngressClass resource.",
                |o| text_or(o, "/spec/ingressClassName", "<none>"),
            ),
            column(
                "Hosts",
                "string",
                "Hosts that incoming requests are matched against before the ingress rule",
                |o| {
                    let hosts: Vec<String> = items(o, "/spec/rules")
                        .iter()
                        .filter_map(|r| r["host"].as_str().map(str::to_string))
                        .collect();
                    json!(if hosts.is_empty() {
                        "*".into()
                    } else {
                        hosts.join(",")
                    })
                },
            ),
            column(
                "Address",
                "string",
                "Address is a list containing ingress points for the load-balancer",
                |o| {
                    let points: Vec<String> = items(o, "/status/loadBalancer/ingress")
                        .iter()
                        .filter_map(|i| i["ip"].as_str().or(i["hostname"].as_str()))
                        .map(str::to_string)
                        .collect();
                    json!(points.join(","))
                },
            ),
            column(
                "Ports",
                "string",
                "Ports of TLS configurations that open",
                |o| {
                    json!(if len(o, "/spec/tls") > 0 {
                        "80, 443"
                    } else {
                        "80"
                    })
                },
            ),
            age_column(),
        ],
        ("networking.k8s.io", "IngressClass") => vec![
            column(
                "Controller",
                "string",
                "Controller that is responsible for handling this class",
                |o| text_or(o, "/spec/controller", ""),
            ),
            column(
                "Parameters",
                "string",
                "A reference to a resource with additional parameters",
                |o| match o.pointer("/spec/parameters") {
                    Some(p) if p.is_object() => json!(format!(
                        "{}/{}",
                        p["kind"].as_str().unwrap_or(""),
                        p["name"].as_str().unwrap_or("")
                    )),
                    _ => json!("<none>"),
                },
            ),
            age_column(),
        ],
        ("networking.k8s.io", "NetworkPolicy") => vec![
            column(
                "Pod-Selector",
                "string",
                "Selects the pods to which this NetworkPolicy object applies.",
                |o| json!(selector(o.pointer("/spec/podSelector"))),
            ),
            age_column(),
        ],
        ("policy", "PodDisruptionBudget") => vec![
            column(
                "Min Available",
                "string",
                "The minimum number of pods that must be available.",
                |o| budget(o, "/spec/minAvailable"),
            ),
            column(
                "Max Unavailable",
                "string",
                "The maximum number of pods that may be unavailable.",
                |o| budget(o, "/spec/maxUnavailable"),
            ),
            column(
                "Allowed Disruptions",
                "integer",
                "Calculated number of pods that may be disrupted at this time.",
                |o| int(o, "/status/disruptionsAllowed"),
            ),
            age_column(),
        ],
        ("autoscaling", "HorizontalPodAutoscaler") => autoscaler(),
        ("storage.k8s.io", "StorageClass") => vec![
            column(
                "Provisioner",
                "string",
                "provisioner indicates the type of the provisioner.",
                |o| text_or(o, "/provisioner", ""),
            ),
            column(
                "ReclaimPolicy",
                "string",
                "reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class.",
                |o| text_or(o, "/reclaimPolicy", "Delete"),
            ),
            column(
                "VolumeBindingMode",
                "string",
                "volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.",
                |o| text_or(o, "/volumeBindingMode", "Immediate"),
            ),
            column(
                "AllowVolumeExpansion",
                "string",
                "allowVolumeExpansion shows whether the storage class allow volume expand.",
                |o| {
                    json!(
                        o.get("allowVolumeExpansion")
                            .and_then(Value::as_bool)
                            .unwrap_or(false)
                            .to_string()
                    )
                },
            ),
            age_column(),
        ],
        ("scheduling.k8s.io", "PriorityClass") => vec![
            column(
                "Value",
                "integer",
                "value represents the integer value of this priority class.",
                |o| int(o, "/value"),
            ),
            column(
                "Global-Default",
                "boolean",
                "globalDefault specifies whether this PriorityClass should be considered as the default priority.",
                |o| {
                    json!(
                        o.get("globalDefault")
                            .and_then(Value::as_bool)
                            .unwrap_or(false)
                    )
                },
            ),
            age_column(),
            column(
                "PreemptionPolicy",
                "string",
                "preemptionPolicy is the Policy for preempting pods with lower priority.",
                |o| text_or(o, "/preemptionPolicy", "PreemptLowerPriority"),
            ),
        ],
        ("node.k8s.io", "RuntimeClass") => vec![
            column(
                "Handler",
                "string",
                "handler specifies the underlying runtime and configuration that the CRI implementation will use to handle pods of this class.",
                |o| text_or(o, "/handler", ""),
            ),
            age_column(),
        ],
        (
            "admissionregistration.k8s.io",
            "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration",
        ) => vec![
            column(
                "Webhooks",
                "integer",
                "Webhooks is a list of webhooks and the affected resources and operations.",
                |o| json!(len(o, "/webhooks")),
            ),
            age_column(),
        ],
        ("certificates.k8s.io", "CertificateSigningRequest") => certificate_request(),
        ("apiregistration.k8s.io", "APIService") => vec![
            column(
                "Service",
                "string",
                "The reference to the service that hosts this API endpoint.",
                |o| match o.pointer("/spec/service") {
                    Some(s) if s.is_object() => json!(format!(
                        "{}/{}",
                        s["namespace"].as_str().unwrap_or(""),
                        s["name"].as_str().unwrap_or("")
                    )),
                    _ => json!("Local"),
                },
            ),
            column(
                "Available",
                "string",
                "Whether this service is available.",
                |o| {
                    json!(match condition(o, "Available").as_deref() {
                        Some("True") => "True".to_string(),
                        Some(other) => other.to_string(),
                        None => "Unknown".to_string(),
                    })
                },
            ),
            age_column(),
        ],
        _ => return None,
    })
}

pub(super) fn role_binding() -> Vec<Column> {
    vec![
        column("Role", "string", "RoleRef references a role.", |o| {
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
        age_column(),
        wide("Users", "string", "Users in the roleBinding", |o| {
            subjects(o, "User")
        }),
        wide("Groups", "string", "Groups in the roleBinding", |o| {
            subjects(o, "Group")
        }),
        wide(
            "ServiceAccounts",
            "string",
            "ServiceAccounts in the roleBinding",
            |o| subjects(o, "ServiceAccount"),
        ),
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

pub(super) fn autoscaler() -> Vec<Column> {
    vec![
        column(
            "Reference",
            "string",
            "Reference to the scaled resource.",
            |o| {
                json!(format!(
                    "{}/{}",
                    o.pointer("/spec/scaleTargetRef/kind")
                        .and_then(Value::as_str)
                        .unwrap_or(""),
                    o.pointer("/spec/scaleTargetRef/name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                ))
            },
        ),
        column(
            "Targets",
            "string",
            "The target metrics and their current values.",
            |o| {
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
            },
        ),
        column("MinPods", "string", "Minimum number of replicas.", |o| {
            json!(
                o.pointer("/spec/minReplicas")
                    .and_then(Value::as_i64)
                    .unwrap_or(1)
                    .to_string()
            )
        }),
        column("MaxPods", "integer", "Maximum number of replicas.", |o| {
            int(o, "/spec/maxReplicas")
        }),
        column(
            "Replicas",
            "integer",
            "Current number of replicas of pods managed by this autoscaler.",
            |o| int(o, "/status/currentReplicas"),
        ),
        age_column(),
    ]
}

pub(super) fn certificate_request() -> Vec<Column> {
    vec![
        age_column(),
        column("SignerName", "string", "Name of the signer", |o| {
            text_or(o, "/spec/signerName", "")
        }),
        column("Requestor", "string", "Name of the requestor", |o| {
            text_or(o, "/spec/username", "")
        }),
        column(
            "RequestedDuration",
            "string",
            "Requested certificate duration",
            |o| match o.pointer("/spec/expirationSeconds").and_then(Value::as_i64) {
                Some(s) => json!(human_duration(s)),
                None => json!("<none>"),
            },
        ),
        column("Condition", "string", "State of the request", |o| {
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
