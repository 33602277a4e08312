use serde_json::{Value, json};

use super::cells::selector;
use super::columns::declares;
use super::core_v1::core;
use super::others::other;
use super::workloads::{apps, batch};
use super::{builtin, default_table};
use crate::printers::column::{Cell, human_duration};

fn row(group: &str, kind: &str, o: &Value) -> Vec<(String, Value)> {
    builtin(group, kind)
        .expect("a printer")
        .into_iter()
        .filter(|c| c.priority == 0 && !matches!(c.cell, Cell::Age | Cell::Name))
        .map(|c| {
            let value = match c.cell {
                Cell::Print(print) => print(o),
                _ => Value::Null,
            };
            (c.name, value)
        })
        .collect()
}

fn cells(group: &str, kind: &str, o: Value) -> Vec<Value> {
    row(group, kind, &o).into_iter().map(|(_, v)| v).collect()
}

#[test]
fn workloads_print_replicas_and_status() {
    let deploy = json!({"spec": {"replicas": 3}, "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}});
    assert_eq!(
        cells("apps", "Deployment", deploy),
        [json!("2/3"), json!(3), json!(2)]
    );
    let sts = json!({"spec": {"replicas": 2}});
    assert_eq!(cells("apps", "StatefulSet", sts), [json!("0/2")]);
    let job = json!({"spec": {"completions": 3}, "status": {"succeeded": 1,
        "conditions": [{"type": "Complete", "status": "True"}]}});
    assert_eq!(
        cells("batch", "Job", job)[..2],
        [json!("Complete"), json!("1/3")]
    );
    let running = json!({"spec": {"parallelism": 2}, "status": {}});
    assert_eq!(
        cells("batch", "Job", running)[..2],
        [json!("Running"), json!("0/1 of 2")]
    );
    let cron = json!({"spec": {"schedule": "*/5 * * * *"}});
    assert_eq!(
        cells("batch", "CronJob", cron),
        [
            json!("*/5 * * * *"),
            json!("<none>"),
            json!("False"),
            json!(0),
            json!("<none>")
        ]
    );
}

#[test]
fn services_quotas_and_bindings_print_as_kubectl_shows_them() {
    let svc = json!({"spec": {"clusterIP": "10.0.0.7", "selector": {"app": "web"},
        "ports": [{"port": 80, "protocol": "TCP"}, {"port": 443, "nodePort": 30443}]}});
    assert_eq!(
        cells("", "Service", svc),
        [
            json!("ClusterIP"),
            json!("10.0.0.7"),
            json!("<none>"),
            json!("80/TCP,443:30443/TCP")
        ]
    );
    let quota = json!({"spec": {"hard": {"pods": "10", "limits.cpu": "2"}}});
    assert_eq!(cells("", "ResourceQuota", quota), [json!(""), json!("")]);
    let quota = json!({"spec": {"hard": {"pods": "10", "limits.cpu": "2"}},
        "status": {"hard": {"services": "3", "pods": "10", "limits.cpu": "2"}, "used": {"pods": "1"}}});
    assert_eq!(
        cells("", "ResourceQuota", quota),
        [json!("pods: 1/10, services: 0/3"), json!("limits.cpu: 0/2")]
    );
    let binding = json!({"roleRef": {"kind": "ClusterRole", "name": "edit"}});
    assert_eq!(
        cells("rbac.authorization.k8s.io", "RoleBinding", binding),
        [json!("ClusterRole/edit")]
    );
    let sel = json!({"matchLabels": {"app": "web"}, "matchExpressions": [
        {"key": "tier", "operator": "In", "values": ["a", "b"]},
        {"key": "gone", "operator": "DoesNotExist"}]});
    assert_eq!(selector(Some(&sel)), "app=web,!gone,tier in (a,b)");
}

#[test]
fn durations_read_as_kubectl_prints_them() {
    let cases = [
        (5, "5s"),
        (119, "119s"),
        (185, "3m5s"),
        (600, "10m"),
        (3 * 3600 + 60, "3h1m"),
        (30 * 3600, "30h"),
        (3 * 86400 + 3600 * 4, "3d4h"),
        (40 * 86400, "40d"),
        (3 * 365 * 86400, "3y"),
    ];
    for (seconds, shown) in cases {
        assert_eq!(human_duration(seconds), shown, "{seconds}s");
    }
}

/// Every built-in kind with a printer here, by group.
const PRINTED: [(&str, &str); 37] = [
    ("", "ComponentStatus"),
    ("", "ConfigMap"),
    ("", "Endpoints"),
    ("", "Namespace"),
    ("", "Node"),
    ("", "PersistentVolume"),
    ("", "PersistentVolumeClaim"),
    ("", "Pod"),
    ("", "PodTemplate"),
    ("", "ReplicationController"),
    ("", "ResourceQuota"),
    ("", "Secret"),
    ("", "Service"),
    ("", "ServiceAccount"),
    (
        "admissionregistration.k8s.io",
        "MutatingWebhookConfiguration",
    ),
    (
        "admissionregistration.k8s.io",
        "ValidatingWebhookConfiguration",
    ),
    ("apiregistration.k8s.io", "APIService"),
    ("apps", "ControllerRevision"),
    ("apps", "DaemonSet"),
    ("apps", "Deployment"),
    ("apps", "ReplicaSet"),
    ("apps", "StatefulSet"),
    ("autoscaling", "HorizontalPodAutoscaler"),
    ("batch", "CronJob"),
    ("batch", "Job"),
    ("certificates.k8s.io", "CertificateSigningRequest"),
    ("coordination.k8s.io", "Lease"),
    ("discovery.k8s.io", "EndpointSlice"),
    ("networking.k8s.io", "Ingress"),
    ("networking.k8s.io", "IngressClass"),
    ("networking.k8s.io", "NetworkPolicy"),
    ("node.k8s.io", "RuntimeClass"),
    ("policy", "PodDisruptionBudget"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"),
    ("rbac.authorization.k8s.io", "RoleBinding"),
    ("scheduling.k8s.io", "PriorityClass"),
    ("storage.k8s.io", "StorageClass"),
];

#[test]
fn every_declared_column_has_its_cell_and_every_cell_its_column() {
    for (group, kind) in PRINTED {
        let cells = match group {
            "" => core(kind),
            "apps" => apps(kind),
            "batch" => batch(kind),
            _ => other(group, kind),
        }
        .unwrap_or_else(|| panic!("{group}/{kind} has cells"));
        for (name, _) in &cells {
            assert!(declares(kind, name), "{kind} declares {name}");
        }
        for column in builtin(group, kind).expect("declared") {
            let computed = cells.iter().any(|(name, _)| *name == column.name)
                || matches!(column.cell, Cell::Name | Cell::Age);
            assert!(computed, "{kind}'s {} has a cell", column.name);
            assert!(
                !column.description.is_empty()
                    || (kind, column.name.as_str()) == ("RuntimeClass", "Handler"),
                "{kind}'s {} is described",
                column.name
            );
        }
    }
    for (group, kind) in [("", "LimitRange"), ("rbac.authorization.k8s.io", "Role")] {
        assert!(default_table(group, kind));
        let columns = builtin(group, kind).expect("the default table");
        let names: Vec<&str> = columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["Name", "Created At"]);
        assert_eq!(columns[1].kind, "date");
    }
}

#[test]
fn columns_are_described_as_the_real_server_describes_them() {
    let pod = builtin("", "Pod").expect("a printer");
    let ip = pod.iter().find(|c| c.name == "IP").expect("an IP column");
    assert_eq!(ip.priority, 1);
    assert!(ip.description.ends_with("Empty if not yet allocated."));
    assert_eq!(pod[0].format, "name");
    let deployment = builtin("apps", "Deployment").expect("a printer");
    let available = deployment.iter().find(|c| c.name == "Available");
    assert_eq!(available.map(|c| c.kind.as_str()), Some("string"));
    let names: Vec<String> = builtin("", "ResourceQuota")
        .expect("a printer")
        .into_iter()
        .map(|c| c.name)
        .collect();
    assert_eq!(names, ["Name", "Request", "Limit", "Age"]);
}
