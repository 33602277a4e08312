//! Objects being deleted: what a second delete, an update or an apply does
//! to them; deletes that wait (202-worthy) and deletecollection.

use serde_json::{Value, json};

use super::{cm, cm_res, opts, store, widget_crd};
use crate::meta::types::{DeleteOutcome, Deletion, ListOptions, PatchType, Propagation};
use crate::store::handle::Store;

fn pending(outcome: DeleteOutcome) -> Value {
    match outcome {
        DeleteOutcome::Pending(o) => o,
        DeleteOutcome::Deleted(o) => panic!("deleted: {o}"),
    }
}

fn rv(o: &Value) -> &str {
    o["metadata"]["resourceVersion"].as_str().unwrap()
}

fn bound_pod(s: &Store) {
    let pod = s.resource_for_kind("", "v1", "Pod").unwrap();
    s.create(
        &pod,
        Some("default"),
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "nginx"}]}}),
        &opts("t"),
    )
    .unwrap();
}

fn grace(seconds: i64) -> Deletion {
    Deletion {
        grace_period: Some(seconds),
        ..Deletion::default()
    }
}

#[test]
fn a_second_delete_may_add_the_orphan_finalizer() {
    let s = store();
    let r = cm_res(&s);
    let mut o = cm("c");
    o["metadata"]["finalizers"] = json!(["example.com/hold"]);
    s.create(&r, Some("default"), o, &opts("t")).unwrap();
    let first = pending(s.delete(&r, Some("default"), "c", None).unwrap());
    let again = pending(s.delete(&r, Some("default"), "c", None).unwrap());
    assert_eq!(rv(&again), rv(&first), "a delete that changes nothing");
    let orphaning = pending(
        s.delete(&r, Some("default"), "c", Some(Propagation::Orphan))
            .unwrap(),
    );
    assert_eq!(
        orphaning["metadata"]["finalizers"],
        json!(["example.com/hold", "orphan"])
    );
    assert_ne!(rv(&orphaning), rv(&first));
}

#[test]
fn events_get_no_garbage_collection_finalizer() {
    let s = store();
    let ev = s.resource_for_kind("", "v1", "Event").unwrap();
    s.create(
        &ev,
        Some("default"),
        json!({"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "e", "finalizers": ["example.com/hold"]},
            "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"}, "reason": "Started"}),
        &opts("t"),
    )
    .unwrap();
    let out = pending(
        s.delete(&ev, Some("default"), "e", Some(Propagation::Foreground))
            .unwrap(),
    );
    assert_eq!(out["metadata"]["finalizers"], json!(["example.com/hold"]));
    let read = s.get(&ev, Some("default"), "e").unwrap();
    assert_eq!(read["metadata"]["finalizers"], json!(["example.com/hold"]));
    assert_eq!(rv(&read), rv(&out));
}

#[test]
fn a_pods_grace_period_may_only_shorten() {
    let s = store();
    bound_pod(&s);
    let pod = s.resource_for_kind("", "v1", "Pod").unwrap();
    let first = pending(
        s.delete_with(&pod, Some("default"), "p", grace(60))
            .unwrap(),
    );
    assert_eq!(first["metadata"]["deletionGracePeriodSeconds"], 60);
    assert_eq!(first["metadata"]["generation"], 2);
    let longer = pending(
        s.delete_with(&pod, Some("default"), "p", grace(100))
            .unwrap(),
    );
    assert_eq!(longer["metadata"]["deletionGracePeriodSeconds"], 60);
    assert_eq!(rv(&longer), rv(&first));
    let shorter = pending(
        s.delete_with(&pod, Some("default"), "p", grace(10))
            .unwrap(),
    );
    assert_eq!(shorter["metadata"]["deletionGracePeriodSeconds"], 10);
    assert_eq!(shorter["metadata"]["generation"], 2);
    assert_ne!(rv(&shorter), rv(&first));
    let DeleteOutcome::Deleted(_) = s.delete_with(&pod, Some("default"), "p", grace(0)).unwrap()
    else {
        panic!("a zero grace period deletes it")
    };
}

#[test]
fn a_pod_in_its_grace_period_takes_updates_but_no_new_finalizer() {
    let s = store();
    bound_pod(&s);
    let pod = s.resource_for_kind("", "v1", "Pod").unwrap();
    pending(s.delete(&pod, Some("default"), "p", None).unwrap());
    let patch = |body: &str| {
        s.patch(
            &pod,
            Some("default"),
            "p",
            &PatchType::Merge,
            body.as_bytes(),
            &opts("t"),
        )
    };
    let labelled = patch(r#"{"metadata":{"labels":{"draining":"true"}}}"#).unwrap();
    assert_eq!(labelled["metadata"]["labels"]["draining"], "true");
    assert!(s.get(&pod, Some("default"), "p").is_ok());
    let err = patch(r#"{"metadata":{"finalizers":["example.com/late"]}}"#).unwrap_err();
    assert_eq!(err.code, 422);
}

#[test]
fn a_patch_cannot_mark_a_live_object_deleted() {
    let s = store();
    let r = cm_res(&s);
    s.create(&r, Some("default"), cm("c"), &opts("t")).unwrap();
    for body in [
        r#"{"metadata":{"deletionTimestamp":"2024-01-01T00:00:00Z"}}"#,
        r#"{"metadata":{"deletionGracePeriodSeconds":5}}"#,
    ] {
        let err = s
            .patch(
                &r,
                Some("default"),
                "c",
                &PatchType::Merge,
                body.as_bytes(),
                &opts("t"),
            )
            .unwrap_err();
        assert_eq!(err.code, 422, "{body}");
        assert!(
            err.message.contains("field is immutable"),
            "{}",
            err.message
        );
        let causes = &err.details.unwrap()["causes"];
        assert_eq!(causes.as_array().unwrap().len(), 2);
    }
}

#[test]
fn an_apply_that_drops_its_finalizer_deletes_the_custom_resource() {
    let s = store();
    s.apply_object(widget_crd()).unwrap();
    let r = s
        .resource_for_plural("demo.example.com", "v1", "widgets")
        .unwrap();
    let apply = |body: Value| {
        s.patch(
            &r,
            Some("default"),
            "w",
            &PatchType::Apply { force: false },
            body.to_string().as_bytes(),
            &opts("a"),
        )
    };
    let widget = |finalizers: Option<Value>, size: i64| {
        let mut w = json!({"apiVersion": "demo.example.com/v1", "kind": "Widget",
            "metadata": {"name": "w"}, "spec": {"size": size}});
        if let Some(f) = finalizers {
            w["metadata"]["finalizers"] = f;
        }
        w
    };
    apply(widget(Some(json!(["example.com/a"])), 1)).unwrap();
    pending(s.delete(&r, Some("default"), "w", None).unwrap());
    let err = apply(widget(Some(json!(["example.com/a", "example.com/b"])), 1)).unwrap_err();
    assert_eq!(err.code, 422, "{}", err.message);
    let out = apply(widget(None, 2)).unwrap();
    assert_eq!(out["spec"]["size"], 2);
    assert_eq!(s.get(&r, Some("default"), "w").unwrap_err().code, 404);
}

#[test]
fn deletecollection_answers_what_it_deletes() {
    let s = store();
    let r = cm_res(&s);
    for name in ["a", "b", "c"] {
        let mut o = cm(name);
        o["metadata"]["labels"] = json!({"app": "x"});
        s.create(&r, Some("default"), o, &opts("t")).unwrap();
    }
    let list = |limit: Option<usize>| ListOptions {
        namespace: Some("default".into()),
        label_selector: Some("app=x".into()),
        limit,
        ..ListOptions::default()
    };
    let dry = Deletion {
        dry_run: true,
        ..Deletion::default()
    };
    let answered = s.delete_collection(&r, &list(None), &dry).unwrap();
    assert_eq!(answered.items.len(), 3);
    assert_eq!(s.list(&r, &list(None)).unwrap().items.len(), 3);
    let page = s
        .delete_collection(&r, &list(Some(2)), &Deletion::default())
        .unwrap();
    assert_eq!(page.items.len(), 2);
    assert!(page.continue_token.is_some());
    let left = s.list(&r, &list(None)).unwrap();
    assert_eq!(left.items.len(), 1);
    assert_eq!(left.items[0]["metadata"]["name"], "c");
}
