use serde_json::{Value, json};

use super::builtin;
use super::cells::selector;
use crate::printers::column::{Cell, human_duration};

fn row(group: &str, kind: &str, o: &Value) -> Vec<(String, Value)> {
    builtin(group, kind)
        .expect("a printer")
        .into_iter()
        .filter(|c| c.priority == 0 && !matches!(c.cell, Cell::Age))
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
    let quota = json!({"spec": {"hard": {"pods": "10", "limits.cpu": "2"}}, "status": {"used": {"pods": "1"}}});
    assert_eq!(
        cells("", "ResourceQuota", quota),
        [json!("pods: 1/10"), json!("limits.cpu: 0/2")]
    );
    let binding = json!({"roleRef": {"kind": "ClusterRole", "name": "edit"}});
    assert_eq!(
        cells("rbac.authorization.k8s.io", "RoleBinding", binding),
        [json!("ClusterRole/edit")]
    );
    let sel = json!({"matchLabels": {"app": "web"}, "matchExpressions": [
        {"key": "tier", "operator": "In", "values": ["a", "b"]},
        {"key": "gone", "operator": "DoesNotExist"}]});
    assert_eq!(selector(Some(&sel)), "app=web,tier in (a,b),!gone");
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
