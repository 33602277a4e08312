//! The identity a write's body names (rules no differential case covers):
//! a Scale PUT without a name or in another namespace, an apply creating
//! an object naming a uid, and kubectl's server-side apply taking over
//! what its client-side apply set.

use serde_json::json;

use super::{cm_res, opts, store};
use crate::meta::types::PatchType;
use crate::registry::scale::ScaleWrite;

#[test]
fn a_scale_put_names_the_object_of_the_url_in_its_namespace() {
    let s = store();
    let r = s.resource_for_kind("apps", "v1", "Deployment").unwrap();
    let d = json!({"metadata": {"name": "d"}, "spec": {
        "selector": {"matchLabels": {"app": "d"}},
        "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "a", "image": "a:1"}]}}}});
    s.create(&r, Some("default"), d, &opts("t")).unwrap();
    let put = |scale: serde_json::Value| {
        s.scale(
            &r,
            Some("default"),
            "d",
            Some(ScaleWrite::Replace(scale)),
            &opts("t"),
        )
    };
    let nameless = put(
        json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {}, "spec": {"replicas": 2}}),
    );
    assert_eq!(
        nameless.unwrap_err().message,
        "the name of the object (d based on URL) was undeterminable: name must be provided"
    );
    let elsewhere = put(
        json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "d", "namespace": "other"}, "spec": {"replicas": 2}}),
    );
    assert_eq!(elsewhere.unwrap_err().code, 400);
    let scaled = put(
        json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "metadata": {"name": "d"}, "spec": {"replicas": 2}}),
    );
    assert_eq!(scaled.unwrap()["spec"]["replicas"], 2);
}

#[test]
fn an_apply_creating_an_object_that_names_a_uid_conflicts_and_creates_nothing() {
    let s = store();
    let r = cm_res(&s);
    let body = br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"u","uid":"11111111-2222-4333-8444-555555555555"},"data":{"a":"1"}}"#;
    let err = s
        .patch(
            &r,
            Some("default"),
            "u",
            &PatchType::Apply { force: true },
            body,
            &opts("a"),
        )
        .unwrap_err();
    assert_eq!(err.code, 409);
    assert_eq!(
        err.message,
        "Operation cannot be fulfilled on configmaps \"u\": uid mismatch: the provided object specified uid 11111111-2222-4333-8444-555555555555, and no existing object was found"
    );
    assert!(s.get(&r, Some("default"), "u").is_err());
}

#[test]
fn kubectls_server_side_apply_takes_over_what_its_client_side_apply_set() {
    let s = store();
    let r = cm_res(&s);
    let last = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"1","b":"2"}}"#;
    let created = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "annotations": {"kubectl.kubernetes.io/last-applied-configuration": last}},
        "data": {"a": "1", "b": "2", "c": "3"}});
    s.create(
        &r,
        Some("default"),
        created,
        &opts("kubectl-client-side-apply"),
    )
    .unwrap();
    let apply = PatchType::Apply { force: false };
    // Another manager conflicts on what the client-side apply set.
    let body =
        br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"9"}}"#;
    let err = s
        .patch(&r, Some("default"), "c", &apply, body, &opts("other"))
        .unwrap_err();
    assert_eq!(err.code, 409);
    // kubectl is let through on those fields, not on the others.
    let body = br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"9","c":"9"}}"#;
    let err = s
        .patch(&r, Some("default"), "c", &apply, body, &opts("kubectl"))
        .unwrap_err();
    assert_eq!(err.code, 409);
    assert_eq!(
        err.to_json()["details"]["causes"].as_array().unwrap().len(),
        1
    );
    assert_eq!(err.to_json()["details"]["causes"][0]["field"], ".data.c");
    let body = br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"9","b":"2"}}"#;
    let o = s
        .patch(&r, Some("default"), "c", &apply, body, &opts("kubectl"))
        .unwrap();
    assert_eq!(o["data"]["a"], "9");
    // And the annotation is what it applied.
    assert_eq!(
        o["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"],
        "{\"apiVersion\":\"v1\",\"data\":{\"a\":\"9\",\"b\":\"2\"},\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"}}\n"
    );
}

#[test]
fn every_request_to_a_deprecated_built_in_resource_is_warned_about() {
    let s = store();
    let statuses = s.resource_for_kind("", "v1", "ComponentStatus").unwrap();
    assert_eq!(
        statuses.deprecation_warning(),
        Some("v1 ComponentStatus is deprecated in v1.19+")
    );
    assert_eq!(cm_res(&s).deprecation_warning(), None);
}
