//! Deletion through kube-rs: finalizers, owner references, namespace
//! deletion, and deleting a collection (Events of both APIs).

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

use super::{api_err, cm};
use crate::common::{self, eventually, get};

#[tokio::test]
async fn finalizers_owner_references_and_namespace_deletion() {
    let t = common::start().await;
    let nss: Api<Namespace> = Api::all(t.client.clone());
    nss.create(
        &PostParams::default(),
        &serde_json::from_value(json!({"metadata": {"name": "app"}})).unwrap(),
    )
    .await
    .unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(t.client.clone(), "app");
    // Finalizer: the object stays, with deletionTimestamp, until it is removed.
    let mut f = cm("held", &[]);
    f.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    cms.create(&PostParams::default(), &f).await.unwrap();
    let pending = cms.delete("held", &DeleteParams::default()).await.unwrap();
    assert!(
        pending.is_left(),
        "a finalized object is returned, not a Status"
    );
    let held = cms.get("held").await.unwrap();
    assert!(held.metadata.deletion_timestamp.is_some());
    let e = api_err(
        cms.patch(
            "held",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"finalizers": ["example.com/hold", "new"]}})),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(e.code, 422, "no new finalizers once deleting");
    cms.patch(
        "held",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
    assert!(cms.get_opt("held").await.unwrap().is_none());

    // Owner references: background deletion collects the child.
    let owner = cms
        .create(&PostParams::default(), &cm("owner", &[]))
        .await
        .unwrap();
    let mut child = cm("child", &[]);
    child.metadata.owner_references = Some(vec![serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner.metadata.uid.unwrap()
    }))
    .unwrap()]);
    cms.create(&PostParams::default(), &child).await.unwrap();
    cms.delete("owner", &DeleteParams::background())
        .await
        .unwrap();
    eventually("child collected", || async {
        cms.get_opt("child").await.unwrap().is_none()
    })
    .await;

    // Foreground: the child goes first, then the owner.
    let owner = cms
        .create(&PostParams::default(), &cm("owner-fg", &[]))
        .await
        .unwrap();
    let mut child = cm("child-fg", &[]);
    child.metadata.owner_references = Some(vec![serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "ConfigMap", "name": "owner-fg", "uid": owner.metadata.uid.unwrap()
    }))
    .unwrap()]);
    cms.create(&PostParams::default(), &child).await.unwrap();
    let pending = cms
        .delete("owner-fg", &DeleteParams::foreground())
        .await
        .unwrap();
    let pending = pending
        .left()
        .expect("the owner is returned while its dependents go");
    assert!(
        pending
            .metadata
            .finalizers
            .unwrap_or_default()
            .contains(&"foregroundDeletion".to_string())
    );
    eventually("owner and child gone", || async {
        cms.get_opt("owner-fg").await.unwrap().is_none()
            && cms.get_opt("child-fg").await.unwrap().is_none()
    })
    .await;

    // Orphan keeps the child and strips its ownerReference.
    let owner = cms
        .create(&PostParams::default(), &cm("owner2", &[]))
        .await
        .unwrap();
    let mut child = cm("child2", &[]);
    child.metadata.owner_references = Some(vec![serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "ConfigMap", "name": "owner2", "uid": owner.metadata.uid.unwrap()
    }))
    .unwrap()]);
    cms.create(&PostParams::default(), &child).await.unwrap();
    cms.delete("owner2", &DeleteParams::orphan()).await.unwrap();
    eventually("owner gone", || async {
        cms.get_opt("owner2").await.unwrap().is_none()
    })
    .await;
    let c = cms.get("child2").await.unwrap();
    assert!(c.metadata.owner_references.unwrap_or_default().is_empty());

    // Namespace deletion: Terminating, no new content, then gone with its contents.
    let ns = nss.delete("app", &DeleteParams::default()).await.unwrap();
    let ns = ns.left().expect("namespace returned while terminating");
    assert_eq!(
        ns.status.and_then(|s| s.phase).as_deref(),
        Some("Terminating")
    );
    eventually("namespace gone", || async {
        nss.get_opt("app").await.unwrap().is_none()
    })
    .await;
    let (code, _, _) = get(t.server.addr(), "/api/v1/namespaces/app/configmaps/child2").await;
    assert_eq!(code, 404);
}

#[tokio::test]
async fn events_in_both_apis_and_delete_collection() {
    use k8s_openapi::api::core::v1::Event;
    let t = common::start().await;
    let events: Api<Event> = Api::namespaced(t.client.clone(), "default");
    for (name, reason) in [("e1", "Started"), ("e2", "Failed")] {
        let ev: Event = serde_json::from_value(json!({
            "metadata": {"name": name},
            "involvedObject": {"kind": "ConfigMap", "name": "target", "namespace": "default"},
            "reason": reason, "message": "m", "type": "Normal"
        }))
        .unwrap();
        events.create(&PostParams::default(), &ev).await.unwrap();
    }
    let l = events
        .list(&ListParams::default().fields("reason=Failed"))
        .await
        .unwrap();
    assert_eq!(l.items.len(), 1);
    let l = events
        .list(&ListParams::default().fields("involvedObject.name=target"))
        .await
        .unwrap();
    assert_eq!(l.items.len(), 2);
    let new_events: Api<k8s_openapi::api::events::v1::Event> =
        Api::namespaced(t.client.clone(), "default");
    let ev: k8s_openapi::api::events::v1::Event = serde_json::from_value(json!({
        "metadata": {"name": "n1"}, "eventTime": "2026-11-22T12:13:13.360908Z",
        "reason": "Reconciled", "action": "Reconcile", "type": "Normal",
        "reportingController": "rekon", "reportingInstance": "rekon-0",
        "regarding": {"kind": "ConfigMap", "name": "target", "namespace": "default"}
    }))
    .unwrap();
    new_events
        .create(&PostParams::default(), &ev)
        .await
        .unwrap();
    // One set of Events through both APIs, as upstream.
    let through_new = new_events.list(&ListParams::default()).await.unwrap();
    assert_eq!(through_new.items.len(), 3);
    let e1 = through_new
        .items
        .iter()
        .find(|e| e.metadata.name.as_deref() == Some("e1"))
        .expect("a core/v1 Event listed through events.k8s.io/v1");
    assert_eq!(e1.note.as_deref(), Some("m"));
    let n1 = events.get("n1").await.unwrap();
    assert_eq!(n1.reporting_component.as_deref(), Some("rekon"));
    assert_eq!(n1.involved_object.name.as_deref(), Some("target"));

    let cms: Api<ConfigMap> = Api::namespaced(t.client.clone(), "default");
    for i in 0..3 {
        cms.create(
            &PostParams::default(),
            &cm(&format!("dc-{i}"), &[("batch", "x")]),
        )
        .await
        .unwrap();
    }
    cms.create(&PostParams::default(), &cm("keep", &[]))
        .await
        .unwrap();
    cms.delete_collection(
        &DeleteParams::default(),
        &ListParams::default().labels("batch=x"),
    )
    .await
    .unwrap();
    let left: Vec<_> = cms
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|c| c.metadata.name)
        .collect();
    // The namespace's root CA stays too.
    assert_eq!(left, ["keep", "kube-root-ca.crt"]);
}
