//! The columns kube-apiserver prints for the common built-in kinds (its
//! `printers` package): what `kubectl get` and `kubectl get -o wide` show.
//!
//! Each kind lists its columns after Name; priority 1 columns are the wide
//! ones. A kind not listed here prints Name and Age.

use serde_json::{Map, Value, json};

use super::{Cell, Column, age, human_duration};

mod cells;
mod core_v1;
mod others;
#[cfg(test)]
mod tests;
mod workloads;

use cells::*;
use core_v1::core;
use others::other;
use workloads::{apps, batch, replicated};

/// The description of `metadata.creationTimestamp`.
pub(super) const CREATED_DESCRIPTION: &str =
    "CreationTimestamp is a timestamp representing the server time when this object was created.";

const CONTAINERS: &str = "Names of each container in the template.";
const IMAGES: &str = "Images referenced by each container in the template.";

fn column(name: &str, kind: &str, description: &str, print: fn(&Value) -> Value) -> Column {
    Column {
        name: name.into(),
        kind: kind.into(),
        description: description.into(),
        priority: 0,
        cell: Cell::Print(print),
    }
}

fn wide(name: &str, kind: &str, description: &str, print: fn(&Value) -> Value) -> Column {
    Column {
        priority: 1,
        ..column(name, kind, description, print)
    }
}

fn age_column() -> Column {
    Column {
        name: "Age".into(),
        kind: "string".into(),
        description: CREATED_DESCRIPTION.into(),
        priority: 0,
        cell: Cell::Age,
    }
}

fn created_at_column() -> Column {
    Column {
        name: "Created At".into(),
        kind: "date".into(),
        description: CREATED_DESCRIPTION.into(),
        priority: 0,
        cell: Cell::CreatedAt,
    }
}

/// The columns after Name of a built-in kind with a printer.
pub(super) fn builtin(group: &str, kind: &str) -> Option<Vec<Column>> {
    let columns = match (group, kind) {
        ("", _) => core(kind)?,
        ("apps", _) => apps(kind)?,
        ("batch", _) => batch(kind)?,
        _ => other(group, kind)?,
    };
    Some(columns)
}
