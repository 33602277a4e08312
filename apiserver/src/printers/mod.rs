//! `meta.k8s.io` Table responses, which `kubectl get` asks for.

use rekon_store::{ResourceInfo, Status, Store};
use serde_json::{Map, Value, json};

mod builtin;
mod column;
mod custom;
mod events;
mod jsonpath;
#[cfg(test)]
mod tests;

use builtin::{builtin, doc, name_column};
use column::{Cell, Column, age, col};
use custom::{custom_cell, custom_columns};
use events::{event_cell, event_columns};

/// The columns the real server prints for `res`: CRD printer columns, the
/// built-in kinds' printers (see [`builtin`]), or Name and Age.
pub(crate) fn columns(store: &Store, res: &ResourceInfo) -> Vec<Column> {
    if res.kind == "Event" && matches!(res.group.as_str(), "" | "events.k8s.io") {
        return event_columns();
    }
    if let Some(version) = crd_version(store, res) {
        let mut cols = vec![name_column()];
        cols.extend(custom_columns(&version));
        return cols;
    }
    builtin(&res.group, &res.kind).unwrap_or_else(|| {
        vec![
            name_column(),
            col(
                "Age",
                "string",
                doc("meta/v1 ObjectMeta.creationTimestamp"),
                Cell::Age,
            ),
        ]
    })
}

/// The columns of a Scale read through `res`'s `scale` subresource: the
/// built-in printer's (`printScale`), or for a custom resource its
/// handler's (`getScaleColumnsForVersion`: Desired and Available where the
/// version's scale subresource has their paths, then Age).
pub(crate) fn scale_columns(store: &Store, res: &ResourceInfo) -> Vec<Column> {
    let Some(version) = res.custom.as_ref().and_then(|_| crd_version(store, res)) else {
        return builtin("autoscaling", "Scale").unwrap_or_default();
    };
    let scale = version
        .pointer("/subresources/scale")
        .unwrap_or(&Value::Null);
    let mut cols = vec![name_column()];
    for (name, key, description, path) in [
        (
            "Desired",
            "specReplicasPath",
            "Number of desired replicas",
            ".spec.replicas",
        ),
        (
            "Available",
            "statusReplicasPath",
            "Number of actual replicas",
            ".status.replicas",
        ),
    ] {
        if scale
            .get(key)
            .and_then(Value::as_str)
            .is_some_and(|p| !p.is_empty())
            && let Some(parsed) = jsonpath::JsonPath::parse(path)
        {
            cols.push(col(name, "integer", description, Cell::Path(parsed)));
        }
    }
    cols.extend(custom_columns(&json!({})));
    cols
}

/// The version `res` serves of its CRD (`spec.versions[]`, null when the
/// CRD has no such version), if a CRD defines `res`.
fn crd_version(store: &Store, res: &ResourceInfo) -> Option<Value> {
    let crd_res =
        store.resource_for_plural("apiextensions.k8s.io", "v1", "customresourcedefinitions")?;
    let crd = store
        .get(&crd_res, None, &format!("{}.{}", res.plural, res.group))
        .ok()?;
    let versions = crd.pointer("/spec/versions").and_then(Value::as_array);
    let version = versions
        .into_iter()
        .flatten()
        .find(|v| v.get("name").and_then(Value::as_str) == Some(&res.version));
    Some(version.cloned().unwrap_or_default())
}

fn cell(c: &Column, o: &Value) -> Value {
    match &c.cell {
        Cell::Name => o.pointer("/metadata/name").cloned().unwrap_or(Value::Null),
        Cell::Age => json!(age(o
            .pointer("/metadata/creationTimestamp")
            .and_then(Value::as_str)
            .unwrap_or(""))),
        Cell::Path(path) => custom_cell(path, &c.kind, o),
        Cell::CreatedAt => o
            .pointer("/metadata/creationTimestamp")
            .cloned()
            .unwrap_or(Value::Null),
        Cell::Print(print) => print(o),
        Cell::Event(event) => event_cell(*event, o),
    }
}

/// An object's metadata as its internal version has it, which rows are
/// built from: a DaemonSet's template generation annotation is a field
/// there (`Convert_v1_DaemonSet_To_apps_DaemonSet` takes it out).
fn internal_meta(o: &Value) -> std::borrow::Cow<'_, Value> {
    const GENERATION: &str = "deprecated.daemonset.template.generation";
    let daemon_set = o["kind"] == "DaemonSet" && o["apiVersion"] == "apps/v1";
    if !daemon_set
        || o.pointer("/metadata/annotations")
            .and_then(|a| a.get(GENERATION))
            .is_none()
    {
        return std::borrow::Cow::Borrowed(o);
    }
    let mut o = o.clone();
    if let Some(annotations) = o
        .pointer_mut("/metadata/annotations")
        .and_then(Value::as_object_mut)
    {
        annotations.remove(GENERATION);
        if annotations.is_empty()
            && let Some(md) = o.get_mut("metadata").and_then(Value::as_object_mut)
        {
            md.remove("annotations");
        }
    }
    std::borrow::Cow::Owned(o)
}

/// The metadata-only view of an object (`meta.k8s.io/v1` PartialObjectMetadata).
pub(crate) fn partial(o: &Value) -> Value {
    partial_in(o, "v1")
}

/// The metadata-only view of an object in a `meta.k8s.io` version.
pub(crate) fn partial_in(o: &Value, version: &str) -> Value {
    json!({
        "kind": "PartialObjectMetadata",
        "apiVersion": format!("meta.k8s.io/{version}"),
        "metadata": o.get("metadata").cloned().unwrap_or_else(|| json!({})),
    })
}

/// What a Table's rows carry of their objects (`metav1.IncludeObjectPolicy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum IncludeObject {
    /// No object: `"object": null`.
    None,
    /// The object's metadata, as a PartialObjectMetadata (the default).
    Metadata,
    /// The whole object.
    Object,
}

/// How a Table is asked for: `Accept: application/json;as=Table;v=V;g=meta.k8s.io`
/// and the request's `includeObject`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct TableOptions {
    /// The `meta.k8s.io` version of the Table (`v1`, or `v1beta1`).
    pub(crate) version: &'static str,
    /// What each row carries of its object.
    pub(crate) include: IncludeObject,
}

impl TableOptions {
    /// The options of a Table in `version`, `includeObject` read and
    /// checked as the real server does (`optionsForTransform` in
    /// apiserver's `endpoints/handlers/response.go`, and
    /// `ValidateTableOptions`): empty or absent is Metadata.
    pub(crate) fn new(
        version: &'static str,
        include: Option<&str>,
    ) -> Result<TableOptions, Status> {
        let include = match include.unwrap_or("") {
            "" | "Metadata" => IncludeObject::Metadata,
            "None" => IncludeObject::None,
            "Object" => IncludeObject::Object,
            other => {
                return Err(Status::bad_request(format!(
                    "Unable to convert to Table as requested: includeObject: Invalid value: {}: must be 'Metadata', 'Object', 'None', or empty",
                    rekon_store::field::go_quote(other)
                )));
            }
        };
        Ok(TableOptions { version, include })
    }
}

/// The list metadata a Table carries (`metav1.ListMeta`, empty fields
/// left out): the list's, or an object's resourceVersion.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct TableMeta<'a> {
    pub(crate) resource_version: &'a str,
    pub(crate) continue_token: Option<&'a str>,
    pub(crate) remaining_item_count: Option<u64>,
}

/// A Table of `objects`; `with_definitions` false writes `"columnDefinitions": null`
/// (later events of a watch). Each row's object is what `options` asks
/// (`asTable` in apiserver's `endpoints/handlers/response.go`).
pub(crate) fn table(
    cols: &[Column],
    meta: TableMeta<'_>,
    objects: &[Value],
    options: TableOptions,
    with_definitions: bool,
) -> Value {
    let defs = if with_definitions {
        Value::Array(
            cols.iter()
                .map(|c| {
                    json!({"name": c.name, "type": c.kind, "format": c.format,
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
            let object = match options.include {
                IncludeObject::None => Value::Null,
                IncludeObject::Metadata => partial_in(&internal_meta(o), options.version),
                IncludeObject::Object => o.clone(),
            };
            let mut row = json!({"cells": cols.iter().map(|c| cell(c, o)).collect::<Vec<_>>(), "object": object});
            if let Some(conditions) = builtin::pod::row_conditions(o) {
                row["conditions"] = conditions;
            }
            row
        })
        .collect();
    let mut md = Map::new();
    if !meta.resource_version.is_empty() {
        md.insert("resourceVersion".into(), json!(meta.resource_version));
    }
    if let Some(token) = meta.continue_token.filter(|t| !t.is_empty()) {
        md.insert("continue".into(), json!(token));
    }
    if let Some(count) = meta.remaining_item_count {
        md.insert("remainingItemCount".into(), json!(count));
    }
    json!({
        "kind": "Table",
        "apiVersion": format!("meta.k8s.io/{}", options.version),
        "metadata": md,
        "columnDefinitions": defs,
        "rows": rows,
    })
}
