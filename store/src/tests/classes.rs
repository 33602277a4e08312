//! The cluster-scoped classes and volumes as the real server keeps them:
//! their defaults, the system priority classes, the PV protection
//! finalizer, and the fields an update may not change.

use serde_json::json;

use super::{opts, store};

#[test]
fn the_system_priority_classes_are_there_and_cannot_be_deleted() {
    let s = store();
    let r = s
        .resource_for_kind("scheduling.k8s.io", "v1", "PriorityClass")
        .expect("priorityclasses");
    let class = s.get(&r, None, "system-node-critical").unwrap();
    assert_eq!(class["value"], 2_000_001_000);
    assert_eq!(class["preemptionPolicy"], "PreemptLowerPriority");
    let refused = s
        .delete(&r, None, "system-cluster-critical", None)
        .unwrap_err();
    assert_eq!(refused.code, 403);
    assert_eq!(
        refused.message,
        "priorityclasses.scheduling.k8s.io \"system-cluster-critical\" is forbidden: this is a system priority class and cannot be deleted"
    );
    let made = json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
        "metadata": {"name": "batch"}, "value": 5});
    let mut made = s.create(&r, None, made, &opts("t")).unwrap();
    made["value"] = json!(6);
    let refused = s.replace(&r, None, "batch", made, &opts("t")).unwrap_err();
    assert!(
        refused
            .message
            .contains("value: Forbidden: may not be changed in an update."),
        "{}",
        refused.message
    );
}

#[test]
fn a_volume_is_defaulted_pending_and_protected() {
    let s = store();
    let r = s
        .resource_for_kind("", "v1", "PersistentVolume")
        .expect("persistentvolumes");
    let volume = json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "v"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
            "hostPath": {"path": "/data"}}});
    let made = s.create(&r, None, volume, &opts("t")).unwrap();
    assert_eq!(made["spec"]["persistentVolumeReclaimPolicy"], "Retain");
    assert_eq!(made["spec"]["volumeMode"], "Filesystem");
    assert_eq!(made["spec"]["hostPath"]["type"], "");
    assert_eq!(made["status"]["phase"], "Pending");
    assert_eq!(
        made["metadata"]["finalizers"],
        json!(["kubernetes.io/pv-protection"])
    );
}

#[test]
fn a_storage_class_is_defaulted_and_its_parameters_cannot_change() {
    let s = store();
    let r = s
        .resource_for_kind("storage.k8s.io", "v1", "StorageClass")
        .expect("storageclasses");
    let class = json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": "fast"}, "provisioner": "example.com/fast",
        "parameters": {"type": "ssd"}});
    let mut made = s.create(&r, None, class, &opts("t")).unwrap();
    assert_eq!(made["reclaimPolicy"], "Delete");
    assert_eq!(made["volumeBindingMode"], "Immediate");
    made["parameters"] = json!({"type": "hdd"});
    let refused = s.replace(&r, None, "fast", made, &opts("t")).unwrap_err();
    assert_eq!(refused.code, 422);
    assert!(
        refused
            .message
            .contains("parameters: Invalid value: {\"type\":\"hdd\"}: field is immutable"),
        "{}",
        refused.message
    );
}

#[test]
fn an_unbound_volume_goes_when_deleted_and_a_bound_one_is_held() {
    let s = store();
    let r = s
        .resource_for_kind("", "v1", "PersistentVolume")
        .expect("persistentvolumes");
    let volume = |name: &str| {
        json!({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                "hostPath": {"path": "/data"}}})
    };
    s.create(&r, None, volume("free"), &opts("t")).unwrap();
    s.delete(&r, None, "free", None).unwrap();
    assert!(
        s.get(&r, None, "free").is_err(),
        "an unbound volume is released at once"
    );
    let mut bound = s.create(&r, None, volume("bound"), &opts("t")).unwrap();
    bound["status"]["phase"] = json!("Bound");
    let mut status = opts("binder");
    status.subresource = Some("status".into());
    s.replace(&r, None, "bound", bound, &status).unwrap();
    s.delete(&r, None, "bound", None).unwrap();
    let held = s.get(&r, None, "bound").expect("a bound volume is held");
    assert!(held["metadata"]["deletionTimestamp"].is_string());
}
