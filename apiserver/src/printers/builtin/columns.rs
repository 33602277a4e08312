//! How a printer's columns are made: a cell computed from the object, wide
//! columns (priority 1), and the age and creation time columns.

use serde_json::Value;

use crate::printers::column::{CREATED_DESCRIPTION, Cell, Column, col};

pub(super) const CONTAINERS: &str = "Names of each container in the template.";
pub(super) const IMAGES: &str = "Images referenced by each container in the template.";

/// A column whose cell `print` computes.
pub(super) fn column(
    name: &str,
    kind: &str,
    description: &str,
    print: fn(&Value) -> Value,
) -> Column {
    col(name, kind, description, Cell::Print(print))
}

/// A column shown with `-o wide` only (priority 1).
pub(super) fn wide(
    name: &str,
    kind: &str,
    description: &str,
    print: fn(&Value) -> Value,
) -> Column {
    Column {
        priority: 1,
        ..column(name, kind, description, print)
    }
}

/// `Age`, from `metadata.creationTimestamp`.
pub(super) fn age_column() -> Column {
    col("Age", "string", CREATED_DESCRIPTION, Cell::Age)
}

/// `Created At`, `metadata.creationTimestamp` as written.
pub(super) fn created_at_column() -> Column {
    col("Created At", "date", CREATED_DESCRIPTION, Cell::CreatedAt)
}
