//! The v1 annotations as Go encodes them: the v1 metric types in their
//! struct order (omitting what `omitempty` omits), and the behavior as the
//! internal type (no tags: Go's field names, every field written).

use serde_json::{Value, json};

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
pub(super) fn metric_spec_v1(metric: &Value) -> String {
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
pub(super) fn metric_status_v1(metric: &Value) -> String {
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
pub(super) fn condition_v1(c: &Value) -> String {
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
pub(super) fn behavior_internal(behavior: &Value) -> String {
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
