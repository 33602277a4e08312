//! The columns kube-apiserver prints for the common built-in kinds (its
//! `printers` package): what `kubectl get` and `kubectl get -o wide` show.
//!
//! Each kind names the cells of its columns; the columns themselves are
//! those the real server declares (see [`columns`]). Priority 1 columns
//! are the wide ones. A kind not listed here prints Name and Age.

use super::column::{Cell, Column, col};

mod cells;
mod columns;
mod core_v1;
mod others;
pub(crate) mod pod;
#[cfg(test)]
mod tests;
mod workloads;

pub(super) use columns::{Cells, declared, doc};
use core_v1::core;
use others::other;
use workloads::{apps, batch};

/// The columns of a built-in kind with a printer, Name included.
pub(super) fn builtin(group: &str, kind: &str) -> Option<Vec<Column>> {
    if default_table(group, kind) {
        return Some(default_columns());
    }
    let cells = match (group, kind) {
        ("", _) => core(kind)?,
        ("apps", _) => apps(kind)?,
        ("batch", _) => batch(kind)?,
        _ => other(group, kind)?,
    };
    declared(kind, cells)
}

/// Whether the real server's storage of `kind` converts it with its
/// default table convertor (`rest.NewDefaultTableConvertor`, in the
/// kind's `pkg/registry/.../storage.go`) rather than a printer.
fn default_table(group: &str, kind: &str) -> bool {
    matches!(
        (group, kind),
        ("", "LimitRange")
            | ("rbac.authorization.k8s.io", "Role" | "ClusterRole")
            | ("apiextensions.k8s.io", "CustomResourceDefinition")
    )
}

/// The default Table: Name and `Created At`, a `date`
/// (apiserver's `pkg/registry/rest/table.go`).
fn default_columns() -> Vec<Column> {
    vec![
        name_column(),
        col(
            "Created At",
            "date",
            doc("meta/v1 ObjectMeta.creationTimestamp"),
            Cell::CreatedAt,
        ),
    ]
}

/// The Name column every Table starts with.
pub(super) fn name_column() -> Column {
    Column {
        format: "name".into(),
        ..col("Name", "string", doc("meta/v1 ObjectMeta.name"), Cell::Name)
    }
}
