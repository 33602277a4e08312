//! A Table's columns: what each is called and how its cell is computed,
//! and the ages kubectl prints.

use serde_json::Value;

use super::jsonpath::JsonPath;

/// How a cell is computed from the object.
#[derive(Clone, Debug)]
pub(super) enum Cell {
    Name,
    /// `metadata.creationTimestamp` as an age (`5m3s`).
    Age,
    /// `metadata.creationTimestamp` as written (RFC 3339), the `Created At`
    /// column of the real server's default Table (`rest/table.go`).
    CreatedAt,
    /// A CRD printer column's JSONPath.
    Path(JsonPath),
    /// A built-in kind's printer.
    Print(fn(&Value) -> Value),
    Event(EventCell),
}

/// One column: its definition (`metav1.TableColumnDefinition`: name,
/// type, format, description, priority) and how to compute its cell.
#[derive(Clone, Debug)]
pub(crate) struct Column {
    pub(super) name: String,
    pub(super) kind: String,
    pub(super) format: String,
    pub(super) description: String,
    pub(super) priority: i64,
    pub(super) cell: Cell,
}

/// A column of priority 0 without a format.
pub(super) fn col(name: &str, kind: &str, description: &str, cell: Cell) -> Column {
    Column {
        name: name.into(),
        kind: kind.into(),
        format: String::new(),
        description: description.into(),
        priority: 0,
        cell,
    }
}

/// A kubectl-style age of an RFC 3339 time: `47s`, `5m3s`, `3h`, `2d4h`.
pub(super) fn age(created: &str) -> String {
    let Ok(t) = chrono::DateTime::parse_from_rfc3339(created) else {
        return "<unknown>".into();
    };
    human_duration((chrono::Utc::now() - t.with_timezone(&chrono::Utc)).num_seconds())
}

/// A duration in seconds as kubectl prints it (apimachinery's `HumanDuration`).
pub(super) fn human_duration(s: i64) -> String {
    let with = |big: i64, unit: &str, small: i64, small_unit: &str| {
        if small == 0 {
            format!("{big}{unit}")
        } else {
            format!("{big}{unit}{small}{small_unit}")
        }
    };
    let (m, h, d) = (s / 60, s / 3600, s / 86400);
    match s {
        s if s < -1 => "<invalid>".into(),
        s if s < 0 => "0s".into(),
        s if s < 120 => format!("{s}s"),
        _ if m < 10 => with(m, "m", s % 60, "s"),
        _ if m < 3 * 60 => format!("{m}m"),
        _ if h < 8 => with(h, "h", m % 60, "m"),
        _ if h < 48 => format!("{h}h"),
        _ if h < 8 * 24 => with(d, "d", h % 24, "h"),
        _ if h < 2 * 365 * 24 => format!("{d}d"),
        _ if h < 8 * 365 * 24 => with(d / 365, "y", d % 365, "d"),
        _ => format!("{}y", d / 365),
    }
}

/// The cells of an Event row, as kube-apiserver prints Events (both APIs).
#[derive(Clone, Copy, Debug)]
pub(super) enum EventCell {
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
