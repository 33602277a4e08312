//! The events.k8s.io/v1 Event a module records, typed.

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::api::events::v1::{Event, EventSeries};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use k8s_openapi::jiff::Timestamp;

use super::MAX_NOTE;
use crate::contract::{EventType, ObjectRef};
use crate::names::api_version;

/// A time as an Event's MicroTime (microseconds).
fn micro_time(time: chrono::DateTime<chrono::Utc>) -> MicroTime {
    MicroTime(
        Timestamp::from_microsecond(time.timestamp_micros()).expect("a time after the year -9999"),
    )
}

/// An Event's series: `count` occurrences, the last at `observed`.
pub(super) fn series(count: u32, observed: chrono::DateTime<chrono::Utc>) -> EventSeries {
    EventSeries {
        count: i32::try_from(count).unwrap_or(i32::MAX),
        last_observed_time: micro_time(observed),
    }
}

/// `message`, cut to at most [`MAX_NOTE`] bytes (ending in `...` when cut).
fn note(message: &str) -> String {
    if message.len() <= MAX_NOTE {
        return message.to_string();
    }
    let mut cut = MAX_NOTE - 3;
    while !message.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}...", &message[..cut])
}

/// The events.k8s.io/v1 Event a module records about an object.
pub fn event_object(
    regarding: &ObjectRef,
    uid: Option<&str>,
    event_type: EventType,
    reason: &str,
    message: &str,
    component: &str,
) -> Event {
    let now = chrono::Utc::now();
    Event {
        metadata: ObjectMeta {
            name: Some(format!(
                "{}.{:x}",
                regarding.name,
                now.timestamp_nanos_opt().unwrap_or_default()
            )),
            namespace: Some(
                regarding
                    .namespace
                    .clone()
                    .unwrap_or_else(|| "default".to_string()),
            ),
            ..ObjectMeta::default()
        },
        event_time: Some(micro_time(now)),
        reporting_controller: Some(component.to_string()),
        reporting_instance: Some(component.to_string()),
        action: Some(reason.to_string()),
        reason: Some(reason.to_string()),
        note: Some(note(message)),
        type_: Some(
            match event_type {
                EventType::Normal => "Normal",
                EventType::Warning => "Warning",
            }
            .to_string(),
        ),
        regarding: Some(ObjectReference {
            api_version: Some(api_version(&regarding.kind)),
            kind: Some(regarding.kind.kind.clone()),
            namespace: regarding.namespace.clone(),
            name: Some(regarding.name.clone()),
            // With the uid, `kubectl describe` lists the Event under the
            // object.
            uid: uid.filter(|u| !u.is_empty()).map(str::to_string),
            ..ObjectReference::default()
        }),
        ..Event::default()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::contract::Gvk;

    #[test]
    fn notes_are_cut_to_what_the_api_server_accepts() {
        assert_eq!(note("short"), "short");
        let long = "é".repeat(MAX_NOTE);
        let cut = note(&long);
        assert!(
            cut.len() <= MAX_NOTE && cut.ends_with("..."),
            "{}",
            cut.len()
        );
    }

    #[test]
    fn an_event_is_written_as_the_api_server_takes_it() {
        let regarding = ObjectRef {
            kind: Gvk {
                group: "apps".into(),
                version: "v1".into(),
                kind: "Deployment".into(),
            },
            namespace: Some("shop".into()),
            name: "web".into(),
        };
        let mut event = event_object(
            &regarding,
            Some("u-1"),
            EventType::Warning,
            "Failed",
            "it broke",
            "rekon-app",
        );
        event.series = Some(series(3, chrono::Utc::now()));
        let event = serde_json::to_value(&event).unwrap();
        assert_eq!(event["apiVersion"], "events.k8s.io/v1");
        assert_eq!(event["kind"], "Event");
        assert_eq!(event["metadata"]["namespace"], "shop");
        assert!(
            event["metadata"]["name"]
                .as_str()
                .unwrap()
                .starts_with("web.")
        );
        assert_eq!(event["type"], "Warning");
        assert_eq!(
            (&event["reason"], &event["action"]),
            (&json!("Failed"), &json!("Failed"))
        );
        assert_eq!(event["note"], "it broke");
        assert_eq!(event["reportingController"], "rekon-app");
        assert_eq!(
            event["regarding"],
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "shop", "name": "web", "uid": "u-1"})
        );
        assert_eq!(event["series"]["count"], 3);
        // MicroTime: exactly six fractional digits, as the API server demands.
        for time in [&event["eventTime"], &event["series"]["lastObservedTime"]] {
            let time = time.as_str().unwrap();
            let fraction = time.split('.').nth(1).unwrap();
            assert_eq!(fraction.len(), "123456Z".len(), "{time}");
        }
    }
}
