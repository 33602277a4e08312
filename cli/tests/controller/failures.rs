//! Failures: retried with growing delays until fixed, a misbehaving module
//! never stops the others, a denied call answered 403 with a warning Event.

use std::time::Duration;

use serde_json::json;

use crate::support::{Env, app, configmap, path};

fn failed_attempts(log: &str, name: &str) -> usize {
    log.lines()
        .filter(|l| l.contains("reconcile failed") && l.contains(&format!("object={name}")))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_are_retried_with_growing_delays_until_fixed() {
    let mut env = Env::new().await;
    env.run(&[rekon_test_artifacts::MISBEHAVE], &[]);
    env.apply(configmap(
        "default",
        "flaky",
        json!({ "misbehave.rekon.dev/mode": "error" }),
        json!({}),
    ));
    env.wait("a few retries", || {
        (failed_attempts(&env.log(), "flaky") >= 4).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    // 5 ms doubling: within a second, about eight attempts, not hundreds.
    let attempts = failed_attempts(&env.log(), "flaky");
    assert!(attempts < 15, "{attempts} attempts: no backoff");

    // Fix the cause: the next run succeeds.
    let mut fixed = env
        .get("", "v1", "ConfigMap", Some("default"), "flaky")
        .unwrap();
    fixed["metadata"]["annotations"]["misbehave.rekon.dev/mode"] = json!("ok");
    env.apply(fixed);
    env.wait("the fixed object reconciled", || {
        env.get("", "v1", "ConfigMap", Some("default"), "flaky")
            .filter(|c| c["data"]["reconciled"] == "true")
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn misbehaving_module_never_stops_the_others() {
    let mut env = Env::new().await;
    env.apply_file(&path("guests/app/manifests/crd.yaml"));
    env.run(
        &[rekon_test_artifacts::MISBEHAVE, rekon_test_artifacts::APP],
        &["--timeout-ms", "200", "--max-memory-mib", "32"],
    );
    for mode in [
        "trap",
        "panic",
        "loop",
        "alloc",
        "recurse",
        "recurse-small",
        "huge-error",
        "huge-log",
    ] {
        env.apply(configmap(
            "default",
            &format!("bad-{mode}"),
            json!({ "misbehave.rekon.dev/mode": mode }),
            json!({}),
        ));
    }
    env.apply(app("web", 1));
    env.wait("the App reconciled", || {
        env.get("demo.rekon.dev", "v1", "App", Some("default"), "web")
            .filter(|a| a["status"]["observedGeneration"] == 1)
    })
    .await;
    // misbehave itself still serves its good objects.
    env.apply(configmap("default", "good", json!({}), json!({})));
    env.wait("misbehave's good object", || {
        env.get("", "v1", "ConfigMap", Some("default"), "good")
            .filter(|c| c["data"]["reconciled"] == "true")
    })
    .await;
    // Each failure was seen and classified.
    for kind in [
        "timeout",
        "out_of_memory",
        "panic",
        "stack_overflow",
        "trap",
    ] {
        let kind = format!("kind=\"{kind}\"");
        env.wait(&kind, || env.log().contains(&kind).then_some(()))
            .await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn denied_call_gets_forbidden_and_a_warning_event() {
    let mut env = Env::new().await;
    env.apply(json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": { "name": misbehave::VICTIM, "namespace": "default" },
        "data": { "k": "dg==" },
    }));
    env.run(&[rekon_test_artifacts::MISBEHAVE], &[]);
    env.apply(configmap(
        "default",
        "intruder",
        json!({ "misbehave.rekon.dev/mode": "forbidden" }),
        json!({}),
    ));
    let cm = env
        .wait("the guest's record of the refusal", || {
            env.get("", "v1", "ConfigMap", Some("default"), "intruder")
                .filter(|c| c["data"]["forbidden"].is_string())
        })
        .await;
    assert_eq!(cm["data"]["forbidden"], "403 Forbidden");
    assert!(
        env.get("", "v1", "Secret", Some("default"), misbehave::VICTIM)
            .is_some(),
        "the Secret survived"
    );
    let event = env
        .event("the Warning event", |e| e["reason"] == "PermissionDenied")
        .await;
    assert_eq!(event["type"], "Warning");
    assert_eq!(event["regarding"]["name"], "intruder");
    // The uid ties it to this object: `kubectl describe` lists it.
    assert_eq!(event["regarding"]["uid"], cm["metadata"]["uid"], "{event}");
    let core = env
        .get(
            "",
            "v1",
            "Event",
            Some("default"),
            event["metadata"]["name"].as_str().unwrap(),
        )
        .expect("the same Event through core/v1");
    assert_eq!(core["involvedObject"]["name"], "intruder");
    assert!(
        event["note"].as_str().unwrap().contains("delete"),
        "{event}"
    );
}
