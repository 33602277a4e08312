//! The `configmap-sync` reconciler run natively against the in-memory cluster.

use configmap_sync::{ConfigMapSync, FINALIZER, FROM_NAME_LABEL, FROM_NAMESPACE_LABEL};
use rekon_sdk::k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use rekon_sdk::prelude::*;
use rekon_sdk::testing::FakeCluster;

const FIXTURES: &str = r#"
apiVersion: v1
kind: Namespace
metadata: {name: team-a}
---
apiVersion: v1
kind: Namespace
metadata: {name: team-b}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: shared
  namespace: default
  labels: {rekon.dev/sync: "true"}
  annotations: {rekon.dev/sync-to: "team-a, team-b, missing, default"}
data: {region: eu-west-1, tier: gold}
"#;

fn cm(cluster: &FakeCluster, ns: &str) -> Option<ConfigMap> {
    cluster.get::<ConfigMap>(Some(ns), "shared")
}

fn sync(cluster: &FakeCluster) {
    let action = cluster
        .reconcile::<ConfigMapSync>(Some("default"), "shared")
        .expect("reconciles");
    assert_eq!(action, Action::Done);
}

fn source(cluster: &FakeCluster) -> Value {
    cluster
        .object(&Gvk::of::<ConfigMap>(), Some("default"), "shared")
        .expect("source exists")
}

#[test]
fn copies_into_existing_target_namespaces() {
    let cluster = FakeCluster::from_yaml(FIXTURES).expect("fixtures");
    sync(&cluster);
    for ns in ["team-a", "team-b"] {
        let copy = cm(&cluster, ns).expect("copied");
        let data = copy.data.expect("data");
        assert_eq!(data["region"], "eu-west-1");
        assert_eq!(data["tier"], "gold");
        let labels = copy.metadata.labels.expect("labels");
        assert_eq!(labels[FROM_NAMESPACE_LABEL], "default");
        assert_eq!(labels[FROM_NAME_LABEL], "shared");
    }
    assert!(cm(&cluster, "missing").is_none(), "no such namespace");
    assert!(api::has_finalizer(&source(&cluster), FINALIZER));
    let applies = cluster.writes().iter().filter(|w| w.is_apply()).count();
    assert_eq!(applies, 2);
}

#[test]
fn a_namespace_created_later_gets_its_copy() {
    let cluster = FakeCluster::from_yaml(FIXTURES).expect("fixtures");
    sync(&cluster);
    cluster
        .seed_yaml("apiVersion: v1\nkind: Namespace\nmetadata: {name: missing}\n")
        .expect("namespace");
    // The Namespace watch (AllPrimaries) requeues the source.
    let m = ConfigMapSync::manifest();
    assert_eq!(m.watches[0].kind, Gvk::of::<Namespace>());
    assert_eq!(m.watches[0].mapping, Mapping::AllPrimaries);
    sync(&cluster);
    assert!(cm(&cluster, "missing").is_some());
}

#[test]
fn source_changes_propagate_and_unlisted_namespaces_lose_their_copy() {
    let cluster = FakeCluster::from_yaml(FIXTURES).expect("fixtures");
    sync(&cluster);
    let mut changed = source(&cluster);
    changed["data"] = json!({"region": "us-east-1"});
    changed["metadata"]["annotations"]["rekon.dev/sync-to"] = json!("team-a");
    cluster.seed(changed).expect("source updated");
    sync(&cluster);

    let copy = cm(&cluster, "team-a").expect("kept");
    let data = copy.data.expect("data");
    assert_eq!(data["region"], "us-east-1");
    assert!(
        !data.contains_key("tier"),
        "a key removed from the source goes"
    );
    assert!(
        cm(&cluster, "team-b").is_none(),
        "team-b is no longer listed"
    );
}

#[test]
fn deleting_the_source_removes_every_copy_then_the_finalizer() {
    let cluster = FakeCluster::from_yaml(FIXTURES).expect("fixtures");
    sync(&cluster);
    cluster
        .delete(&Gvk::of::<ConfigMap>(), Some("default"), "shared")
        .expect("delete requested");
    assert!(cm(&cluster, "default").is_some(), "held by the finalizer");
    sync(&cluster);
    assert!(cm(&cluster, "team-a").is_none());
    assert!(cm(&cluster, "team-b").is_none());
    assert!(cm(&cluster, "default").is_none(), "finalizer released");
}

#[test]
fn unlabelling_the_source_removes_copies_and_finalizer() {
    let cluster = FakeCluster::from_yaml(FIXTURES).expect("fixtures");
    sync(&cluster);
    let mut unlabelled = source(&cluster);
    unlabelled["metadata"]["labels"] = json!({});
    cluster.seed(unlabelled).expect("updated");
    sync(&cluster);
    assert!(cm(&cluster, "team-a").is_none());
    assert!(!api::has_finalizer(&source(&cluster), FINALIZER));
}

#[test]
fn a_foreign_configmap_is_left_alone_with_a_warning() {
    let cluster = FakeCluster::from_yaml(FIXTURES).expect("fixtures");
    cluster
        .seed_yaml("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: shared, namespace: team-b}\ndata: {mine: 'yes'}\n")
        .expect("foreign");
    sync(&cluster);
    let foreign = cm(&cluster, "team-b").expect("still there");
    assert_eq!(foreign.data.expect("data")["mine"], "yes");
    let events = cluster.events();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].event_type, EventType::Warning);
    assert_eq!(events[0].reason, "CopyConflict");
    assert!(
        cm(&cluster, "team-a").is_some(),
        "other targets still synced"
    );
}

#[test]
fn other_configmaps_are_ignored_without_any_call() {
    let cluster = FakeCluster::from_yaml(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain, namespace: default}\n",
    )
    .expect("fixtures");
    cluster
        .reconcile::<ConfigMapSync>(Some("default"), "plain")
        .expect("reconciles");
    assert!(cluster.writes().is_empty());
}
