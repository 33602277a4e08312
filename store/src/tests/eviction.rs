//! Evictions the differential corpus does not show: a Pod two budgets
//! select, a budget its controller has not observed, an unready Pod an
//! `AlwaysAllow` budget lets go without spending a disruption.

use serde_json::{Value, json};

use super::{opts, store};
use crate::meta::types::{Deletion, PatchType};
use crate::store::handle::Store;

/// A ready Pod `p` labelled `app: api`, and budgets named `names`
/// selecting it, each with `status` written.
fn ready_pod_with_budgets(s: &Store, names: &[&str], spec: Value, status: Value) {
    let pods = s.resource_for_kind("", "v1", "Pod").unwrap();
    let budgets = s
        .resource_for_kind("policy", "v1", "PodDisruptionBudget")
        .unwrap();
    let pod = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "labels": {"app": "api"}},
        "spec": {"nodeName": "n", "containers": [{"name": "c", "image": "nginx"}]}});
    s.create(&pods, Some("default"), pod, &opts("t")).unwrap();
    let ready = json!({"status": {"phase": "Running",
        "conditions": [{"type": "Ready", "status": "True"}]}});
    let status_write = crate::meta::types::WriteOptions {
        subresource: Some("status".into()),
        ..opts("t")
    };
    s.patch(
        &pods,
        Some("default"),
        "p",
        &PatchType::Merge,
        ready.to_string().as_bytes(),
        &status_write,
    )
    .unwrap();
    for name in names {
        let mut budget = json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": name}, "spec": {"selector": {"matchLabels": {"app": "api"}}}});
        if let (Some(b), Some(extra)) = (budget["spec"].as_object_mut(), spec.as_object()) {
            b.extend(extra.clone());
        }
        s.create(&budgets, Some("default"), budget, &opts("t"))
            .unwrap();
        let body = json!({ "status": status }).to_string();
        s.patch(
            &budgets,
            Some("default"),
            name,
            &PatchType::Merge,
            body.as_bytes(),
            &status_write,
        )
        .unwrap();
    }
}

fn evict(s: &Store) -> Result<Value, crate::meta::status::Status> {
    let pods = s.resource_for_kind("", "v1", "Pod").unwrap();
    s.evict(&pods, Some("default"), "p", Deletion::default())
}

#[test]
fn a_pod_two_budgets_select_is_not_evicted() {
    let s = store();
    let status = json!({"observedGeneration": 1, "disruptionsAllowed": 1});
    ready_pod_with_budgets(&s, &["a", "b"], json!({"minAvailable": 0}), status);
    let answer = evict(&s).unwrap();
    assert_eq!(answer["status"], "Failure");
    assert_eq!(answer["code"], 500);
    let pods = s.resource_for_kind("", "v1", "Pod").unwrap();
    assert!(s.get(&pods, Some("default"), "p").is_ok());
}

#[test]
fn a_budget_not_yet_observed_refuses_with_a_retry() {
    let s = store();
    let status = json!({"disruptionsAllowed": 1});
    ready_pod_with_budgets(&s, &["api"], json!({"minAvailable": 0}), status);
    let refused = evict(&s).unwrap_err();
    assert_eq!(refused.code, 429);
    let details = refused.details.unwrap();
    assert_eq!(details["retryAfterSeconds"], 10);
    assert_eq!(
        details["causes"][0]["message"],
        "The disruption budget api is still being processed by the server."
    );
}

#[test]
fn an_unready_pod_an_always_allow_budget_covers_goes_without_spending() {
    let s = store();
    let pods = s.resource_for_kind("", "v1", "Pod").unwrap();
    let status = json!({"observedGeneration": 1, "disruptionsAllowed": 0});
    let spec = json!({"minAvailable": 1, "unhealthyPodEvictionPolicy": "AlwaysAllow"});
    ready_pod_with_budgets(&s, &["api"], spec, status);
    let unready = json!({"status": {"conditions": [{"type": "Ready", "status": "False"}]}});
    let status_write = crate::meta::types::WriteOptions {
        subresource: Some("status".into()),
        ..opts("t")
    };
    s.patch(
        &pods,
        Some("default"),
        "p",
        &PatchType::Merge,
        unready.to_string().as_bytes(),
        &status_write,
    )
    .unwrap();
    assert_eq!(evict(&s).unwrap()["status"], "Success");
    let pod = s.get(&pods, Some("default"), "p").unwrap();
    assert!(pod["metadata"]["deletionTimestamp"].is_string());
    let budgets = s
        .resource_for_kind("policy", "v1", "PodDisruptionBudget")
        .unwrap();
    let budget = s.get(&budgets, Some("default"), "api").unwrap();
    assert_eq!(budget["status"]["disruptionsAllowed"], 0);
    assert!(budget["status"].get("disruptedPods").is_none());
}
