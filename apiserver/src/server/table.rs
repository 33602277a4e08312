//! `meta.k8s.io/v1` Table responses, which `kubectl get` asks for.

use serde_json::{Map, Value, json};

use rekon_store::{ResourceInfo, Store};

const NAME_DESCRIPTION: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";

#[derive(Clone, Debug)]
enum Cell {
    Name,
    Age,
    Path(String),
    Count(&'static str),
    Ready,
    PodPhase,
    Restarts,
    Event(EventCell),
}

/// The cells of an Event row, as kube-apiserver prints Events (both APIs).
#[derive(Clone, Copy, Debug)]
enum EventCell {
    LastSeen,
    Type,
    Reason,
    Object,
    Subobject,
    Source,
    Message,
    FirstSeen,
    Count,
}

/// One column: name, type, description and how to compute the cell.
#[derive(Clone, Debug)]
pub(crate) struct Column {
    name: String,
    kind: String,
    description: String,
    priority: i64,
    cell: Cell,
}

fn col(name: &str, kind: &str, description: &str, cell: Cell) -> Column {
    Column {
        name: name.into(),
        kind: kind.into(),
        description: description.into(),
        priority: 0,
        cell,
    }
}

/// The columns the real server prints for `res`: CRD printer columns, a few
/// built-in kinds' columns, or Name and Age.
pub(crate) fn columns(store: &Store, res: &ResourceInfo) -> Vec<Column> {
    let name = col("Name", "string", NAME_DESCRIPTION, Cell::Name);
    let age = col(
        "Age",
        "string",
        "CreationTimestamp is a timestamp representing the server time when this object was created.",
        Cell::Age,
    );
    if res.kind == "Event" && matches!(res.group.as_str(), "" | "events.k8s.io") {
        return event_columns(name);
    }
    let mut cols = vec![name];
    if let Some(crd_res) =
        store.resource_for_plural("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        && let Ok(crd) = store.get(&crd_res, None, &format!("{}.{}", res.plural, res.group))
    {
        let printer = crd
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .and_then(|vs| {
                vs.iter()
                    .find(|v| v.get("name").and_then(Value::as_str) == Some(&res.version))
            })
            .and_then(|v| v.get("additionalPrinterColumns"))
            .and_then(Value::as_array)
            .cloned();
        match printer {
            Some(pcs) => {
                for pc in pcs {
                    let path = pc.get("jsonPath").and_then(Value::as_str).unwrap_or("");
                    let kind = pc.get("type").and_then(Value::as_str).unwrap_or("string");
                    let cell = if path == ".metadata.creationTimestamp" {
                        Cell::Age
                    } else {
                        Cell::Path(format!(
                            "/{}",
                            path.trim_start_matches('.').replace('.', "/")
                        ))
                    };
                    cols.push(Column {
                        name: pc.get("name").and_then(Value::as_str).unwrap_or("").into(),
                        kind: kind.into(),
                        description: pc
                            .get("description")
                            .and_then(Value::as_str)
                            .map(str::to_string)
                            .unwrap_or_else(|| {
                                format!(
                                    "Custom resource definition column (in JSONPath format): {path}"
                                )
                            }),
                        priority: pc.get("priority").and_then(Value::as_i64).unwrap_or(0),
                        cell,
                    });
                }
            }
            None => cols.push(age),
        }
        return cols;
    }
    match (res.group.as_str(), res.kind.as_str()) {
        ("", "ConfigMap") => cols.push(col(
            "Data",
            "string",
            "Data contains the configuration data.",
            Cell::Count("data"),
        )),
        ("", "Secret") => {
            cols.push(col(
                "Type",
                "string",
                "The type of the secret",
                Cell::Path("/type".into()),
            ));
            cols.push(col(
                "Data",
                "string",
                "Data contains the secret data.",
                Cell::Count("data"),
            ));
        }
        ("", "Namespace") => cols.push(col(
            "Status",
            "string",
            "The status of the namespace",
            Cell::Path("/status/phase".into()),
        )),
        ("", "Pod") => {
            cols.push(col(
                "Ready",
                "string",
                "The aggregate readiness state of this pod for accepting traffic.",
                Cell::Ready,
            ));
            cols.push(col(
                "Status",
                "string",
                "The aggregate status of the containers in this pod.",
                Cell::PodPhase,
            ));
            cols.push(col(
                "Restarts",
                "string",
                "The number of times the containers in this pod have been restarted.",
                Cell::Restarts,
            ));
        }
        ("apps", "Deployment") => {
            cols.push(col(
                "Ready",
                "string",
                "Number of the pod with ready state",
                Cell::Ready,
            ));
            cols.push(col("Up-to-date", "string", "Total number of non-terminated pods targeted by this deployment that have the desired template spec.", Cell::Path("/status/updatedReplicas".into())));
            cols.push(col("Available", "string", "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.", Cell::Path("/status/availableReplicas".into())));
        }
        _ => {}
    }
    cols.push(age);
    cols
}

/// The columns of `kubectl get events` (the server prints all of them;
/// kubectl shows those of priority 0 unless `-o wide`).
fn event_columns(mut name: Column) -> Vec<Column> {
    let event = |title: &str, description: &str, cell: EventCell, priority: i64| Column {
        name: title.into(),
        kind: "string".into(),
        description: description.into(),
        priority,
        cell: Cell::Event(cell),
    };
    name.priority = 1;
    vec![
        event(
            "Last Seen",
            "The time at which the most recent occurrence of this event was recorded.",
            EventCell::LastSeen,
            0,
        ),
        event(
            "Type",
            "Type of this event (Normal, Warning), new types could be added in the future",
            EventCell::Type,
            0,
        ),
        event(
            "Reason",
            "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
            EventCell::Reason,
            0,
        ),
        event(
            "Object",
            "The object that this event is about.",
            EventCell::Object,
            0,
        ),
        event(
            "Subobject",
            "The field of the object the event is about (e.g. a container), if any.",
            EventCell::Subobject,
            1,
        ),
        event(
            "Source",
            "The component reporting this event. Should be a short machine understandable string.",
            EventCell::Source,
            1,
        ),
        event(
            "Message",
            "A human-readable description of the status of this operation.",
            EventCell::Message,
            0,
        ),
        event(
            "First Seen",
            "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
            EventCell::FirstSeen,
            1,
        ),
        event(
            "Count",
            "The number of times this event has occurred.",
            EventCell::Count,
            1,
        ),
        name,
    ]
}

/// One cell of an Event row; `o` is a core/v1 or an events.k8s.io/v1 Event.
fn event_cell(cell: EventCell, o: &Value) -> Value {
    // The field under its core/v1 name, else its events.k8s.io/v1 name.
    let field = |core: &str, events: &str| {
        o.get(core)
            .filter(|v| !v.is_null())
            .or_else(|| o.get(events).filter(|v| !v.is_null()))
    };
    let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").to_string();
    let since = |v: Option<&Value>| match v.and_then(Value::as_str) {
        Some(t) if !t.is_empty() => age(t),
        _ => "<unknown>".to_string(),
    };
    let first = match field("firstTimestamp", "deprecatedFirstTimestamp") {
        Some(t) => since(Some(t)),
        None => since(o.get("eventTime")),
    };
    let series = o.get("series").filter(|s| s.is_object());
    match cell {
        EventCell::LastSeen => match (series, field("lastTimestamp", "deprecatedLastTimestamp")) {
            (Some(series), _) => json!(since(series.get("lastObservedTime"))),
            (None, Some(last)) => json!(since(Some(last))),
            (None, None) => json!(first),
        },
        EventCell::FirstSeen => json!(first),
        EventCell::Type => json!(text(o.get("type"))),
        EventCell::Reason => json!(text(o.get("reason"))),
        EventCell::Object => {
            let about = field("involvedObject", "regarding");
            let kind = text(about.and_then(|a| a.get("kind"))).to_lowercase();
            let name = text(about.and_then(|a| a.get("name")));
            json!(if name.is_empty() {
                kind
            } else {
                format!("{kind}/{name}")
            })
        }
        EventCell::Subobject => json!(text(
            field("involvedObject", "regarding").and_then(|a| a.get("fieldPath"))
        )),
        EventCell::Source => {
            let source = field("source", "deprecatedSource");
            let or = |a: String, b: String| if a.is_empty() { b } else { a };
            let component = or(
                text(source.and_then(|s| s.get("component"))),
                text(field("reportingComponent", "reportingController")),
            );
            let instance = or(
                text(source.and_then(|s| s.get("host"))),
                text(o.get("reportingInstance")),
            );
            json!(if instance.is_empty() {
                component
            } else {
                format!("{component}, {instance}")
            })
        }
        EventCell::Message => json!(text(field("message", "note")).trim()),
        EventCell::Count => {
            let count = match series {
                Some(series) => series.get("count").and_then(Value::as_i64),
                None => field("count", "deprecatedCount").and_then(Value::as_i64),
            };
            json!(count.filter(|c| *c != 0).unwrap_or(1))
        }
    }
}

/// A kubectl-style age: `47s`, `5m3s`, `3h`, `2d`.
fn age(created: &str) -> String {
    let Ok(t) = chrono::DateTime::parse_from_rfc3339(created) else {
        return "<unknown>".into();
    };
    let s = (chrono::Utc::now() - t.with_timezone(&chrono::Utc))
        .num_seconds()
        .max(0);
    let (m, h, d) = (s / 60, s / 3600, s / 86400);
    match s {
        s if s < 120 => format!("{s}s"),
        s if s < 600 => format!("{m}m{}s", s % 60),
        s if s < 3 * 3600 => format!("{m}m"),
        s if s < 8 * 3600 => format!("{h}h{}m", m % 60),
        s if s < 48 * 3600 => format!("{h}h"),
        _ => format!("{d}d"),
    }
}

fn cell(c: &Column, o: &Value) -> Value {
    match &c.cell {
        Cell::Name => o.pointer("/metadata/name").cloned().unwrap_or(Value::Null),
        Cell::Age => json!(age(o
            .pointer("/metadata/creationTimestamp")
            .and_then(Value::as_str)
            .unwrap_or(""))),
        Cell::Path(p) => match o.pointer(p) {
            Some(v) => v.clone(),
            None if c.kind == "integer" || c.kind == "number" => Value::Null,
            None => json!(
                if p.starts_with("/status/") && c.kind == "string" && c.name != "Status" {
                    "0"
                } else {
                    ""
                }
            ),
        },
        Cell::Count(field) => json!(o.get(*field).and_then(Value::as_object).map_or(0, Map::len)),
        Cell::Ready => {
            if o.get("kind").and_then(Value::as_str) == Some("Pod") {
                let n = o
                    .pointer("/spec/containers")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len);
                json!(format!("0/{n}"))
            } else {
                let want = o
                    .pointer("/spec/replicas")
                    .and_then(Value::as_i64)
                    .unwrap_or(1);
                let ready = o
                    .pointer("/status/readyReplicas")
                    .and_then(Value::as_i64)
                    .unwrap_or(0);
                json!(format!("{ready}/{want}"))
            }
        }
        Cell::PodPhase => json!(
            o.pointer("/status/phase")
                .and_then(Value::as_str)
                .unwrap_or("Pending")
        ),
        Cell::Restarts => json!(0),
        Cell::Event(event) => event_cell(*event, o),
    }
}

/// The metadata-only view of an object (`meta.k8s.io/v1` PartialObjectMetadata).
pub(crate) fn partial(o: &Value) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": o.get("metadata").cloned().unwrap_or_else(|| json!({})),
    })
}

/// A Table of `objects`; `with_definitions` false writes `"columnDefinitions": null`
/// (later events of a watch).
pub(crate) fn table(
    cols: &[Column],
    resource_version: &str,
    objects: &[Value],
    with_definitions: bool,
) -> Value {
    let defs = if with_definitions {
        Value::Array(
            cols.iter()
                .map(|c| {
                    json!({"name": c.name, "type": c.kind, "format": if matches!(c.cell, Cell::Name) { "name" } else { "" },
                           "description": c.description, "priority": c.priority})
                })
                .collect(),
        )
    } else {
        Value::Null
    };
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| {
            json!({"cells": cols.iter().map(|c| cell(c, o)).collect::<Vec<_>>(), "object": partial(o)})
        })
        .collect();
    let mut md = Map::new();
    md.insert("resourceVersion".into(), json!(resource_version));
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": md, "columnDefinitions": defs, "rows": rows})
}
