//! Behaviour seen through kube-rs.

use std::collections::BTreeMap;

use futures::StreamExt as _;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams, WatchEvent,
    WatchParams,
};
use kube::core::{ApiResource, GroupVersionKind};
use kube::runtime::{WatchStreamExt as _, reflector, watcher};
use serde_json::json;

use crate::common::{self, eventually, get};

fn cm(name: &str, labels: &[(&str, &str)]) -> ConfigMap {
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<BTreeMap<_, _>>()},
        "data": {"k": "v"}
    }))
    .expect("configmap")
}

fn api_err(e: kube::Error) -> Box<kube::core::Status> {
    match e {
        kube::Error::Api(s) => s,
        other => panic!("expected an API error, got {other:?}"),
    }
}

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
async fn label_and_field_selectors_and_pagination() {
    let t = common::start().await;
    let cms: Api<ConfigMap> = Api::namespaced(t.client.clone(), "default");
    for i in 0..7 {
        let tier = if i % 2 == 0 { "even" } else { "odd" };
        cms.create(
            &PostParams::default(),
            &cm(&format!("cm-{i}"), &[("tier", tier), ("i", &i.to_string())]),
        )
        .await
        .unwrap();
    }
    let names = |l: kube::core::ObjectList<ConfigMap>| -> Vec<String> {
        l.items
            .into_iter()
            .filter_map(|c| c.metadata.name)
            .collect()
    };
    let cases = [
        ("tier=even", 4),
        ("tier!=even", 3),
        ("i in (1,2,3)", 3),
        ("i notin (1,2,3),tier=odd", 1),
        ("tier", 7),
        ("!tier", 0),
    ];
    for (sel, n) in cases {
        let l = cms.list(&ListParams::default().labels(sel)).await.unwrap();
        assert_eq!(l.items.len(), n, "selector {sel}");
    }
    let l = cms
        .list(&ListParams::default().fields("metadata.name=cm-3"))
        .await
        .unwrap();
    assert_eq!(names(l), ["cm-3"]);
    let e = api_err(
        cms.list(&ListParams::default().labels("tier in ("))
            .await
            .unwrap_err(),
    );
    assert_eq!(e.code, 400);

    let mut all = Vec::new();
    let mut lp = ListParams::default().limit(3);
    let mut rvs = Vec::new();
    loop {
        let page = cms.list(&lp).await.unwrap();
        rvs.push(page.metadata.resource_version.clone());
        let next = page.metadata.continue_.clone().filter(|c| !c.is_empty());
        all.extend(names(page));
        match next {
            Some(c) => lp = ListParams::default().limit(3).continue_token(&c),
            None => break,
        }
    }
    assert_eq!(all.len(), 7);
    assert_eq!(rvs.len(), 3);
    assert!(
        rvs.windows(2).all(|w| w[0] == w[1]),
        "every page has the list's resourceVersion"
    );
}

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
async fn server_side_apply_records_managers_and_conflicts() {
    let t = common::start().await;
    let cms: Api<ConfigMap> = Api::namespaced(t.client.clone(), "default");
    let cfg = |v: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": {"shared": v}});
    let o = cms
        .patch(
            "ssa",
            &PatchParams::apply("manager-a"),
            &Patch::Apply(cfg("a")),
        )
        .await
        .unwrap();
    let mf = o.metadata.managed_fields.unwrap();
    assert_eq!(mf[0].manager.as_deref(), Some("manager-a"));
    assert_eq!(mf[0].operation.as_deref(), Some("Apply"));
    let e = api_err(
        cms.patch(
            "ssa",
            &PatchParams::apply("manager-b"),
            &Patch::Apply(cfg("b")),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!((e.code, e.reason.as_str()), (409, "Conflict"));
    let o = cms
        .patch(
            "ssa",
            &PatchParams::apply("manager-b").force(),
            &Patch::Apply(cfg("b")),
        )
        .await
        .unwrap();
    assert_eq!(o.data.unwrap()["shared"], "b");
}

#[tokio::test]
async fn watch_delivers_events_bookmarks_and_times_out() {
    let t = common::start().await;
    let cms: Api<ConfigMap> = Api::namespaced(t.client.clone(), "default");
    let rv = cms
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    let mut stream = cms
        .watch(&WatchParams::default().timeout(3), &rv)
        .await
        .unwrap()
        .boxed();
    cms.create(&PostParams::default(), &cm("w", &[]))
        .await
        .unwrap();
    cms.patch(
        "w",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"k": "2"}})),
    )
    .await
    .unwrap();
    cms.delete("w", &DeleteParams::default()).await.unwrap();
    let mut seen = Vec::new();
    while let Some(ev) = stream.next().await {
        seen.push(match ev.unwrap() {
            WatchEvent::Added(_) => "ADDED",
            WatchEvent::Modified(_) => "MODIFIED",
            WatchEvent::Deleted(_) => "DELETED",
            WatchEvent::Bookmark(_) => "BOOKMARK",
            WatchEvent::Error(e) => panic!("{e:?}"),
        });
    }
    assert_eq!(
        seen,
        ["ADDED", "MODIFIED", "DELETED", "BOOKMARK"],
        "the stream ends at timeoutSeconds"
    );
}

#[tokio::test]
async fn too_old_resource_version_is_an_error_event() {
    let t = common::start_with(rekon_apiserver::ApiServer::builder().history_limit(2)).await;
    let cms: Api<ConfigMap> = Api::namespaced(t.client.clone(), "default");
    for i in 0..4 {
        cms.create(&PostParams::default(), &cm(&format!("c{i}"), &[]))
            .await
            .unwrap();
    }
    let (code, _, body) = get(
        t.server.addr(),
        "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=1",
    )
    .await;
    assert_eq!(code, 200);
    assert!(body.starts_with(r#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 1 ("#), "{body}");
    assert!(body.contains(r#""reason":"Expired","code":410}}"#));
}

#[tokio::test]
async fn watcher_survives_dropped_watches_and_410() {
    let t = common::start_with(rekon_apiserver::ApiServer::builder().history_limit(5)).await;
    let cms: Api<ConfigMap> = Api::namespaced(t.client.clone(), "default");
    let (reader, writer) = reflector::store();
    let stream = reflector(writer, watcher(cms.clone(), watcher::Config::default()))
        .default_backoff()
        .applied_objects();
    let task = tokio::spawn(stream.for_each(|_| async {}));
    reader.wait_until_ready().await.unwrap();
    let faults = t.server.faults();
    let pp = PostParams::default();
    for round in 0..3 {
        for i in 0..4 {
            cms.create(&pp, &cm(&format!("r{round}-{i}"), &[]))
                .await
                .unwrap();
        }
        cms.delete(&format!("r{round}-0"), &DeleteParams::default())
            .await
            .unwrap();
        if round == 1 {
            // Resuming from the last seen version now gets a 410.
            faults.compact();
        }
        faults.drop_watches();
        for i in 4..10 {
            cms.create(&pp, &cm(&format!("r{round}-{i}"), &[]))
                .await
                .unwrap();
        }
    }
    let want = || async {
        let mut fresh: Vec<String> = cms
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .filter_map(|c| c.metadata.name)
            .collect();
        fresh.sort();
        fresh
    };
    let fresh = want().await;
    assert_eq!(fresh.len(), 27);
    eventually("the watcher's view equals a fresh list", || {
        let reader = reader.clone();
        let fresh = fresh.clone();
        async move {
            let mut seen: Vec<String> = reader
                .state()
                .iter()
                .filter_map(|c| c.metadata.name.clone())
                .collect();
            seen.sort();
            seen == fresh
        }
    })
    .await;
    let watches = t
        .server
        .requests()
        .iter()
        .filter(|r| r.verb == "watch" && r.resource == "configmaps")
        .count();
    assert!(
        watches >= 4,
        "the watcher re-watched after each drop ({watches})"
    );
    task.abort();
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
    assert_eq!(left, ["keep"]);
}

#[tokio::test]
async fn streaming_list_watcher_gets_initial_events_then_changes() {
    let t = common::start().await;
    let cms: Api<ConfigMap> = Api::namespaced(t.client.clone(), "default");
    for i in 0..3 {
        cms.create(&PostParams::default(), &cm(&format!("s{i}"), &[]))
            .await
            .unwrap();
    }
    let (reader, writer) = reflector::store();
    let stream = reflector(
        writer,
        watcher(cms.clone(), watcher::Config::default().streaming_lists()),
    )
    .default_backoff()
    .applied_objects();
    let task = tokio::spawn(stream.for_each(|_| async {}));
    reader.wait_until_ready().await.unwrap();
    assert_eq!(reader.state().len(), 3);
    cms.delete("s0", &DeleteParams::default()).await.unwrap();
    eventually("deletion seen", || {
        let reader = reader.clone();
        async move { reader.state().len() == 2 }
    })
    .await;
    let watch = t
        .server
        .requests()
        .into_iter()
        .find(|r| r.verb == "watch")
        .unwrap();
    assert!(
        watch.query.contains("sendInitialEvents=true"),
        "{}",
        watch.query
    );
    task.abort();
}

#[tokio::test]
async fn metadata_only_list_and_watcher() {
    let t = common::start().await;
    let cms: Api<ConfigMap> = Api::namespaced(t.client.clone(), "default");
    cms.create(&PostParams::default(), &cm("m1", &[("a", "b")]))
        .await
        .unwrap();
    let list = cms.list_metadata(&ListParams::default()).await.unwrap();
    assert_eq!(list.items.len(), 1);
    assert_eq!(list.items[0].metadata.labels.as_ref().unwrap()["a"], "b");
    let (code, _, body) = common::raw(
        t.server.addr(),
        "GET",
        "/api/v1/namespaces/default/configmaps/m1",
        "application/json",
        "",
    )
    .await;
    assert_eq!(code, 200);
    assert!(body.contains("\"data\""));
    let (reader, writer) = reflector::store();
    let meta_api: Api<kube::core::PartialObjectMeta<ConfigMap>> =
        Api::namespaced(t.client.clone(), "default");
    let stream = reflector(writer, watcher(meta_api, watcher::Config::default()))
        .default_backoff()
        .applied_objects();
    let task = tokio::spawn(stream.for_each(|_| async {}));
    reader.wait_until_ready().await.unwrap();
    cms.create(&PostParams::default(), &cm("m2", &[]))
        .await
        .unwrap();
    eventually("metadata watcher sees the new object", || {
        let reader = reader.clone();
        async move { reader.state().len() == 2 }
    })
    .await;
    task.abort();
}
