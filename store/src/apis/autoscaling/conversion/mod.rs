//! HorizontalPodAutoscalers between autoscaling/v1 and autoscaling/v2
//! (`pkg/apis/autoscaling/v1/conversion.go`): one set of objects, stored in
//! v2. v1 keeps the CPU utilization target in `targetCPUUtilizationPercentage`
//! and what it has no field for in annotations — the other metrics
//! (`autoscaling.alpha.kubernetes.io/metrics`), the current metrics, the
//! conditions and the behavior — JSON as Go encodes the v1 (and, for the
//! behavior, the internal) types; converting back reads them and drops them.

use serde_json::{Map, Value, json};

mod decode;
mod encode;
#[cfg(test)]
mod tests;

use decode::{behavior_v2, metric_spec_v2, metric_status_v2};
use encode::{behavior_internal, condition_v1, metric_spec_v1, metric_status_v1};

/// The version the autoscalers are stored in.
pub(crate) const STORAGE: &str = "autoscaling/v2";
pub(super) const V1: &str = "autoscaling/v1";

pub(super) const METRIC_SPECS: &str = "autoscaling.alpha.kubernetes.io/metrics";
const METRIC_STATUSES: &str = "autoscaling.alpha.kubernetes.io/current-metrics";
const CONDITIONS: &str = "autoscaling.alpha.kubernetes.io/conditions";
pub(super) const BEHAVIOR: &str = "autoscaling.alpha.kubernetes.io/behavior";
/// The annotations only conversion writes (`DropRoundTripHorizontalPodAutoscalerAnnotations`).
const ROUND_TRIP: [&str; 6] = [
    METRIC_SPECS,
    BEHAVIOR,
    "autoscaling.alpha.kubernetes.io/scale-down-tolerance",
    "autoscaling.alpha.kubernetes.io/scale-up-tolerance",
    METRIC_STATUSES,
    CONDITIONS,
];

/// `hpa` in `api_version` (autoscaling/v1 or v2), whichever it is in;
/// `None` when it is in that version already or `api_version` is neither.
pub(crate) fn convert(hpa: &Value, api_version: &str) -> Option<Value> {
    let from = hpa.get("apiVersion").and_then(Value::as_str);
    match (from, api_version) {
        (Some(V1), STORAGE) => Some(to_v2(hpa)),
        (Some(STORAGE), V1) => Some(to_v1(hpa)),
        _ => None,
    }
}

/// The CPU utilization target v1 has a field for.
fn is_cpu_utilization(metric: &Value) -> bool {
    metric["type"] == "Resource"
        && metric["resource"]["name"] == "cpu"
        && metric["resource"]["target"]["averageUtilization"].is_i64()
}

/// A v2 autoscaler as v1 shows it.
pub(crate) fn to_v1(hpa: &Value) -> Value {
    let spec = &hpa["spec"];
    let status = &hpa["status"];
    let mut out = Map::new();
    if let Some(kind) = hpa.get("kind") {
        out.insert("kind".into(), kind.clone());
    }
    out.insert("apiVersion".into(), json!(V1));
    let mut metadata = hpa.get("metadata").cloned().unwrap_or_else(|| json!({}));
    let mut annotations: Vec<(&str, String)> = Vec::new();

    let mut v1_spec = Map::new();
    v1_spec.insert("scaleTargetRef".into(), reference(&spec["scaleTargetRef"]));
    if !spec["minReplicas"].is_null() {
        v1_spec.insert("minReplicas".into(), spec["minReplicas"].clone());
    }
    v1_spec.insert(
        "maxReplicas".into(),
        json!(spec["maxReplicas"].as_i64().unwrap_or(0)),
    );
    let metrics = spec["metrics"].as_array().cloned().unwrap_or_default();
    if let Some(cpu) = metrics.iter().find(|m| is_cpu_utilization(m)) {
        v1_spec.insert(
            "targetCPUUtilizationPercentage".into(),
            cpu["resource"]["target"]["averageUtilization"].clone(),
        );
    }
    let others: Vec<String> = metrics
        .iter()
        .filter(|m| !is_cpu_utilization(m))
        .map(metric_spec_v1)
        .collect();
    if !others.is_empty() {
        annotations.push((METRIC_SPECS, format!("[{}]", others.join(","))));
    }
    let current = status["currentMetrics"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if !current.is_empty() {
        let encoded: Vec<String> = current.iter().map(metric_status_v1).collect();
        annotations.push((METRIC_STATUSES, format!("[{}]", encoded.join(","))));
    }
    if spec["behavior"].is_object() {
        annotations.push((BEHAVIOR, behavior_internal(&spec["behavior"])));
    }
    let conditions = status["conditions"].as_array().cloned().unwrap_or_default();
    if !conditions.is_empty() {
        let encoded: Vec<String> = conditions.iter().map(condition_v1).collect();
        annotations.push((CONDITIONS, format!("[{}]", encoded.join(","))));
    }
    set_annotations(&mut metadata, &annotations);
    out.insert("metadata".into(), metadata);
    out.insert("spec".into(), Value::Object(v1_spec));

    let mut v1_status = Map::new();
    for key in ["observedGeneration", "lastScaleTime"] {
        if !status[key].is_null() {
            v1_status.insert(key.into(), status[key].clone());
        }
    }
    for key in ["currentReplicas", "desiredReplicas"] {
        v1_status.insert(key.into(), json!(status[key].as_i64().unwrap_or(0)));
    }
    // The last CPU utilization seen wins, as the Go loop has it.
    let cpu_now = current
        .iter()
        .filter(|m| m["type"] == "Resource" && m["resource"]["name"] == "cpu")
        .filter_map(|m| m["resource"]["current"]["averageUtilization"].as_i64())
        .next_back();
    if let Some(cpu) = cpu_now {
        v1_status.insert("currentCPUUtilizationPercentage".into(), json!(cpu));
    }
    out.insert("status".into(), Value::Object(v1_status));
    Value::Object(out)
}

/// A v1 autoscaler as v2 holds it.
pub(crate) fn to_v2(hpa: &Value) -> Value {
    let spec = &hpa["spec"];
    let status = &hpa["status"];
    let annotations = &hpa["metadata"]["annotations"];
    let annotation = |key: &str| -> Option<Value> {
        annotations[key]
            .as_str()
            .and_then(|text| serde_json::from_str(text).ok())
    };
    let mut out = Map::new();
    if let Some(kind) = hpa.get("kind") {
        out.insert("kind".into(), kind.clone());
    }
    out.insert("apiVersion".into(), json!(STORAGE));
    let mut metadata = hpa.get("metadata").cloned().unwrap_or_else(|| json!({}));
    if let Some(map) = metadata
        .get_mut("annotations")
        .and_then(Value::as_object_mut)
    {
        for key in ROUND_TRIP {
            map.remove(key);
        }
        if map.is_empty() {
            metadata.as_object_mut().map(|m| m.remove("annotations"));
        }
    }
    out.insert("metadata".into(), metadata);

    let mut v2_spec = Map::new();
    v2_spec.insert("scaleTargetRef".into(), reference(&spec["scaleTargetRef"]));
    if !spec["minReplicas"].is_null() {
        v2_spec.insert("minReplicas".into(), spec["minReplicas"].clone());
    }
    v2_spec.insert(
        "maxReplicas".into(),
        json!(spec["maxReplicas"].as_i64().unwrap_or(0)),
    );
    let cpu = spec["targetCPUUtilizationPercentage"].as_i64().map(|cpu| {
        json!({"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": cpu}}})
    });
    // The annotation's metrics first, then the CPU target.
    let mut metrics: Vec<Value> = match annotation(METRIC_SPECS) {
        Some(Value::Array(others)) => {
            let mut metrics: Vec<Value> = others.iter().map(metric_spec_v2).collect();
            metrics.extend(cpu.clone());
            metrics
        }
        _ => cpu.into_iter().collect(),
    };
    if metrics.is_empty() {
        // v1's implicit default, made explicit.
        metrics.push(json!({"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 80}}}));
    }
    v2_spec.insert("metrics".into(), Value::Array(metrics));
    if let Some(behavior) = annotation(BEHAVIOR).and_then(|b| behavior_v2(&b)) {
        v2_spec.insert("behavior".into(), behavior);
    }
    out.insert("spec".into(), Value::Object(v2_spec));

    let mut v2_status = Map::new();
    for key in ["observedGeneration", "lastScaleTime"] {
        if !status[key].is_null() {
            v2_status.insert(key.into(), status[key].clone());
        }
    }
    if let Some(current) = status["currentReplicas"].as_i64().filter(|c| *c != 0) {
        v2_status.insert("currentReplicas".into(), json!(current));
    }
    v2_status.insert(
        "desiredReplicas".into(),
        json!(status["desiredReplicas"].as_i64().unwrap_or(0)),
    );
    let current = match annotation(METRIC_STATUSES) {
        // The annotation's, which say more than the CPU figure.
        Some(Value::Array(current)) => Value::Array(current.iter().map(metric_status_v2).collect()),
        _ => match status["currentCPUUtilizationPercentage"].as_i64() {
            Some(cpu) => json!([{"type": "Resource", "resource": {"name": "cpu",
                "current": {"averageUtilization": cpu}}}]),
            None => Value::Null,
        },
    };
    v2_status.insert("currentMetrics".into(), current);
    if let Some(Value::Array(conditions)) = annotation(CONDITIONS)
        && !conditions.is_empty()
    {
        v2_status.insert("conditions".into(), Value::Array(conditions));
    }
    out.insert("status".into(), Value::Object(v2_status));
    Value::Object(out)
}

/// Writes the round-trip annotations (dropping any there were).
fn set_annotations(metadata: &mut Value, annotations: &[(&str, String)]) {
    let Some(meta) = metadata.as_object_mut() else {
        return;
    };
    if let Some(map) = meta.get_mut("annotations").and_then(Value::as_object_mut) {
        for key in ROUND_TRIP {
            map.remove(key);
        }
    }
    if annotations.is_empty() {
        return;
    }
    let map = meta
        .entry("annotations")
        .or_insert_with(|| json!({}))
        .as_object_mut();
    if let Some(map) = map {
        for (key, value) in annotations {
            map.insert((*key).to_string(), json!(value));
        }
    }
}

/// A `CrossVersionObjectReference` as Go writes it: kind and name always,
/// apiVersion when set.
pub(super) fn reference(r: &Value) -> Value {
    let mut out = Map::new();
    out.insert("kind".into(), json!(r["kind"].as_str().unwrap_or_default()));
    out.insert("name".into(), json!(r["name"].as_str().unwrap_or_default()));
    if let Some(v) = r["apiVersion"].as_str().filter(|v| !v.is_empty()) {
        out.insert("apiVersion".into(), json!(v));
    }
    Value::Object(out)
}
