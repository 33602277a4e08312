//! The v1 annotations read back as v2's fields: the metrics and their
//! statuses by type, the behavior read as Go's decoder reads it (field
//! names in any case), quantities made canonical.

use serde_json::{Map, Value, json};

use super::reference;
use crate::machinery::quantity::default_quantity;

/// Reads a field Go's decoder would: its name in any case.
fn field<'a>(value: &'a Value, name: &str) -> &'a Value {
    static NULL: Value = Value::Null;
    value
        .as_object()
        .and_then(|m| m.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)))
        .map_or(&NULL, |(_, v)| v)
}

/// The behavior annotation as v2's `behavior`; `None` when empty.
pub(super) fn behavior_v2(encoded: &Value) -> Option<Value> {
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
pub(super) fn metric_spec_v2(metric: &Value) -> Value {
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
pub(super) fn metric_status_v2(metric: &Value) -> Value {
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
