use serde_json::{Value, json};

use crate::api::types::{
    DeleteOutcome, EventType, ListOptions, PatchType, Propagation, StoreConfig, WriteOptions,
};
use crate::resource::info::ResourceInfo;
use crate::store::handle::Store;

fn store() -> Store {
    Store::new(StoreConfig::default())
}

fn cm_res(s: &Store) -> ResourceInfo {
    s.resource_for_kind("", "v1", "ConfigMap")
        .expect("configmaps")
}

fn cm(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"a": "1"}})
}

fn opts(manager: &str) -> WriteOptions {
    WriteOptions {
        field_manager: Some(manager.into()),
        ..WriteOptions::default()
    }
}

#[test]
fn builtin_namespaces_exist() {
    let s = store();
    let ns = s.resource_for_plural("", "v1", "namespaces").unwrap();
    for n in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        let o = s.get(&ns, None, n).unwrap();
        assert_eq!(o["status"]["phase"], "Active");
        assert_eq!(o["kind"], "Namespace");
    }
}

#[test]
fn create_get_conflicts_and_missing_namespace() {
    let s = store();
    let r = cm_res(&s);
    let o = s.create(&r, Some("default"), cm("a"), &opts("t")).unwrap();
    assert_eq!(o["apiVersion"], "v1");
    assert!(o["metadata"]["uid"].is_string());
    assert!(o["metadata"].get("generation").is_none());
    assert_eq!(o["metadata"]["managedFields"][0]["manager"], "t");
    let err = s
        .create(&r, Some("default"), cm("a"), &opts("t"))
        .unwrap_err();
    assert_eq!((err.code, err.reason.as_str()), (409, "AlreadyExists"));
    let err = s.create(&r, Some("nope"), cm("b"), &opts("t")).unwrap_err();
    assert_eq!(err.code, 404);
    assert_eq!(err.message, "namespaces \"nope\" not found");
    let err = s
        .create(&r, Some("default"), cm("Bad_Name"), &opts("t"))
        .unwrap_err();
    assert_eq!(err.code, 422);
    assert_eq!(
        err.to_json()["details"]["causes"][0]["field"],
        "metadata.name"
    );
}

#[test]
fn replace_with_stale_resource_version_conflicts_and_noop_keeps_rv() {
    let s = store();
    let r = cm_res(&s);
    let o = s.create(&r, Some("default"), cm("a"), &opts("t")).unwrap();
    let mut v1 = o.clone();
    v1["data"]["a"] = json!("2");
    let o2 = s.replace(&r, Some("default"), "a", v1, &opts("t")).unwrap();
    assert_ne!(
        o2["metadata"]["resourceVersion"],
        o["metadata"]["resourceVersion"]
    );
    let mut stale = o.clone();
    stale["data"]["a"] = json!("3");
    let err = s
        .replace(&r, Some("default"), "a", stale, &opts("t"))
        .unwrap_err();
    assert_eq!(err.reason, "Conflict");
    let o3 = s
        .patch(
            &r,
            Some("default"),
            "a",
            &PatchType::Merge,
            br#"{"data":{"a":"2"}}"#,
            &opts("t"),
        )
        .unwrap();
    assert_eq!(
        o3["metadata"]["resourceVersion"],
        o2["metadata"]["resourceVersion"]
    );
}

fn widget_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.demo.example.com"},
        "spec": {"group": "demo.example.com", "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "shortNames": ["wd"]},
            "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}]}
    })
}

#[test]
fn crd_serves_kind_with_generation_and_status_subresource() {
    let s = store();
    s.apply_object(widget_crd()).unwrap();
    let r = s
        .resource_for_plural("demo.example.com", "v1", "widgets")
        .expect("served");
    assert_eq!(r.short_names, vec!["wd"]);
    assert!(r.status_subresource);
    let w = json!({"apiVersion": "demo.example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 1}, "status": {"ready": true}});
    let o = s.create(&r, Some("default"), w, &opts("t")).unwrap();
    assert_eq!(o["metadata"]["generation"], 1);
    assert!(o.get("status").is_none(), "status dropped on create");
    let o = s
        .patch(
            &r,
            Some("default"),
            "w",
            &PatchType::Merge,
            br#"{"metadata":{"labels":{"x":"y"}}}"#,
            &opts("t"),
        )
        .unwrap();
    assert_eq!(o["metadata"]["generation"], 1);
    let o = s
        .patch(
            &r,
            Some("default"),
            "w",
            &PatchType::Merge,
            br#"{"spec":{"size":2},"status":{"ready":true}}"#,
            &opts("t"),
        )
        .unwrap();
    assert_eq!(o["metadata"]["generation"], 2);
    assert!(o.get("status").is_none(), "main resource ignores status");
    let st = WriteOptions {
        subresource: Some("status".into()),
        ..opts("ctl")
    };
    let o = s
        .patch(
            &r,
            Some("default"),
            "w",
            &PatchType::Merge,
            br#"{"spec":{"size":9},"status":{"ready":true}}"#,
            &st,
        )
        .unwrap();
    assert_eq!(o["status"]["ready"], true);
    assert_eq!(o["spec"]["size"], 2);
    assert_eq!(o["metadata"]["generation"], 2);
    let err = s
        .patch(
            &r,
            Some("default"),
            "w",
            &PatchType::StrategicMerge,
            b"{}",
            &opts("t"),
        )
        .unwrap_err();
    assert_eq!(err.code, 415);
    // Deleting the CRD removes the kind and its objects.
    let crd = s
        .resource_for_plural("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        .unwrap();
    s.delete(&crd, None, "widgets.demo.example.com", None)
        .unwrap();
    assert!(
        s.resource_for_plural("demo.example.com", "v1", "widgets")
            .is_none()
    );
}

#[test]
fn finalizers_keep_object_until_removed() {
    let s = store();
    let r = cm_res(&s);
    let mut o = cm("f");
    o["metadata"]["finalizers"] = json!(["x/y"]);
    s.create(&r, Some("default"), o, &opts("t")).unwrap();
    let DeleteOutcome::Pending(p) = s.delete(&r, Some("default"), "f", None).unwrap() else {
        panic!("pending")
    };
    assert!(p["metadata"]["deletionTimestamp"].is_string());
    let err = s
        .patch(
            &r,
            Some("default"),
            "f",
            &PatchType::Merge,
            br#"{"metadata":{"finalizers":["x/y","z"]}}"#,
            &opts("t"),
        )
        .unwrap_err();
    assert_eq!(err.code, 422);
    s.patch(
        &r,
        Some("default"),
        "f",
        &PatchType::Merge,
        br#"{"metadata":{"finalizers":null}}"#,
        &opts("t"),
    )
    .unwrap();
    assert_eq!(s.get(&r, Some("default"), "f").unwrap_err().code, 404);
}

#[test]
fn a_claim_no_pod_uses_is_deleted_and_one_in_use_waits() {
    let s = store();
    let pvc = s
        .resource_for_kind("", "v1", "PersistentVolumeClaim")
        .unwrap();
    let pod = s.resource_for_kind("", "v1", "Pod").unwrap();
    let claim = |name: &str| {
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}})
    };
    for name in ["free", "used"] {
        let created = s
            .create(&pvc, Some("default"), claim(name), &opts("t"))
            .unwrap();
        assert_eq!(
            created["metadata"]["finalizers"],
            json!(["kubernetes.io/pvc-protection"])
        );
    }
    s.create(
        &pod,
        Some("default"),
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "image": "busybox"}],
                "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "used"}}]}}),
        &opts("t"),
    )
    .unwrap();
    assert!(matches!(
        s.delete(&pvc, Some("default"), "free", None).unwrap(),
        DeleteOutcome::Deleted(_)
    ));
    assert_eq!(s.get(&pvc, Some("default"), "free").unwrap_err().code, 404);
    let DeleteOutcome::Pending(p) = s.delete(&pvc, Some("default"), "used", None).unwrap() else {
        panic!("a claim a Pod uses waits")
    };
    assert!(p["metadata"]["deletionTimestamp"].is_string());
}

#[test]
fn owner_references_are_collected() {
    let s = store();
    let r = cm_res(&s);
    for (prop, child_survives) in [
        (None, false),
        (Some(Propagation::Foreground), false),
        (Some(Propagation::Orphan), true),
    ] {
        let owner = s
            .create(&r, Some("default"), cm("owner"), &opts("t"))
            .unwrap();
        let mut child = cm("child");
        child["metadata"]["ownerReferences"] = json!([{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"]}]);
        s.create(&r, Some("default"), child, &opts("t")).unwrap();
        s.delete(&r, Some("default"), "owner", prop).unwrap();
        assert_eq!(
            s.get(&r, Some("default"), "owner").unwrap_err().code,
            404,
            "{prop:?}"
        );
        let c = s.get(&r, Some("default"), "child");
        assert_eq!(c.is_ok(), child_survives, "{prop:?}");
        if let Ok(c) = c {
            assert!(c["metadata"].get("ownerReferences").is_none());
            s.delete(&r, Some("default"), "child", None).unwrap();
        }
    }
}

#[test]
fn namespace_deletion_removes_contents() {
    let s = store();
    let ns = s.resource_for_plural("", "v1", "namespaces").unwrap();
    let r = cm_res(&s);
    s.create(&ns, None, json!({"metadata": {"name": "gone"}}), &opts("t"))
        .unwrap();
    s.create(&r, Some("gone"), cm("a"), &opts("t")).unwrap();
    let mut f = cm("held");
    f["metadata"]["finalizers"] = json!(["x/y"]);
    s.create(&r, Some("gone"), f, &opts("t")).unwrap();
    s.delete(&ns, None, "gone", None).unwrap();
    assert_eq!(
        s.get(&ns, None, "gone").unwrap()["status"]["phase"],
        "Terminating"
    );
    let err = s
        .create(&r, Some("gone"), cm("late"), &opts("t"))
        .unwrap_err();
    assert_eq!(err.code, 403);
    assert_eq!(s.get(&r, Some("gone"), "a").unwrap_err().code, 404);
    s.patch(
        &r,
        Some("gone"),
        "held",
        &PatchType::Merge,
        br#"{"metadata":{"finalizers":null}}"#,
        &opts("t"),
    )
    .unwrap();
    assert_eq!(s.get(&ns, None, "gone").unwrap_err().code, 404);
}

#[test]
fn list_selectors_and_pages() {
    let s = store();
    let r = cm_res(&s);
    for i in 0..5 {
        let mut o = cm(&format!("c{i}"));
        o["metadata"]["labels"] = json!({"i": i.to_string(), "even": (i % 2 == 0).to_string()});
        s.create(&r, Some("default"), o, &opts("t")).unwrap();
    }
    let sel = |l: &str| ListOptions {
        label_selector: Some(l.into()),
        ..ListOptions::default()
    };
    assert_eq!(s.list(&r, &sel("even=true")).unwrap().items.len(), 3);
    assert_eq!(
        s.list(&r, &sel("i in (1,2),even!=true"))
            .unwrap()
            .items
            .len(),
        1
    );
    let f = ListOptions {
        field_selector: Some("metadata.name=c3".into()),
        ..ListOptions::default()
    };
    assert_eq!(s.list(&r, &f).unwrap().items[0]["metadata"]["name"], "c3");
    let mut names = Vec::new();
    let mut o = ListOptions {
        limit: Some(2),
        ..ListOptions::default()
    };
    let first = s.list(&r, &o).unwrap();
    assert_eq!(first.remaining_item_count, Some(3));
    let mut page = first.clone();
    loop {
        assert_eq!(page.resource_version, first.resource_version);
        names.extend(
            page.items
                .iter()
                .map(|i| i["metadata"]["name"].as_str().unwrap().to_string()),
        );
        match page.continue_token {
            Some(t) => o.continue_token = Some(t),
            None => break,
        }
        page = s.list(&r, &o).unwrap();
    }
    assert_eq!(names, ["c0", "c1", "c2", "c3", "c4"]);
}

/// Pages one item at a time; returns (namespace, name) of every item.
fn page_through(s: &Store, r: &ResourceInfo, namespace: Option<&str>) -> Vec<(String, String)> {
    let mut o = ListOptions {
        limit: Some(1),
        namespace: namespace.map(str::to_string),
        ..ListOptions::default()
    };
    let mut seen = Vec::new();
    loop {
        let page = s.list(r, &o).unwrap();
        seen.extend(page.items.iter().map(|i| {
            let meta = &i["metadata"];
            let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
            (text(&meta["namespace"]), text(&meta["name"]))
        }));
        match page.continue_token {
            Some(t) => o.continue_token = Some(t),
            None => return seen,
        }
    }
}

#[test]
fn pages_cover_namespaces_whose_names_share_a_prefix() {
    let s = store();
    let ns = s.resource_for_plural("", "v1", "namespaces").unwrap();
    for n in ["a", "a-b", "b"] {
        s.create(
            &ns,
            None,
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n}}),
            &opts("t"),
        )
        .unwrap();
    }
    let r = cm_res(&s);
    for (n, name) in [("a-b", "x"), ("a", "y"), ("a", "x"), ("b", "a")] {
        s.create(&r, Some(n), cm(name), &opts("t")).unwrap();
    }
    let pair = |n: &str, name: &str| (n.to_string(), name.to_string());
    assert_eq!(
        page_through(&s, &r, None),
        [
            pair("a", "x"),
            pair("a", "y"),
            pair("a-b", "x"),
            pair("b", "a")
        ]
    );
    assert_eq!(
        page_through(&s, &r, Some("a")),
        [pair("a", "x"), pair("a", "y")]
    );
    assert_eq!(page_through(&s, &r, Some("a-b")), [pair("a-b", "x")]);
    let first = s
        .list(
            &r,
            &ListOptions {
                limit: Some(1),
                namespace: Some("a".into()),
                ..ListOptions::default()
            },
        )
        .unwrap();
    assert_eq!(first.remaining_item_count, Some(1));
}

#[test]
fn watch_replays_history_and_expires() {
    let s = Store::new(StoreConfig::default().history_limit(3));
    let r = cm_res(&s);
    let rv0 = s.resource_version();
    s.create(&r, Some("default"), cm("a"), &opts("t")).unwrap();
    let (_, rx) = s
        .watch_channel(&r, &ListOptions::default(), Some(&rv0))
        .unwrap();
    s.delete(&r, Some("default"), "a", None).unwrap();
    let got: Vec<_> = rx.try_iter().map(|e| e.event_type).collect();
    assert_eq!(got, [EventType::Added, EventType::Deleted]);
    for i in 0..4 {
        s.create(&r, Some("default"), cm(&format!("x{i}")), &opts("t"))
            .unwrap();
    }
    let err = s
        .watch_channel(&r, &ListOptions::default(), Some(&rv0))
        .unwrap_err();
    assert_eq!((err.code, err.reason.as_str()), (410, "Expired"));
    assert!(err.message.starts_with("too old resource version"));
    let (_, rx) = s.watch_channel(&r, &ListOptions::default(), None).unwrap();
    assert_eq!(rx.try_iter().count(), 4);
    s.drop_watches();
    assert_eq!(s.watch_count(), 0);
}

#[test]
fn server_side_apply_conflicts_and_force() {
    let s = store();
    let r = cm_res(&s);
    let apply = PatchType::Apply { force: false };
    let body = br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ssa"},"data":{"shared":"a","mine":"1"}}"#;
    let err = s
        .patch(
            &r,
            Some("default"),
            "ssa",
            &apply,
            body,
            &WriteOptions::default(),
        )
        .unwrap_err();
    assert_eq!(err.code, 422);
    s.patch(&r, Some("default"), "ssa", &apply, body, &opts("manager-a"))
        .unwrap();
    let body_b = br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ssa"},"data":{"shared":"b"}}"#;
    let err = s
        .patch(
            &r,
            Some("default"),
            "ssa",
            &apply,
            body_b,
            &opts("manager-b"),
        )
        .unwrap_err();
    assert_eq!(err.code, 409);
    assert_eq!(
        err.to_json()["details"]["causes"][0]["field"],
        ".data.shared"
    );
    let o = s
        .patch(
            &r,
            Some("default"),
            "ssa",
            &PatchType::Apply { force: true },
            body_b,
            &opts("manager-b"),
        )
        .unwrap();
    assert_eq!(o["data"]["shared"], "b");
    // manager-a stops applying "mine": it is removed.
    let body_a2 = br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"ssa"}}"#;
    let o = s
        .patch(
            &r,
            Some("default"),
            "ssa",
            &apply,
            body_a2,
            &opts("manager-a"),
        )
        .unwrap();
    assert!(o["data"].get("mine").is_none(), "{o}");
    assert_eq!(o["data"]["shared"], "b");
}

#[test]
fn json_patch_failure_is_422() {
    let s = store();
    let r = cm_res(&s);
    s.create(&r, Some("default"), cm("j"), &opts("t")).unwrap();
    let err = s
        .patch(
            &r,
            Some("default"),
            "j",
            &PatchType::Json,
            br#"[{"op":"test","path":"/data/a","value":"x"}]"#,
            &opts("t"),
        )
        .unwrap_err();
    assert_eq!(err.code, 422);
}

#[test]
fn label_selected_watch_sees_objects_leave_and_enter() {
    let s = store();
    let r = cm_res(&s);
    let opts_sel = ListOptions {
        label_selector: Some("app=web".into()),
        ..ListOptions::default()
    };
    let (_, rx) = s.watch_channel(&r, &opts_sel, None).unwrap();
    s.create(&r, Some("default"), cm("x"), &opts("t")).unwrap();
    s.patch(
        &r,
        Some("default"),
        "x",
        &PatchType::Merge,
        br#"{"metadata":{"labels":{"app":"web"}}}"#,
        &opts("t"),
    )
    .unwrap();
    s.patch(
        &r,
        Some("default"),
        "x",
        &PatchType::Merge,
        br#"{"metadata":{"labels":{"app":"db"}}}"#,
        &opts("t"),
    )
    .unwrap();
    let got: Vec<_> = rx.try_iter().map(|e| e.event_type).collect();
    assert_eq!(got, [EventType::Added, EventType::Deleted]);
}

#[test]
fn status_json_matches_the_real_server() {
    let s = store();
    let r = cm_res(&s);
    let err = s.get(&r, Some("kref"), "does-not-exist").unwrap_err();
    assert_eq!(
        serde_json::to_string(&err.to_json()).unwrap(),
        r#"{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \"does-not-exist\" not found","reason":"NotFound","details":{"name":"does-not-exist","kind":"configmaps"},"code":404}"#
    );
}

#[test]
fn strategic_merge_on_deployment_keeps_other_containers() {
    let s = store();
    let r = s.resource_for_kind("apps", "v1", "Deployment").unwrap();
    let d = json!({"metadata": {"name": "d"}, "spec": {
        "selector": {"matchLabels": {"app": "d"}},
        "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [
        {"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]}}}});
    let o = s.create(&r, Some("default"), d, &opts("t")).unwrap();
    assert_eq!(o["metadata"]["generation"], 1);
    let o = s
        .patch(
            &r,
            Some("default"),
            "d",
            &PatchType::StrategicMerge,
            br#"{"spec":{"template":{"spec":{"containers":[{"name":"b","image":"b:2"}]}}}}"#,
            &opts("t"),
        )
        .unwrap();
    let images: Vec<_> = o["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].clone(), c["image"].clone()))
        .collect();
    assert_eq!(
        images,
        [(json!("a"), json!("a:1")), (json!("b"), json!("b:2"))]
    );
    assert_eq!(o["metadata"]["generation"], 2);
}

#[test]
fn snapshot_and_restore_keep_objects_and_custom_kinds() {
    let s = store();
    s.apply_object(widget_crd()).unwrap();
    s.apply_object(json!({"apiVersion": "demo.example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "default"}, "spec": {"a": 1}})).unwrap();
    let snap = s.snapshot();
    let restored = Store::restore(StoreConfig::default(), &snap).unwrap();
    let r = restored
        .resource_for_plural("demo.example.com", "v1", "widgets")
        .expect("kind restored");
    assert_eq!(
        restored.get(&r, Some("default"), "w").unwrap()["spec"]["a"],
        1
    );
    assert_eq!(restored.resource_version(), s.resource_version());
    let c = cm_res(&restored);
    let o = restored
        .create(&c, Some("default"), cm("after"), &opts("t"))
        .unwrap();
    let rv: u64 = o["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(rv > s.resource_version().parse::<u64>().unwrap());
}

#[test]
fn binary_data_with_line_breaks_is_served_canonical() {
    let s = store();
    let res = cm_res(&s);
    let mut object = cm("bin");
    object["binaryData"] = json!({ "blob": "aGVs\nbG8g\r\nd29y\nbGQ=" });
    s.create(&res, Some("default"), object, &opts("kustomize"))
        .unwrap();
    let stored = s.get(&res, Some("default"), "bin").unwrap();
    assert_eq!(stored["binaryData"]["blob"], "aGVsbG8gd29ybGQ=");
}

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
    s.patch(
        &events,
        Some("default"),
        "demo.2",
        &PatchType::Merge,
        br#"{"note":"updated twice","deprecatedCount":2}"#,
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
fn emptied_metadata_lists_are_omitted_as_the_real_server_encodes_them() {
    let s = store();
    let r = cm_res(&s);
    let mut o = cm("e");
    o["metadata"]["finalizers"] = json!(["x/y"]);
    o["metadata"]["labels"] = json!({"a": "b"});
    s.create(&r, Some("default"), o, &opts("t")).unwrap();
    let out = s
        .patch(
            &r,
            Some("default"),
            "e",
            &PatchType::Json,
            br#"[{"op":"remove","path":"/metadata/finalizers/0"},{"op":"remove","path":"/metadata/labels/a"}]"#,
            &opts("t"),
        )
        .unwrap();
    assert!(out["metadata"].get("finalizers").is_none(), "{out}");
    assert!(out["metadata"].get("labels").is_none(), "{out}");
    let stored = s.get(&r, Some("default"), "e").unwrap();
    assert!(stored["metadata"].get("finalizers").is_none(), "{stored}");
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

/// A converter of Widgets: `v1` has `spec.size`, `v2` has `spec.dimensions.size`.
struct Widgets;

impl crate::Converter for Widgets {
    fn converts(&self, group: &str, kind: &str) -> bool {
        group == "demo.example.com" && kind == "Widget"
    }

    fn convert(&self, object: &Value, api_version: &str) -> Result<Value, String> {
        let mut out = object.clone();
        let spec = out["spec"].as_object_mut().ok_or("no spec")?;
        match api_version {
            "demo.example.com/v2" => {
                let size = spec.remove("size").unwrap_or(Value::Null);
                spec.insert("dimensions".into(), json!({"size": size}));
            }
            "demo.example.com/v1" => {
                let size = spec
                    .remove("dimensions")
                    .and_then(|d| d.get("size").cloned())
                    .unwrap_or(Value::Null);
                spec.insert("size".into(), size);
            }
            other => return Err(format!("no version {other}")),
        }
        out["apiVersion"] = json!(api_version);
        Ok(out)
    }
}

#[test]
fn a_converter_serves_every_version_from_the_storage_version() {
    let s = store();
    let mut crd = widget_crd();
    let mut v2 = crd["spec"]["versions"][0].clone();
    v2["name"] = json!("v2");
    v2["storage"] = json!(false);
    crd["spec"]["versions"].as_array_mut().unwrap().push(v2);
    s.apply_object(crd).unwrap();
    s.set_converter(Some(std::sync::Arc::new(Widgets)));
    let r1 = s
        .resource_for_plural("demo.example.com", "v1", "widgets")
        .unwrap();
    let r2 = s
        .resource_for_plural("demo.example.com", "v2", "widgets")
        .unwrap();
    let w = json!({"apiVersion": "demo.example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 3}});
    s.create(&r1, Some("default"), w, &opts("t")).unwrap();
    let (_, events) = s.watch_channel(&r2, &ListOptions::default(), None).unwrap();

    // Read in v2: converted.
    let as_v2 = s.get(&r2, Some("default"), "w").unwrap();
    assert_eq!(as_v2["apiVersion"], "demo.example.com/v2");
    assert_eq!(as_v2["spec"], json!({"dimensions": {"size": 3}}));
    let listed = s.list(&r2, &ListOptions::default()).unwrap();
    assert_eq!(listed.items[0]["spec"], json!({"dimensions": {"size": 3}}));

    // Written in v2 (a merge patch in v2's shape): stored in v1.
    let patched = s
        .patch(
            &r2,
            Some("default"),
            "w",
            &PatchType::Merge,
            br#"{"spec":{"dimensions":{"size":5}}}"#,
            &opts("t"),
        )
        .unwrap();
    assert_eq!(patched["spec"], json!({"dimensions": {"size": 5}}));
    assert_eq!(
        s.get(&r1, Some("default"), "w").unwrap()["spec"],
        json!({"size": 5})
    );
    let created = json!({"apiVersion": "demo.example.com/v2", "kind": "Widget", "metadata": {"name": "x"}, "spec": {"dimensions": {"size": 7}}});
    s.create(&r2, Some("default"), created, &opts("t")).unwrap();
    assert_eq!(
        s.get(&r1, Some("default"), "x").unwrap()["spec"],
        json!({"size": 7})
    );

    // A v2 watch sees v2 objects: the one there, then its change.
    let next = || {
        events
            .recv_timeout(std::time::Duration::from_secs(1))
            .unwrap()
    };
    let (added, modified) = (next(), next());
    assert_eq!(added.object["apiVersion"], "demo.example.com/v2");
    assert_eq!(added.object["spec"], json!({"dimensions": {"size": 3}}));
    assert_eq!(modified.object["spec"], json!({"dimensions": {"size": 5}}));

    // Without the converter, versions differ only by apiVersion again.
    s.set_converter(None);
    let r2 = s
        .resource_for_plural("demo.example.com", "v2", "widgets")
        .unwrap();
    assert_eq!(
        s.get(&r2, Some("default"), "w").unwrap()["spec"],
        json!({"size": 5})
    );
}

/// A converter that cannot convert a Widget whose size is "odd".
struct Picky;

impl crate::Converter for Picky {
    fn converts(&self, group: &str, kind: &str) -> bool {
        Widgets.converts(group, kind)
    }

    fn convert(&self, object: &Value, api_version: &str) -> Result<Value, String> {
        let size = object
            .pointer("/spec/size")
            .or(object.pointer("/spec/dimensions/size"));
        if size == Some(&json!("odd")) {
            return Err("odd sizes do not convert".into());
        }
        Widgets.convert(object, api_version)
    }
}

#[test]
fn a_failed_conversion_refuses_the_write_and_fails_the_read() {
    let s = store();
    let mut crd = widget_crd();
    let mut v2 = crd["spec"]["versions"][0].clone();
    v2["name"] = json!("v2");
    v2["storage"] = json!(false);
    crd["spec"]["versions"].as_array_mut().unwrap().push(v2);
    s.apply_object(crd).unwrap();
    s.set_converter(Some(std::sync::Arc::new(Picky)));
    let r1 = s
        .resource_for_plural("demo.example.com", "v1", "widgets")
        .unwrap();
    let r2 = s
        .resource_for_plural("demo.example.com", "v2", "widgets")
        .unwrap();

    // Written in v2, it cannot be stored in v1: refused, nothing stored.
    let odd = json!({"apiVersion": "demo.example.com/v2", "kind": "Widget", "metadata": {"name": "o"}, "spec": {"dimensions": {"size": "odd"}}});
    let refused = s.create(&r2, Some("default"), odd, &opts("t")).unwrap_err();
    assert_eq!(refused.code, 500);
    assert_eq!(
        refused.message,
        "conversion webhook for demo.example.com/v2, Kind=Widget failed: odd sizes do not convert"
    );
    assert!(s.get(&r1, Some("default"), "o").is_err(), "nothing stored");

    // Stored in v1, it cannot be read in v2: the read fails, and so does a
    // list in v2 as a whole, never an object under the wrong version.
    let w = json!({"apiVersion": "demo.example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": "odd"}});
    s.create(&r1, Some("default"), w, &opts("t")).unwrap();
    let read = s.get(&r2, Some("default"), "w").unwrap_err();
    assert_eq!(read.code, 500);
    assert!(
        read.message
            .contains("conversion webhook for demo.example.com/v1, Kind=Widget failed"),
        "{}",
        read.message
    );
    let listed = s.list(&r2, &ListOptions::default()).unwrap_err();
    assert_eq!(listed.code, 500, "{}", listed.message);
    // In its own version it reads as stored.
    assert_eq!(
        s.get(&r1, Some("default"), "w").unwrap()["spec"]["size"],
        "odd"
    );
}
