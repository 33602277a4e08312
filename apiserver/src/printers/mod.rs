//! `meta.k8s.io/v1` Table responses, which `kubectl get` asks for.

use rekon_store::{ResourceInfo, Store};
use serde_json::{Map, Value, json};

const NAME_DESCRIPTION: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";

mod builtin;
mod column;
mod events;

use column::{CREATED_DESCRIPTION, Cell, Column, age, col};
use events::{event_cell, event_columns};

/// The columns the real server prints for `res`: CRD printer columns, the
/// built-in kinds' printers (see [`builtin`]), or Name and Age.
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
    if res.group == "apiextensions.k8s.io" && res.kind == "CustomResourceDefinition" {
        cols.push(col(
            "Created At",
            "date",
            CREATED_DESCRIPTION,
            Cell::CreatedAt,
        ));
        return cols;
    }
    match builtin::builtin(&res.group, &res.kind) {
        Some(printed) => cols.extend(printed),
        None => cols.push(age),
    }
    cols
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
        Cell::CreatedAt => o
            .pointer("/metadata/creationTimestamp")
            .cloned()
            .unwrap_or(Value::Null),
        Cell::Print(print) => print(o),
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
