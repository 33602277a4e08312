//! The columns each built-in printer declares, as the real server declares
//! them, and the cells this crate computes for them.
//!
//! `printers.json` holds the declarations: kube-apiserver's
//! `pkg/printers/internalversion/printers.go` (`AddHandlers`: one
//! `[]metav1.TableColumnDefinition` per kind, under `kinds`) and
//! kube-aggregator's APIService (`pkg/registry/apiservice/etcd/etcd.go`).
//! A column described by a type's documentation (`apiv1.PodStatus{}.SwaggerDoc()["podIP"]`)
//! names it (`"doc": "core/v1 PodStatus.podIP"`), whose text is under
//! `docs`, copied from that API's `types_swagger_doc_generated.go`
//! (`printers.py` writes the file from a Kubernetes checkout). The code
//! names each column's cell; names, types, formats, priorities and
//! descriptions come from the declarations.

use std::sync::LazyLock;

use serde_json::Value;

use crate::printers::column::{Cell, Column};

/// The declarations of `printers.json`.
static DECLARED: LazyLock<Value> =
    LazyLock::new(|| serde_json::from_str(include_str!("printers.json")).unwrap_or_default());

/// The cells a printer computes, by the name of their column: the
/// declaration's `Name` and `Age` need none.
pub(in crate::printers) type Cells = Vec<(&'static str, Cell)>;

/// A column whose cell `print` computes.
pub(super) fn column(name: &'static str, print: fn(&Value) -> Value) -> (&'static str, Cell) {
    (name, Cell::Print(print))
}

/// A type's documentation (`metav1.ObjectMeta{}.SwaggerDoc()["name"]` is
/// `meta/v1 ObjectMeta.name`); empty when missing, as Go's map gives.
pub(in crate::printers) fn doc(key: &str) -> &'static str {
    DECLARED["docs"][key].as_str().unwrap_or("")
}

/// The columns `kind`'s printer declares, each with its cell from `cells`
/// (`Name` prints the name, `Age` the age); `None` when the real server
/// declares no printer for `kind`.
pub(in crate::printers) fn declared(kind: &str, mut cells: Cells) -> Option<Vec<Column>> {
    let declarations = DECLARED["kinds"][kind].as_array()?;
    let text = |d: &Value, key: &str| d[key].as_str().unwrap_or("").to_string();
    Some(
        declarations
            .iter()
            .map(|d| {
                let name = text(d, "name");
                let format = text(d, "format");
                let cell = match cells.iter().position(|(cell, _)| *cell == name) {
                    Some(at) => cells.remove(at).1,
                    None if format == "name" => Cell::Name,
                    None if name == "Age" => Cell::Age,
                    None => Cell::Print(|_| Value::Null),
                };
                Column {
                    kind: text(d, "type"),
                    description: match d["doc"].as_str() {
                        Some(key) => doc(key).to_string(),
                        None => text(d, "description"),
                    },
                    priority: d["priority"].as_i64().unwrap_or(0),
                    name,
                    format,
                    cell,
                }
            })
            .collect(),
    )
}

/// Whether `kind`'s printer declares a column `name` (the tests' check
/// that every cell has its column).
#[cfg(test)]
pub(super) fn declares(kind: &str, name: &str) -> bool {
    DECLARED["kinds"][kind]
        .as_array()
        .is_some_and(|ds| ds.iter().any(|d| d["name"] == name))
}
