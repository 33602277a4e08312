//! Resources served beyond the built-in ones, and the two Event APIs.

use serde_json::{Value, json};

use super::{opts, store};
use crate::meta::types::{ListOptions, PatchType};

#[test]
fn events_are_one_set_of_objects_through_both_apis() {
    let s = store();
    let core = s.resource_for_kind("", "v1", "Event").unwrap();
    let events = s.resource_for_kind("events.k8s.io", "v1", "Event").unwrap();
    let (_, core_watch) = s
        .watch_channel(&core, &ListOptions::default(), None)
        .unwrap();
    let regarding =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "namespace": "default", "name": "demo"});
    s.create(
        &events,
        Some("default"),
        json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": "demo.1"}, "eventTime": "2026-11-22T12:14:00.800911Z",
            "regarding": regarding, "reason": "Synced", "action": "Reconcile",
            "note": "synced", "type": "Normal",
            "reportingController": "rekon-app", "reportingInstance": "replica-a"}),
        &opts("t"),
    )
    .unwrap();
    // Read back through core/v1: the same object, with core field names.
    let as_core = s.get(&core, Some("default"), "demo.1").unwrap();
    assert_eq!(as_core["apiVersion"], "v1");
    assert_eq!(as_core["involvedObject"]["name"], "demo");
    assert_eq!(as_core["message"], "synced");
    assert_eq!(as_core["reportingComponent"], "rekon-app");
    assert!(as_core.get("note").is_none() && as_core.get("regarding").is_none());
    let listed = s.list(&core, &ListOptions::default()).unwrap();
    assert_eq!(listed.items.len(), 1);
    let seen: Vec<_> = core_watch.try_iter().collect();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].object["message"], "synced");

    // A core/v1 Event read through events.k8s.io/v1, and patched there.
    s.create(
        &core,
        Some("default"),
        json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "demo.2"},
            "involvedObject": regarding, "reason": "Updated", "message": "updated",
            "source": {"component": "kref"}, "count": 1, "type": "Normal",
            "reportingComponent": "kref", "reportingInstance": ""}),
        &opts("t"),
    )
    .unwrap();
    let as_events = s.get(&events, Some("default"), "demo.2").unwrap();
    assert_eq!(as_events["apiVersion"], "events.k8s.io/v1");
    assert_eq!(as_events["regarding"]["name"], "demo");
    assert_eq!(as_events["note"], "updated");
    assert_eq!(as_events["deprecatedSource"]["component"], "kref");
    assert_eq!(as_events["deprecatedCount"], 1);
    assert_eq!(as_events["eventTime"], Value::Null);
    assert!(as_events.get("reportingInstance").is_none());
    // What an event said cannot change through events.k8s.io/v1
    // (`ValidateEventUpdate`), named by its core fields; through core/v1 it
    // can.
    let refused = s
        .patch(
            &events,
            Some("default"),
            "demo.2",
            &PatchType::Merge,
            br#"{"note":"updated twice","deprecatedCount":2}"#,
            &opts("t"),
        )
        .unwrap_err();
    assert_eq!(refused.code, 422);
    assert!(
        refused
            .message
            .contains("message: Invalid value: \"updated twice\": field is immutable"),
        "{}",
        refused.message
    );
    s.patch(
        &core,
        Some("default"),
        "demo.2",
        &PatchType::Merge,
        br#"{"message":"updated twice","count":2}"#,
        &opts("t"),
    )
    .unwrap();
    let as_core = s.get(&core, Some("default"), "demo.2").unwrap();
    assert_eq!(
        (as_core["message"].clone(), as_core["count"].clone()),
        (json!("updated twice"), json!(2))
    );
    let by_field = s
        .list(
            &events,
            &ListOptions {
                field_selector: Some("regarding.name=demo".into()),
                ..ListOptions::default()
            },
        )
        .unwrap();
    assert_eq!(by_field.items.len(), 2);
}

#[test]
fn further_resources_are_served_from_a_discovery_document() {
    let s = store();
    let doc = json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "example.com/v1",
        "resources": [{"name": "gadgets", "kind": "Gadget", "namespaced": true},
                      {"name": "gadgets/status", "kind": "Gadget", "namespaced": true, "verbs": ["get", "patch"]}]});
    let served = s.serve_api_resources(&doc).unwrap();
    assert_eq!(served.len(), 1);
    let res = s.resource_for_kind("example.com", "v1", "Gadget").unwrap();
    // Without verbs, a hand-written entry serves them all; status is a subresource.
    assert!(res.serves("create") && res.serves("watch") && res.status_subresource);
    let gadget =
        json!({"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}});
    s.create(&res, Some("default"), gadget, &opts("t")).unwrap();
    // Not a discovery document, or a core kind of another version: refused, clearly.
    let err = s
        .serve_api_resources(&json!({"kind": "ConfigMap"}))
        .unwrap_err();
    assert!(err.contains("expected an APIResourceList"), "{err}");
    let core = json!({"kind": "APIResourceList", "groupVersion": "v2",
        "resources": [{"name": "things", "kind": "Thing"}]});
    let err = s.serve_api_resources(&core).unwrap_err();
    assert!(err.contains("core group serves v1 only"), "{err}");
    assert!(s.resource_for_kind("", "v2", "Thing").is_none());
}
