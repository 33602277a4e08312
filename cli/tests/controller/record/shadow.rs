//! Shadows: a version that reconciles beside the serving one, its writes
//! dry runs, its differences shown, counted and announced; its errors its
//! own.

use serde_json::{Value, json};

use super::{assert_counted, rollout_status, run_with_shadow};
use crate::support::{self, Env, configmap, namespace};

/// A shadow that writes something else: every request the serving version
/// reconciles is reconciled by the shadow too; its writes are dry runs
/// (nothing it wrote is stored), the difference is shown per object as a
/// unified diff, counted, and announced by one Event per object.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shadow_that_differs_is_shown_and_writes_nothing() {
    let mut env = Env::new().await;
    env.apply(namespace("shop"));
    env.apply(configmap("shop", "one", json!({}), json!({})));
    let shadow = support::misbehave_with(misbehave::BUILD_MARK, "misbehave-build-B");
    let port = run_with_shadow(&mut env, shadow);
    env.wait("the ConfigMap reconciled", || {
        env.get("", "v1", "ConfigMap", Some("shop"), "one")
            .filter(|c| c["data"]["reconciled"] == "true")
    })
    .await;
    let status = env
        .wait("the shadow's difference", || {
            let (out, code) = rollout_status(port, "misbehave");
            (code == Some(1) && out.contains("differ  shop/one")).then_some(out)
        })
        .await;
    assert!(
        status.contains("shadow 0.1.0") && status.contains("misbehave-shadow.wasm"),
        "{status}"
    );
    assert!(
        status.contains("--- serving 0.1.0") && status.contains("+++ shadow 0.1.0"),
        "{status}"
    );
    assert!(
        status
            .lines()
            .any(|l| l.trim_start().starts_with('+') && l.contains("misbehave-build-B")),
        "the shadow's write is in the diff: {status}"
    );
    env.settled().await;
    // Dry runs: nothing the shadow wrote is stored.
    let stored = env.get("", "v1", "ConfigMap", Some("shop"), "one").unwrap();
    assert_eq!(stored["data"]["behaved-by"], "misbehave-build-A");
    // Counted, and announced once on the object.
    assert_counted(port, "rekon_shadow_differences_total");
    let events = env.resource("events.k8s.io", "v1", "Event");
    let announced = env
        .wait("the ShadowDiffers Event", || {
            let all = env
                .store()
                .list(&events, &Default::default())
                .unwrap()
                .items;
            let about_one: Vec<Value> = all
                .into_iter()
                .filter(|e| e["reason"] == "ShadowDiffers" && e["regarding"]["name"] == "one")
                .collect();
            (!about_one.is_empty()).then_some(about_one)
        })
        .await;
    assert_eq!(announced.len(), 1, "{announced:?}");
}

/// A shadow of the same logic agrees on every object; one that traps where
/// the serving version does not is an error, and the serving version goes
/// on unharmed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agreeing_shadow_and_a_trapping_one() {
    use misbehave::MODE_KEY;
    let mut env = Env::new().await;
    env.apply(namespace("shop"));
    env.apply(configmap("shop", "calm", json!({}), json!({})));
    // The shadow reads its mode from another annotation: `troubled` traps
    // in the shadow only.
    let shadow_key = MODE_KEY.replace("/mode", "/modx");
    env.apply(configmap(
        "shop",
        "troubled",
        json!({ shadow_key.clone(): "trap" }),
        json!({}),
    ));
    let port = run_with_shadow(&mut env, support::misbehave_with(MODE_KEY, &shadow_key));
    for name in ["calm", "troubled"] {
        env.wait("the serving version reconciled", || {
            env.get("", "v1", "ConfigMap", Some("shop"), name)
                .filter(|c| c["data"]["reconciled"] == "true")
        })
        .await;
    }
    let status = env
        .wait("both objects shadowed", || {
            let (out, code) = rollout_status(port, "misbehave");
            (out.contains("shop/calm") && out.contains("shop/troubled")).then_some((out, code))
        })
        .await;
    let (out, code) = status;
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("agree   shop/calm"), "{out}");
    assert!(out.contains("error   shop/troubled"), "{out}");
    assert_counted(port, "rekon_shadow_errors_total");
}

/// An API server that refuses the shadow's dry runs: that object's
/// comparison is an error carrying the server's answer, the serving
/// version's real writes go through, and the next dry run, answered,
/// compares again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_refusing_dry_runs_is_a_shadow_error_and_the_serving_version_goes_on() {
    let mut env = Env::new().await;
    env.apply(namespace("shop"));
    // Every dry-run patch of a ConfigMap is refused, for a while.
    env.server.faults().fail(rekon_apiserver::FailRule {
        verb: Some("patch".into()),
        resource: Some("configmaps".into()),
        code: 400,
        count: 1000,
        retry_after_seconds: None,
        dry_run: Some(true),
    });
    env.apply(configmap("shop", "one", json!({}), json!({})));
    let shadow = support::misbehave_with(misbehave::BUILD_MARK, "misbehave-build-B");
    let port = run_with_shadow(&mut env, shadow);
    let (status, code) = env
        .wait("the refused dry run", || {
            let (out, code) = rollout_status(port, "misbehave");
            out.contains("error   shop/one").then_some((out, code))
        })
        .await;
    assert_eq!(code, Some(1), "{status}");
    assert!(
        status.contains("400") && status.contains("bad request"),
        "{status}"
    );
    // The serving version's real patch was not refused.
    let stored = env.get("", "v1", "ConfigMap", Some("shop"), "one").unwrap();
    assert_eq!(
        stored["data"]["behaved-by"], "misbehave-build-A",
        "{stored}"
    );
    // Dry runs answered again: the next comparison is a difference, no error.
    env.server.faults().clear();
    env.apply(configmap(
        "shop",
        "one",
        json!({"touched": "yes"}),
        json!({}),
    ));
    let status = env
        .wait("a comparison after the refusals", || {
            let (out, _) = rollout_status(port, "misbehave");
            out.contains("differ  shop/one").then_some(out)
        })
        .await;
    assert!(status.contains("misbehave-build-B"), "{status}");
}
