use serde_json::json;

use super::*;

#[test]
fn the_cpu_target_and_the_other_metrics_go_to_v1_and_back() {
    let v2 = json!({"apiVersion": STORAGE, "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "h"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1, "maxReplicas": 5,
            "metrics": [
                {"type": "Pods", "pods": {"metric": {"name": "qps"},
                    "target": {"type": "AverageValue", "averageValue": "10"}}},
                {"type": "Resource", "resource": {"name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 60}}}]},
        "status": {"desiredReplicas": 0, "currentMetrics": null}});
    let v1 = to_v1(&v2);
    assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 60);
    assert_eq!(
        v1["metadata"]["annotations"][METRIC_SPECS],
        r#"[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"10"}}]"#
    );
    assert_eq!(
        v1["status"],
        json!({"currentReplicas": 0, "desiredReplicas": 0})
    );
    let back = to_v2(&v1);
    assert_eq!(back["spec"], v2["spec"]);
    assert!(back["metadata"].get("annotations").is_none());
    assert_eq!(back["status"], v2["status"]);
}

#[test]
fn a_v1_autoscaler_without_a_target_gets_the_default_cpu_metric() {
    let v1 = json!({"apiVersion": V1, "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "h"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 2}});
    let v2 = to_v2(&v1);
    assert_eq!(
        v2["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
        80
    );
}

#[test]
fn the_behavior_is_kept_in_the_internal_types_encoding() {
    let v2 = json!({"apiVersion": STORAGE, "metadata": {},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 2,
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 300, "selectPolicy": "Max",
                "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}}}});
    let v1 = to_v1(&v2);
    assert_eq!(
        v1["metadata"]["annotations"][BEHAVIOR],
        r#"{"ScaleUp":null,"ScaleDown":{"StabilizationWindowSeconds":300,"SelectPolicy":"Max","Policies":[{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null}}"#
    );
    assert_eq!(to_v2(&v1)["spec"]["behavior"], v2["spec"]["behavior"]);
}
