//! The columns kube-apiserver prints for the common built-in kinds (its
//! `printers` package): what `kubectl get` and `kubectl get -o wide` show.
//!
//! Each kind lists its columns after Name; priority 1 columns are the wide
//! ones. A kind not listed here prints Name and Age.

use super::column::Column;

mod cells;
mod columns;
mod core_v1;
mod others;
#[cfg(test)]
mod tests;
mod workloads;

use core_v1::core;
use others::other;
use workloads::{apps, batch};

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
