//! Events: core/v1 and events.k8s.io/v1 are one set of objects, fields renamed between the two
//! (in the objects and in the field selectors each version takes).

use serde_json::{Map, Value, json};

use crate::machinery::field::{ErrorList, FieldError, Path};

use super::core::event::{self, shape};
use super::strategy::Selectable;
use crate::meta::selector::Refusal;

/// Fields core/v1 Events and events.k8s.io/v1 Events name differently:
/// (core/v1, events.k8s.io/v1). The others are the same.
pub(crate) const EVENT_FIELDS: [(&str, &str); 7] = [
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
    ("reportingComponent", "reportingController"),
];

/// A stored (core/v1) Event as events.k8s.io/v1 shows it: fields renamed,
/// empty optional ones left out, and the deprecated ones as upstream writes
/// them (`deprecatedSource: {}`, timestamps `null`).
pub(crate) fn event_view(core: &Value) -> Value {
    let Some(fields) = core.as_object() else {
        return core.clone();
    };
    let mut out = Map::new();
    for (key, value) in fields {
        let key = EVENT_FIELDS
            .iter()
            .find(|(c, _)| c == key)
            .map_or(key.as_str(), |(_, e)| e);
        let empty = match key {
            "reportingController" | "reportingInstance" => value == "",
            "deprecatedCount" => value == 0 || value.is_null(),
            _ => false,
        };
        if !empty {
            out.insert(key.to_string(), value.clone());
        }
    }
    for (key, default) in [
        ("eventTime", Value::Null),
        ("deprecatedSource", json!({})),
        ("deprecatedFirstTimestamp", Value::Null),
        ("deprecatedLastTimestamp", Value::Null),
    ] {
        out.entry(key).or_insert(default);
    }
    Value::Object(out)
}

/// An events.k8s.io/v1 Event as it is stored (core/v1 field names). A core
/// one is left as it is.
pub(crate) fn event_stored(view: Value) -> Value {
    let Value::Object(fields) = view else {
        return view;
    };
    let mut stored = Value::Object(
        fields
            .into_iter()
            .map(|(key, value)| {
                let key = EVENT_FIELDS
                    .iter()
                    .find(|(_, e)| *e == key)
                    .map_or(key, |(c, _)| c.to_string());
                (key, value)
            })
            .collect(),
    );
    shape(&mut stored);
    stored
}

/// The strict checks of an update through events.k8s.io/v1
/// (`ValidateEventUpdate` beyond the legacy ones): a grown series counted
/// from 2, and what an event said does not change — named by the core
/// fields it is stored in (`message`, `involvedObject`), the reason twice
/// as the real checks list it, the event time to the microsecond.
pub(crate) fn validate_update(new: &Value, old: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    if new.get("series") != old.get("series") {
        errors.extend(
            validate_create(new)
                .into_iter()
                .filter(|e| e.field.to_string().starts_with("series")),
        );
    }
    let zero = |v: Option<&Value>| match v {
        None | Some(Value::Null) => Value::Null,
        Some(Value::String(s)) if s.is_empty() => Value::Null,
        Some(Value::Number(n)) if n.as_i64() == Some(0) => Value::Null,
        Some(Value::Object(m)) if m.is_empty() => Value::Null,
        Some(other) => other.clone(),
    };
    for (core, field) in [
        ("involvedObject", "regarding"),
        ("reason", "reason"),
        ("message", "note"),
        ("source", "deprecatedSource"),
        ("firstTimestamp", "deprecatedFirstTimestamp"),
        ("lastTimestamp", "deprecatedLastTimestamp"),
        ("count", "deprecatedCount"),
        ("reason", "reason"),
        ("type", "type"),
        ("eventTime", "eventTime"),
        ("action", "action"),
        ("related", "related"),
        ("reportingController", "reportingController"),
        ("reportingInstance", "reportingInstance"),
    ] {
        let (now, before) = (zero(new.get(field)), zero(old.get(field)));
        if now != before {
            errors.push(FieldError::invalid(
                &Path::new([core]),
                now,
                "field is immutable",
            ));
        }
    }
    errors
}

/// The strict checks of an Event created through events.k8s.io/v1
/// (`ValidateEventCreate` beyond the legacy ones): an event time, a type
/// of `Normal` or `Warning`, a series counted from 2 with its last time,
/// and none of the deprecated fields.
pub(crate) fn validate_create(event: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let set = |keys: &[&str]| {
        keys.iter().any(|k| {
            event
                .get(*k)
                .is_some_and(|v| !v.is_null() && v != 0 && v != "" && v != &json!({}))
        })
    };
    if let Some(series) = event.get("series").filter(|s| !s.is_null()) {
        if series.get("count").and_then(Value::as_i64).unwrap_or(0) < 2 {
            errors.push(FieldError::invalid(
                &Path::new(["series.count"]),
                "",
                "should be at least 2",
            ));
        }
        if series.get("lastObservedTime").is_none_or(Value::is_null) {
            errors.push(FieldError::required(
                &Path::new(["series.lastObservedTime"]),
                "",
            ));
        }
    }
    if event.get("eventTime").is_none_or(Value::is_null) {
        errors.push(FieldError::required(&Path::new(["eventTime"]), ""));
    }
    let kind = event
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if kind != "Normal" && kind != "Warning" {
        errors.push(FieldError::invalid(
            &Path::new(["type"]),
            "",
            format!("has invalid value: {kind}"),
        ));
    }
    for (name, keys) in [
        (
            "firstTimestamp",
            ["firstTimestamp", "deprecatedFirstTimestamp"],
        ),
        (
            "lastTimestamp",
            ["lastTimestamp", "deprecatedLastTimestamp"],
        ),
        ("count", ["count", "deprecatedCount"]),
        ("source", ["source", "deprecatedSource"]),
    ] {
        if set(&keys) {
            errors.push(FieldError::invalid(
                &Path::new([name]),
                "",
                "needs to be unset",
            ));
        }
    }
    errors
}

/// events.k8s.io/v1's Event labels (`AddFieldLabelConversionsForEvent` in
/// `pkg/apis/events/v1/conversion.go`): its own names of the core Event's
/// fields (`regarding.*`, `reportingController`), over the core Event's
/// field set; `source` and `involvedObject.*` are refused.
pub(crate) static SELECTABLE: Selectable = Selectable {
    labels: &[
        ("reason", "reason"),
        ("regarding.kind", "involvedObject.kind"),
        ("regarding.namespace", "involvedObject.namespace"),
        ("regarding.name", "involvedObject.name"),
        ("regarding.uid", "involvedObject.uid"),
        ("regarding.apiVersion", "involvedObject.apiVersion"),
        (
            "regarding.resourceVersion",
            "involvedObject.resourceVersion",
        ),
        ("regarding.fieldPath", "involvedObject.fieldPath"),
        ("reportingController", "reportingComponent"),
        ("type", "type"),
        ("metadata.namespace", "metadata.namespace"),
        ("metadata.name", "metadata.name"),
    ],
    refusal: Refusal::NotSupported,
    fields: event::fields,
};
