//! HorizontalPodAutoscalers between autoscaling/v1 and autoscaling/v2
//! (`pkg/apis/autoscaling/v1/conversion.go`): one set of objects, stored in
//! v2. v1 keeps the CPU utilization target in `targetCPUUtilizationPercentage`
//! and what it has no field for in annotations — the other metrics
//! (`autoscaling.alpha.kubernetes.io/metrics`), the current metrics, the
//! conditions and the behavior — JSON as Go encodes the v1 (and, for the
//! behavior, the internal) types; converting back reads them and drops them.

use serde_json::{Map, Value, json};

use crate::machinery::quantity::default_quantity;

/// The version the autoscalers are stored in.
pub(crate) const STORAGE: &str = "autoscaling/v2";
const V1: &str = "autoscaling/v1";

const METRIC_SPECS: &str = "autoscaling.alpha.kubernetes.io/metrics";
const METRIC_STATUSES: &str = "autoscaling.alpha.kubernetes.io/current-metrics";
const CONDITIONS: &str = "autoscaling.alpha.kubernetes.io/conditions";
const BEHAVIOR: &str = "autoscaling.alpha.kubernetes.io/behavior";
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
        .last();
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
fn reference(r: &Value) -> Value {
    let mut out = Map::new();
    out.insert("kind".into(), json!(r["kind"].as_str().unwrap_or_default()));
    out.insert("name".into(), json!(r["name"].as_str().unwrap_or_default()));
    if let Some(v) = r["apiVersion"].as_str().filter(|v| !v.is_empty()) {
        out.insert("apiVersion".into(), json!(v));
    }
    Value::Object(out)
}

/// JSON written in Go's field order: `(name, value)` pairs, a value left
/// out when `None`.
fn object(fields: &[(&str, Option<String>)]) -> String {
    let parts: Vec<String> = fields
        .iter()
        .filter_map(|(name, value)| value.as_ref().map(|v| format!("{}:{v}", json!(name))))
        .collect();
    format!("{{{}}}", parts.join(","))
}

/// A value as JSON, when present and not null.
fn some(value: &Value) -> Option<String> {
    (!value.is_null()).then(|| go_json(value))
}

/// A string field Go always writes (`""` when unset).
fn text(value: &Value) -> Option<String> {
    Some(json!(value.as_str().unwrap_or_default()).to_string())
}

/// A `resource.Quantity` Go always writes (`"0"` when unset).
fn quantity(value: &Value) -> Option<String> {
    Some(some(value).unwrap_or_else(|| "\"0\"".into()))
}

/// A value as Go's encoding/json writes it: maps with their keys sorted;
/// a label selector's fields in their struct order.
fn go_json(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", json!(k), go_json(&map[k])))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(go_json).collect();
            format!("[{}]", parts.join(","))
        }
        other => other.to_string(),
    }
}

/// A `metav1.LabelSelector`: matchLabels (keys sorted), then
/// matchExpressions (key, operator, values).
fn selector(value: &Value) -> Option<String> {
    if value.is_null() {
        return None;
    }
    let expressions = value["matchExpressions"].as_array().map(|exprs| {
        let parts: Vec<String> = exprs
            .iter()
            .map(|e| {
                object(&[
                    ("key", text(&e["key"])),
                    ("operator", text(&e["operator"])),
                    ("values", some(&e["values"])),
                ])
            })
            .collect();
        format!("[{}]", parts.join(","))
    });
    Some(object(&[
        ("matchLabels", some(&value["matchLabels"])),
        ("matchExpressions", expressions),
    ]))
}

/// A v2 (internal) metric as the v1 `MetricSpec` in the annotation.
fn metric_spec_v1(metric: &Value) -> String {
    let kind = &metric["type"];
    let source = |field: &str| {
        let s = &metric[field];
        if s.is_null() {
            return None;
        }
        let target = &s["target"];
        Some(match field {
            "object" => object(&[
                ("target", Some(go_reference(&s["describedObject"]))),
                ("metricName", text(&s["metric"]["name"])),
                ("targetValue", quantity(&target["value"])),
                ("selector", selector(&s["metric"]["selector"])),
                ("averageValue", some(&target["averageValue"])),
            ]),
            "pods" => object(&[
                ("metricName", text(&s["metric"]["name"])),
                ("targetAverageValue", quantity(&target["averageValue"])),
                ("selector", selector(&s["metric"]["selector"])),
            ]),
            "resource" => object(&[
                ("name", text(&s["name"])),
                (
                    "targetAverageUtilization",
                    some(&target["averageUtilization"]),
                ),
                ("targetAverageValue", some(&target["averageValue"])),
            ]),
            "containerResource" => object(&[
                ("name", text(&s["name"])),
                (
                    "targetAverageUtilization",
                    some(&target["averageUtilization"]),
                ),
                ("targetAverageValue", some(&target["averageValue"])),
                ("container", text(&s["container"])),
            ]),
            _ => object(&[
                ("metricName", text(&s["metric"]["name"])),
                ("metricSelector", selector(&s["metric"]["selector"])),
                ("targetValue", some(&target["value"])),
                ("targetAverageValue", some(&target["averageValue"])),
            ]),
        })
    };
    object(&[
        ("type", text(kind)),
        ("object", source("object")),
        ("pods", source("pods")),
        ("resource", source("resource")),
        ("containerResource", source("containerResource")),
        ("external", source("external")),
    ])
}

/// A v2 (internal) metric status as the v1 `MetricStatus`.
fn metric_status_v1(metric: &Value) -> String {
    let source = |field: &str| {
        let s = &metric[field];
        if s.is_null() {
            return None;
        }
        let current = &s["current"];
        Some(match field {
            "object" => object(&[
                ("target", Some(go_reference(&s["describedObject"]))),
                ("metricName", text(&s["metric"]["name"])),
                ("currentValue", quantity(&current["value"])),
                ("selector", selector(&s["metric"]["selector"])),
                ("averageValue", some(&current["averageValue"])),
            ]),
            "pods" => object(&[
                ("metricName", text(&s["metric"]["name"])),
                ("currentAverageValue", quantity(&current["averageValue"])),
                ("selector", selector(&s["metric"]["selector"])),
            ]),
            "resource" => object(&[
                ("name", text(&s["name"])),
                (
                    "currentAverageUtilization",
                    some(&current["averageUtilization"]),
                ),
                ("currentAverageValue", quantity(&current["averageValue"])),
            ]),
            "containerResource" => object(&[
                ("name", text(&s["name"])),
                (
                    "currentAverageUtilization",
                    some(&current["averageUtilization"]),
                ),
                ("currentAverageValue", quantity(&current["averageValue"])),
                ("container", text(&s["container"])),
            ]),
            _ => object(&[
                ("metricName", text(&s["metric"]["name"])),
                ("metricSelector", selector(&s["metric"]["selector"])),
                ("currentValue", quantity(&current["value"])),
                ("currentAverageValue", some(&current["averageValue"])),
            ]),
        })
    };
    object(&[
        ("type", text(&metric["type"])),
        ("object", source("object")),
        ("pods", source("pods")),
        ("resource", source("resource")),
        ("containerResource", source("containerResource")),
        ("external", source("external")),
    ])
}

/// A `CrossVersionObjectReference` as Go encodes it.
fn go_reference(r: &Value) -> String {
    object(&[
        ("kind", text(&r["kind"])),
        ("name", text(&r["name"])),
        (
            "apiVersion",
            r["apiVersion"]
                .as_str()
                .filter(|v| !v.is_empty())
                .map(|v| json!(v).to_string()),
        ),
    ])
}

/// A condition as the v1 type encodes it.
fn condition_v1(c: &Value) -> String {
    let nonempty = |v: &Value| {
        v.as_str()
            .filter(|s| !s.is_empty())
            .map(|s| json!(s).to_string())
    };
    object(&[
        ("type", text(&c["type"])),
        ("status", text(&c["status"])),
        ("lastTransitionTime", some(&c["lastTransitionTime"])),
        ("reason", nonempty(&c["reason"])),
        ("message", nonempty(&c["message"])),
    ])
}

/// The behavior as the internal type encodes it (Go's field names, no
/// tags: every field written, `null` when unset).
fn behavior_internal(behavior: &Value) -> String {
    let null = || Some("null".to_string());
    let rules = |r: &Value| -> Option<String> {
        if r.is_null() {
            return null();
        }
        let policies = r["policies"].as_array().map(|policies| {
            let parts: Vec<String> = policies
                .iter()
                .map(|p| {
                    object(&[
                        ("Type", text(&p["type"])),
                        ("Value", Some(p["value"].as_i64().unwrap_or(0).to_string())),
                        (
                            "PeriodSeconds",
                            Some(p["periodSeconds"].as_i64().unwrap_or(0).to_string()),
                        ),
                    ])
                })
                .collect();
            format!("[{}]", parts.join(","))
        });
        Some(object(&[
            (
                "StabilizationWindowSeconds",
                some(&r["stabilizationWindowSeconds"]).or_else(null),
            ),
            ("SelectPolicy", some(&r["selectPolicy"]).or_else(null)),
            ("Policies", policies.or_else(null)),
            ("Tolerance", some(&r["tolerance"]).or_else(null)),
        ]))
    };
    object(&[
        ("ScaleUp", rules(&behavior["scaleUp"])),
        ("ScaleDown", rules(&behavior["scaleDown"])),
    ])
}

/// Reads a field Go's decoder would: its name in any case.
fn field<'a>(value: &'a Value, name: &str) -> &'a Value {
    static NULL: Value = Value::Null;
    value
        .as_object()
        .and_then(|m| m.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)))
        .map_or(&NULL, |(_, v)| v)
}

/// The behavior annotation as v2's `behavior`; `None` when empty.
fn behavior_v2(encoded: &Value) -> Option<Value> {
    let rules = |r: &Value| -> Value {
        if !r.is_object() {
            return Value::Null;
        }
        let mut out = Map::new();
        let mut put = |key: &str, value: &Value| {
            if !value.is_null() {
                out.insert(key.into(), value.clone());
            }
        };
        put(
            "stabilizationWindowSeconds",
            field(r, "StabilizationWindowSeconds"),
        );
        put("selectPolicy", field(r, "SelectPolicy"));
        if let Some(policies) = field(r, "Policies").as_array() {
            let policies: Vec<Value> = policies
                .iter()
                .map(|p| {
                    json!({"type": field(p, "Type").as_str().unwrap_or_default(),
                        "value": field(p, "Value").as_i64().unwrap_or(0),
                        "periodSeconds": field(p, "PeriodSeconds").as_i64().unwrap_or(0)})
                })
                .collect();
            out.insert("policies".into(), Value::Array(policies));
        }
        let mut tolerance = field(r, "Tolerance").clone();
        if !tolerance.is_null() {
            default_quantity(Some(&mut tolerance));
            out.insert("tolerance".into(), tolerance);
        }
        Value::Object(out)
    };
    let up = rules(field(encoded, "ScaleUp"));
    let down = rules(field(encoded, "ScaleDown"));
    if up.is_null() && down.is_null() {
        return None;
    }
    let mut out = Map::new();
    if !up.is_null() {
        out.insert("scaleUp".into(), up);
    }
    if !down.is_null() {
        out.insert("scaleDown".into(), down);
    }
    Some(Value::Object(out))
}

/// A quantity as the server writes it (canonical), when there is one.
fn canonical(value: &Value) -> Option<Value> {
    if value.is_null() {
        return None;
    }
    let mut value = value.clone();
    default_quantity(Some(&mut value));
    Some(value)
}

/// A map of the present fields.
fn fields(pairs: Vec<(&str, Option<Value>)>) -> Value {
    Value::Object(
        pairs
            .into_iter()
            .filter_map(|(k, v)| v.filter(|v| !v.is_null()).map(|v| (k.to_string(), v)))
            .collect(),
    )
}

/// A metric identifier: its name, and its selector when there is one.
fn identifier(name: &Value, selector: &Value) -> Value {
    fields(vec![
        ("name", Some(json!(name.as_str().unwrap_or_default()))),
        ("selector", Some(selector.clone())),
    ])
}

/// A v1 `MetricSpec` (from the annotation) as v2's.
fn metric_spec_v2(metric: &Value) -> Value {
    let kind = metric["type"].as_str().unwrap_or_default();
    let mut out = Map::new();
    out.insert("type".into(), json!(kind));
    let s = |field: &str| metric.get(field).filter(|v| !v.is_null());
    if let Some(o) = s("object") {
        let average = canonical(&o["averageValue"]);
        let (kind, value) = match &average {
            None => ("Value", canonical(&o["targetValue"]).or(Some(json!("0")))),
            // Only a non-zero value is kept beside an average.
            Some(_) => (
                "AverageValue",
                canonical(&o["targetValue"]).filter(|v| v != "0"),
            ),
        };
        out.insert(
            "object".into(),
            json!({
                "describedObject": reference(&o["target"]),
                "metric": identifier(&o["metricName"], &o["selector"]),
                "target": fields(vec![("type", Some(json!(kind))), ("value", value), ("averageValue", average)]),
            }),
        );
    }
    if let Some(p) = s("pods") {
        out.insert(
            "pods".into(),
            json!({
                "metric": identifier(&p["metricName"], &p["selector"]),
                "target": {"type": "AverageValue",
                    "averageValue": canonical(&p["targetAverageValue"]).unwrap_or(json!("0"))},
            }),
        );
    }
    for field in ["resource", "containerResource"] {
        if let Some(r) = s(field) {
            let utilization = r.get("targetAverageUtilization").cloned();
            let kind = if utilization.as_ref().is_none_or(Value::is_null) {
                "AverageValue"
            } else {
                "Utilization"
            };
            let mut source = fields(vec![
                ("name", Some(json!(r["name"].as_str().unwrap_or_default()))),
                (
                    "target",
                    Some(fields(vec![
                        ("type", Some(json!(kind))),
                        ("averageValue", canonical(&r["targetAverageValue"])),
                        ("averageUtilization", utilization),
                    ])),
                ),
            ]);
            if field == "containerResource" {
                source["container"] = json!(r["container"].as_str().unwrap_or_default());
            }
            out.insert(field.into(), source);
        }
    }
    if let Some(e) = s("external") {
        let value = canonical(&e["targetValue"]);
        let kind = if value.is_none() {
            "AverageValue"
        } else {
            "Value"
        };
        out.insert(
            "external".into(),
            json!({
                "metric": identifier(&e["metricName"], &e["metricSelector"]),
                "target": fields(vec![("type", Some(json!(kind))), ("value", value),
                    ("averageValue", canonical(&e["targetAverageValue"]))]),
            }),
        );
    }
    Value::Object(out)
}

/// A v1 `MetricStatus` (from the annotation) as v2's.
fn metric_status_v2(metric: &Value) -> Value {
    let mut out = Map::new();
    out.insert("type".into(), metric["type"].clone());
    let s = |field: &str| metric.get(field).filter(|v| !v.is_null());
    if let Some(o) = s("object") {
        out.insert(
            "object".into(),
            json!({
                "metric": identifier(&o["metricName"], &o["selector"]),
                "current": fields(vec![("value", canonical(&o["currentValue"]).or(Some(json!("0")))),
                    ("averageValue", canonical(&o["averageValue"]))]),
                "describedObject": reference(&o["target"]),
            }),
        );
    }
    if let Some(p) = s("pods") {
        out.insert(
            "pods".into(),
            json!({
                "metric": identifier(&p["metricName"], &p["selector"]),
                "current": {"averageValue": canonical(&p["currentAverageValue"]).unwrap_or(json!("0"))},
            }),
        );
    }
    for field in ["resource", "containerResource"] {
        if let Some(r) = s(field) {
            let mut source = json!({
                "name": r["name"].as_str().unwrap_or_default(),
                "current": fields(vec![
                    ("averageValue", canonical(&r["currentAverageValue"]).or(Some(json!("0")))),
                    ("averageUtilization", r.get("currentAverageUtilization").cloned()),
                ]),
            });
            if field == "containerResource" {
                source["container"] = json!(r["container"].as_str().unwrap_or_default());
            }
            out.insert(field.into(), source);
        }
    }
    if let Some(e) = s("external") {
        out.insert(
            "external".into(),
            json!({
                "metric": identifier(&e["metricName"], &e["metricSelector"]),
                "current": fields(vec![("value", canonical(&e["currentValue"]).or(Some(json!("0")))),
                    ("averageValue", canonical(&e["currentAverageValue"]))]),
            }),
        );
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
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
}
