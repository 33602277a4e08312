//! Objects: create, get, replace, the built-in namespaces, what is
//! stored and served (canonical bytes, omitted metadata), snapshots.

use serde_json::json;

use super::{cm, cm_res, opts, store, widget_crd};
use crate::meta::types::{PatchType, StoreConfig};
use crate::store::handle::Store;

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
