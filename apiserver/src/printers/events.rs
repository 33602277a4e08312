//! The Event rows of `kubectl get events`, for both Event APIs.

use serde_json::{Value, json};

use super::column::{Cell, Column, EventCell, age};

/// The columns of `kubectl get events` (the server prints all of them;
/// kubectl shows those of priority 0 unless `-o wide`).
pub(super) fn event_columns(mut name: Column) -> Vec<Column> {
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
