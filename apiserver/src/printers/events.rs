//! The Event rows of `kubectl get events`, for both Event APIs.

use serde_json::{Value, json};

use super::builtin::{Cells, declared};
use super::column::{Cell, Column, EventCell, age};

/// The columns of `kubectl get events`, as the real server declares them
/// for both Event APIs (`printers.go`'s `eventColumnDefinitions`: all
/// printed; kubectl shows those of priority 0 unless `-o wide`).
pub(super) fn event_columns() -> Vec<Column> {
    let cells: Cells = vec![
        ("Last Seen", Cell::Event(EventCell::LastSeen)),
        ("Type", Cell::Event(EventCell::Type)),
        ("Reason", Cell::Event(EventCell::Reason)),
        ("Object", Cell::Event(EventCell::Object)),
        ("Subobject", Cell::Event(EventCell::Subobject)),
        ("Source", Cell::Event(EventCell::Source)),
        ("Message", Cell::Event(EventCell::Message)),
        ("First Seen", Cell::Event(EventCell::FirstSeen)),
        ("Count", Cell::Event(EventCell::Count)),
    ];
    declared("Event", cells).unwrap_or_default()
}

/// One cell of an Event row; `o` is a core/v1 or an events.k8s.io/v1 Event.
pub(super) fn event_cell(cell: EventCell, o: &Value) -> Value {
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
