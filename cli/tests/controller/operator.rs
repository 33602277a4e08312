//! The operator's configuration and the cluster as it changes: permissions
//! narrowed per module, kinds served after the start picked up, a requeue
//! honoured.

use serde_json::json;

use crate::support::{Env, app, configmap, namespace, path};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configuration_narrows_a_modules_permissions() {
    let mut env = Env::new().await;
    env.apply(namespace("allowed"));
    let config = env.dir.path().join("rekon.yaml");
    std::fs::write(
        &config,
        "modules:\n  misbehave:\n    permissions:\n    - apiVersion: v1\n      kind: ConfigMap\n      verbs: [get, list, watch, patch]\n      namespaces: [allowed]\n",
    )
    .unwrap();
    env.run(
        &[rekon_test_artifacts::MISBEHAVE],
        &["--config", config.to_str().unwrap()],
    );
    env.apply(configmap("allowed", "yes", json!({}), json!({})));
    env.apply(configmap("default", "no", json!({}), json!({})));
    env.wait("the allowed namespace reconciled", || {
        env.get("", "v1", "ConfigMap", Some("allowed"), "yes")
            .filter(|c| c["data"]["reconciled"] == "true")
    })
    .await;
    let event = env
        .event("the Warning event for the narrowed call", |e| {
            e["reason"] == "PermissionDenied" && e["regarding"]["name"] == "no"
        })
        .await;
    assert!(
        event["note"]
            .as_str()
            .unwrap()
            .contains("operator's configuration"),
        "{event}"
    );
    let untouched = env
        .get("", "v1", "ConfigMap", Some("default"), "no")
        .unwrap();
    assert!(untouched["data"]["reconciled"].is_null(), "{untouched}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kinds_served_after_start_are_picked_up_without_a_restart() {
    let mut env = Env::new().await;
    env.run(&[rekon_test_artifacts::APP], &[]);
    env.wait("the module to report the missing kind", || {
        env.log()
            .contains("cannot watch the module's kinds")
            .then_some(())
    })
    .await;
    env.apply_file(&path("guests/app/manifests/crd.yaml"));
    env.apply(app("late", 1));
    env.wait("the App reconciled", || {
        env.get("demo.rekon.dev", "v1", "App", Some("default"), "late")
            .filter(|a| a["status"]["observedGeneration"] == 1)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requeue_after_is_honoured() {
    let mut env = Env::new().await;
    env.run(&[rekon_test_artifacts::MISBEHAVE], &[]);
    env.apply(configmap(
        "default",
        "again",
        json!({ "misbehave.rekon.dev/mode": "requeue", "misbehave.rekon.dev/size": "100" }),
        json!({}),
    ));
    // Nothing changes the ConfigMap: every run after the first is one
    // the module asked for.
    let runs = |log: &str| {
        log.lines()
            .filter(|l| l.contains("object=again") && l.contains("requeue_after_ms=100"))
            .map(|l| l.contains("reason=\"requeued\""))
            .collect::<Vec<bool>>()
    };
    let seen = env
        .wait("three runs", || {
            Some(runs(&env.log())).filter(|r| r.len() >= 3)
        })
        .await;
    assert_eq!(
        seen[..3],
        [false, true, true],
        "one run for the new object, then requeued runs"
    );
}
