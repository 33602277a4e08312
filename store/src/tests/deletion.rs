//! Deletion: finalizers, claims in use, owner references, namespaces.

use serde_json::json;

use super::{cm, cm_res, opts, store};
use crate::meta::types::{DeleteOutcome, PatchType, Propagation};

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
    // Answered as the API server marks it (the finalizer still there);
    // the protection controller's part lets it go right after.
    let DeleteOutcome::Pending(free) = s.delete(&pvc, Some("default"), "free", None).unwrap()
    else {
        panic!("the API server answers the claim it marked")
    };
    assert_eq!(
        free["metadata"]["finalizers"],
        json!(["kubernetes.io/pvc-protection"])
    );
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
fn a_namespace_held_by_its_own_finalizer_loses_kubernetes_and_goes_once_finalized() {
    let s = store();
    let ns = s.resource_for_plural("", "v1", "namespaces").unwrap();
    let held = json!({"metadata": {"name": "held"}, "spec": {"finalizers": ["example.com/hold"]}});
    s.create(&ns, None, held, &opts("t")).unwrap();
    s.delete(&ns, None, "held", None).unwrap();
    // Emptied, the namespace controller's finalize write takes
    // `kubernetes` out; its own finalizer keeps it.
    let terminating = s.get(&ns, None, "held").unwrap();
    assert_eq!(
        terminating["spec"]["finalizers"],
        json!(["example.com/hold"])
    );
    let managers: Vec<&str> = terminating["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["subresource"].as_str())
        .collect();
    assert_eq!(managers, ["finalize"]);
    let DeleteOutcome::Pending(again) = s.delete(&ns, None, "held", None).unwrap() else {
        panic!("still held")
    };
    assert_eq!(again["status"]["phase"], "Terminating");
    let finalize = crate::meta::types::WriteOptions {
        subresource: Some("finalize".into()),
        ..opts("t")
    };
    let mut released = terminating.clone();
    released["spec"]["finalizers"] = json!([]);
    s.replace(&ns, None, "held", released, &finalize).unwrap();
    assert_eq!(s.get(&ns, None, "held").unwrap_err().code, 404);
}
