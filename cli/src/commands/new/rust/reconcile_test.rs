//! `{{name}}` run natively against the SDK's in-memory cluster (`cargo test`):
//! the same reconcile as in the component, with every host call answered
//! by a real API server's rules.

use rekon_sdk::crd::CustomResource;
use rekon_sdk::prelude::*;
use rekon_sdk::testing::FakeCluster;
use {{crate}}::{ {{kind}}Reconciler, {{kind}}Spec };

const EXAMPLE: &str = include_str!("../manifests/example.yaml");

fn cluster() -> FakeCluster {
    let cluster = FakeCluster::new();
    cluster.seed({{kind}}Spec::crd()).expect("the CRD is valid");
    cluster.seed_yaml(EXAMPLE).expect("the example is valid");
    cluster
}

#[test]
fn the_example_is_reconciled_and_ready() {
    let cluster = cluster();
    let action = cluster
        .reconcile::<{{kind}}Reconciler>({{ns}}, "example")
        .expect("reconciles");
    assert_eq!(action, Action::Done);
    let object = cluster
        .object(&{{kind}}Spec::gvk(), {{ns}}, "example")
        .expect("the example exists");
    let ready = &object["status"]["conditions"][0];
    assert_eq!(ready["type"], "Ready");
    assert_eq!(ready["status"], "True");
    assert_eq!(object["status"]["observedGeneration"], object["metadata"]["generation"]);
{{#configmap}}
    let child = cluster
        .object(&Gvk::new("", "v1", "ConfigMap"), Some("default"), "example")
        .expect("the owned ConfigMap exists");
    assert_eq!(child["data"]["message"], object["spec"]["message"]);
    assert_eq!(child["metadata"]["ownerReferences"][0]["controller"], true);
{{/configmap}}
}

#[test]
fn a_second_reconcile_changes_nothing() {
    let cluster = cluster();
    cluster
        .reconcile::<{{kind}}Reconciler>({{ns}}, "example")
        .expect("reconciles");
    let events = cluster.events().len();
    cluster
        .reconcile::<{{kind}}Reconciler>({{ns}}, "example")
        .expect("reconciles again");
    assert_eq!(cluster.events().len(), events, "no second Reconciled Event");
}
