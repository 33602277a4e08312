//! Objects through kube-rs: create, get and errors, conflicts, a CRD's status
//! subresource and generation, Lease renewal.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::json;

use super::{api_err, cm};
use crate::common::{self, get};

#[tokio::test]
async fn create_get_and_errors_like_the_real_server() {
    let t = common::start().await;
    let cms: Api<ConfigMap> = Api::namespaced(t.client.clone(), "default");
    let created = cms
        .create(&PostParams::default(), &cm("a", &[]))
        .await
        .unwrap();
    assert!(created.metadata.uid.is_some());
    assert!(created.metadata.creation_timestamp.is_some());
    let again = api_err(
        cms.create(&PostParams::default(), &cm("a", &[]))
            .await
            .unwrap_err(),
    );
    assert_eq!((again.code, again.reason.as_str()), (409, "AlreadyExists"));
    let missing = api_err(cms.get("nope").await.unwrap_err());
    assert_eq!(
        (missing.code, missing.message.as_str()),
        (404, "configmaps \"nope\" not found")
    );
    let other_ns: Api<ConfigMap> = Api::namespaced(t.client.clone(), "no-such-ns");
    let e = api_err(
        other_ns
            .create(&PostParams::default(), &cm("a", &[]))
            .await
            .unwrap_err(),
    );
    assert_eq!(
        (e.code, e.message.as_str()),
        (404, "namespaces \"no-such-ns\" not found")
    );
    let e = api_err(
        cms.create(&PostParams::default(), &cm("Bad_Name", &[]))
            .await
            .unwrap_err(),
    );
    assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"));
    // The Status body is exactly the real server's.
    let (code, headers, body) = get(
        t.server.addr(),
        "/api/v1/namespaces/default/configmaps/nope",
    )
    .await;
    assert_eq!(code, 404);
    assert!(headers.contains("content-type: application/json"));
    assert_eq!(
        body,
        r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"nope\" not found","reason":"NotFound","details":{"name":"nope","kind":"configmaps"},"code":404}"#
    );
}

#[tokio::test]
async fn two_concurrent_writers_one_gets_a_conflict() {
    let t = common::start().await;
    let cms: Api<ConfigMap> = Api::namespaced(t.client.clone(), "default");
    cms.create(&PostParams::default(), &cm("race", &[]))
        .await
        .unwrap();
    let mut a = cms.get("race").await.unwrap();
    let mut b = cms.get("race").await.unwrap();
    a.data = Some(BTreeMap::from([("k".into(), "from-a".into())]));
    b.data = Some(BTreeMap::from([("k".into(), "from-b".into())]));
    let pp = PostParams::default();
    let (ra, rb) = tokio::join!(cms.replace("race", &pp, &a), cms.replace("race", &pp, &b));
    let (ok, err) = match (ra, rb) {
        (Ok(o), Err(e)) | (Err(e), Ok(o)) => (o, e),
        other => panic!("expected exactly one winner, got {other:?}"),
    };
    let e = api_err(err);
    assert_eq!((e.code, e.reason.as_str()), (409, "Conflict"));
    assert_eq!(cms.get("race").await.unwrap().data, ok.data);
}

fn widget_crd() -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.demo.example.com"},
        "spec": {"group": "demo.example.com", "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "shortNames": ["wd"], "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
    }))
    .expect("crd")
}

#[tokio::test]
async fn crd_status_subresource_and_generation() {
    let t = common::start().await;
    let addr = t.server.addr();
    let (code, headers, _) = get(addr, "/apis/demo.example.com/v1").await;
    assert_eq!(code, 404);
    assert!(headers.contains("text/plain"));
    let crds: Api<CustomResourceDefinition> = Api::all(t.client.clone());
    let crd = crds
        .create(&PostParams::default(), &widget_crd())
        .await
        .unwrap();
    // The create answers as a real server's does: stored, not yet
    // established; its controller establishes it right after.
    let created = crd.status.and_then(|s| s.conditions).unwrap_or_default();
    assert!(created.is_empty(), "{created:?}");
    let read = crds.get("widgets.demo.example.com").await.unwrap();
    let established = read.status.and_then(|s| s.conditions).unwrap_or_default();
    assert!(
        established
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True")
    );
    // Discovery shows the new kind, with its status subresource and short name.
    let (code, _, body) = get(addr, "/apis/demo.example.com/v1").await;
    assert_eq!(code, 200);
    assert!(
        body.contains("\"widgets/status\"") && body.contains("\"wd\""),
        "{body}"
    );
    let discovery = kube::Discovery::new(t.client.clone()).run().await.unwrap();
    assert!(discovery.has_group("demo.example.com"));

    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("demo.example.com", "v1", "Widget"),
        "widgets",
    );
    let widgets: Api<DynamicObject> = Api::namespaced_with(t.client.clone(), "default", &ar);
    let w: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "demo.example.com/v1", "kind": "Widget",
        "metadata": {"name": "w1"}, "spec": {"size": 1}, "status": {"ready": true}
    }))
    .unwrap();
    let w = widgets.create(&PostParams::default(), &w).await.unwrap();
    assert_eq!(w.metadata.generation, Some(1));
    assert!(
        w.data.get("status").is_none(),
        "status is dropped on create"
    );
    let pp = PatchParams::default();
    let w = widgets
        .patch(
            "w1",
            &pp,
            &Patch::Merge(json!({"metadata": {"labels": {"a": "b"}}})),
        )
        .await
        .unwrap();
    assert_eq!(
        w.metadata.generation,
        Some(1),
        "metadata changes keep generation"
    );
    let w = widgets
        .patch("w1", &pp, &Patch::Merge(json!({"spec": {"size": 2}})))
        .await
        .unwrap();
    assert_eq!(
        w.metadata.generation,
        Some(2),
        "spec changes bump generation"
    );
    let w = widgets
        .patch_status(
            "w1",
            &pp,
            &Patch::Merge(json!({"status": {"ready": true}, "spec": {"size": 99}})),
        )
        .await
        .unwrap();
    assert_eq!(w.data["status"]["ready"], true);
    assert_eq!(w.data["spec"]["size"], 2, "status writes ignore spec");
    assert_eq!(
        w.metadata.generation,
        Some(2),
        "status changes keep generation"
    );
    let w = widgets
        .patch(
            "w1",
            &pp,
            &Patch::Merge(json!({"status": {"ready": false}})),
        )
        .await
        .unwrap();
    assert_eq!(
        w.data["status"]["ready"], true,
        "the main resource ignores status"
    );

    // Deleting the CRD removes its objects and the group.
    crds.delete("widgets.demo.example.com", &DeleteParams::default())
        .await
        .unwrap();
    assert_eq!(get(addr, "/apis/demo.example.com/v1").await.0, 404);
}

#[tokio::test]
async fn lease_renewal_by_put_and_stale_put() {
    use k8s_openapi::api::coordination::v1::Lease;
    let t = common::start().await;
    let leases: Api<Lease> = Api::namespaced(t.client.clone(), "kube-system");
    let lease: Lease = serde_json::from_value(json!({
        "metadata": {"name": "rekon-leader"},
        "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15,
                 "acquireTime": "2026-11-22T12:13:13.360908Z", "renewTime": "2026-11-22T12:13:13.360908Z"}
    }))
    .unwrap();
    let created = leases.create(&PostParams::default(), &lease).await.unwrap();
    let mut renewed = created.clone();
    renewed.spec.as_mut().unwrap().lease_transitions = Some(1);
    renewed.spec.as_mut().unwrap().holder_identity = Some("b".into());
    let renewed = leases
        .replace("rekon-leader", &PostParams::default(), &renewed)
        .await
        .unwrap();
    assert_eq!(renewed.spec.unwrap().holder_identity.as_deref(), Some("b"));
    // The copy read before the renewal is stale now.
    let e = api_err(
        leases
            .replace("rekon-leader", &PostParams::default(), &created)
            .await
            .unwrap_err(),
    );
    assert_eq!((e.code, e.reason.as_str()), (409, "Conflict"));
    // MicroTime needs exactly six fractional digits.
    let (code, _, body) = common::raw(
        t.server.addr(),
        "POST",
        "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases",
        "application/json",
        r#"{"apiVersion":"coordination.k8s.io/v1","kind":"Lease","metadata":{"name":"ms"},"spec":{"renewTime":"2026-11-22T12:13:13.360Z"}}"#,
    )
    .await;
    assert_eq!(code, 400, "{body}");
}
