//! The example App module reconciled offline: `rekon reconcile` prints
//! every call and the result (conversion and finalizing included), and a
//! reconcile in process writes the owned objects.

use std::sync::Arc;

use rekon_host::runtime::DispatchOptions;
use rekon_host::{Engine, EngineConfig, Module};
use serde_json::{Value, json};

use crate::support::{cluster_with, rekon, stderr, stdout, write};

fn app_object() -> Value {
    json!({
        "apiVersion": "demo.rekon.dev/v1",
        "kind": "App",
        "metadata": { "name": "web", "namespace": "default", "generation": 1 },
        "spec": { "image": "nginx:1.27", "replicas": 3, "port": 8080 },
    })
}

#[test]
fn rekon_reconcile_prints_every_call_and_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let object = write(
        dir.path(),
        "app.yaml",
        serde_yaml_ng::to_string(&app_object()).unwrap(),
    );
    let output = rekon(
        &["reconcile", rekon_test_artifacts::APP, "--object", &object],
        dir.path(),
    );
    assert!(
        output.status.success(),
        "{}\n{}",
        stdout(&output),
        stderr(&output)
    );
    let lines: Vec<Value> = stdout(&output)
        .lines()
        .map(|l| serde_json::from_str(l).expect("every line is JSON"))
        .collect();
    let last = lines.last().unwrap();
    assert!(
        last["result"]["ok"].is_string() || last["result"]["ok"].is_object(),
        "{last}"
    );

    let applied = |kind: &str| {
        lines
            .iter()
            .find(|l| {
                l["call"] == "patch"
                    && l["args"]["kind"] == kind
                    && l["args"]["patchType"]["apply"].is_object()
            })
            .unwrap_or_else(|| panic!("no server-side apply of a {kind}: {lines:#?}"))
    };
    let deployment = &applied("Deployment")["result"]["ok"];
    assert_eq!(deployment["spec"]["replicas"], 3);
    assert_eq!(
        deployment["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.27"
    );
    let owner = &deployment["metadata"]["ownerReferences"][0];
    assert_eq!(owner["kind"], "App");
    assert_eq!(owner["name"], "web");
    assert_eq!(owner["controller"], true);
    let service = &applied("Service")["result"]["ok"];
    assert_eq!(service["spec"]["ports"][0]["port"], 8080);

    let status = lines
        .iter()
        .find(|l| l["call"] == "patch-status" || l["call"] == "replace-status")
        .expect("a status write");
    let status = &status["result"]["ok"]["status"];
    assert_eq!(status["observedGeneration"], 1);
    let ready = status["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Ready")
        .expect("a Ready condition");
    assert!(ready["status"].is_string());
}

/// An App given in v2 reaches the module in v1, the version its
/// manifest reconciles, converted by the module's conversion webhook as
/// `rekon dev` and a cluster convert it.
#[test]
fn rekon_reconcile_converts_an_object_of_another_version() {
    let dir = tempfile::tempdir().unwrap();
    let v2 = json!({
        "apiVersion": "demo.rekon.dev/v2",
        "kind": "App",
        "metadata": { "name": "web", "namespace": "default" },
        "spec": { "replicas": 3, "container": { "image": "nginx:1.28", "port": 8080 } },
    });
    let object = write(
        dir.path(),
        "app.yaml",
        serde_yaml_ng::to_string(&v2).unwrap(),
    );
    let output = rekon(
        &["reconcile", rekon_test_artifacts::APP, "--object", &object],
        dir.path(),
    );
    assert!(
        output.status.success(),
        "{}\n{}",
        stdout(&output),
        stderr(&output)
    );
    let lines: Vec<Value> = stdout(&output)
        .lines()
        .map(|l| serde_json::from_str(l).expect("every line is JSON"))
        .collect();
    let deployment = lines
        .iter()
        .find(|l| l["call"] == "patch" && l["args"]["kind"] == "Deployment")
        .unwrap_or_else(|| panic!("no Deployment applied: {lines:#?}"));
    let deployment = &deployment["result"]["ok"];
    assert_eq!(deployment["spec"]["replicas"], 3);
    assert_eq!(
        deployment["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.28"
    );
    assert!(
        lines.last().unwrap()["result"]["ok"].is_string()
            || lines.last().unwrap()["result"]["ok"].is_object()
    );
}

/// `rekon reconcile` runs the paths a live reconcile can: an object
/// being deleted, with the module's finalizer, is reconciled as
/// `finalizing`; timestamps given in the object are kept.
#[test]
fn rekon_reconcile_runs_a_finalizing_reconcile_and_keeps_given_timestamps() {
    let dir = tempfile::tempdir().unwrap();
    let mut app = app_object();
    app["metadata"]["creationTimestamp"] = json!("2020-01-01T00:00:00Z");
    app["metadata"]["deletionTimestamp"] = json!("2026-11-23T00:00:00Z");
    app["metadata"]["finalizers"] = json!([::app::FINALIZER]);
    let object = write(
        dir.path(),
        "app.yaml",
        serde_yaml_ng::to_string(&app).unwrap(),
    );
    let output = rekon(
        &["reconcile", rekon_test_artifacts::APP, "--object", &object],
        dir.path(),
    );
    assert!(
        output.status.success(),
        "{}\n{}",
        stdout(&output),
        stderr(&output)
    );
    let lines: Vec<Value> = stdout(&output)
        .lines()
        .map(|l| serde_json::from_str(l).expect("every line is JSON"))
        .collect();
    // The cleanup ran: owned objects deleted, no apply of them.
    let deleted: Vec<&str> = lines
        .iter()
        .filter(|l| l["call"] == "delete")
        .filter_map(|l| l["args"]["kind"].as_str())
        .collect();
    assert_eq!(deleted, ["Deployment", "Service"], "{lines:#?}");
    assert!(
        !lines
            .iter()
            .any(|l| l["args"]["patchType"]["apply"].is_object())
    );
    // Then the finalizer went, from the object as given.
    let removal = lines
        .iter()
        .find(|l| l["call"] == "patch" && l["args"]["patchType"] == "json")
        .expect("the finalizer's removal");
    let removed = &removal["result"]["ok"];
    assert_eq!(
        removed["metadata"]["creationTimestamp"],
        "2020-01-01T00:00:00Z"
    );
    assert!(removed["metadata"]["finalizers"].is_null(), "{removed}");
}

#[tokio::test]
async fn reconcile_in_process_writes_owned_objects_to_the_store() {
    let engine = Engine::new(EngineConfig::default()).unwrap();
    let module = Module::load(&engine, &std::fs::read(rekon_test_artifacts::APP).unwrap())
        .await
        .unwrap();
    let (cluster, request) = cluster_with(&[app_object()]);
    let outcome = module
        .reconcile(
            Arc::new(cluster.clone()),
            &request,
            DispatchOptions::default(),
        )
        .await;
    outcome.result.expect("reconcile succeeds");
    let store = cluster.store();
    let deployments = store.resource_for_kind("apps", "v1", "Deployment").unwrap();
    let deployment = store.get(&deployments, Some("default"), "web").unwrap();
    assert_eq!(deployment["spec"]["replicas"], 3);
    let services = store.resource_for_kind("", "v1", "Service").unwrap();
    store.get(&services, Some("default"), "web").unwrap();
}
