//! Patches and server-side apply.

use serde_json::json;

use super::{cm, cm_res, opts, store};
use crate::meta::types::{PatchType, WriteOptions};

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
