//! What the replicas publish for their webhooks belongs to them all:
//! `rekon run` replicas with leader election, over the in-memory API
//! server. A stopping replica withdraws nothing; a changed or deleted
//! configuration comes back at once; a module's configurations go only
//! once no replica serves it; an uninstall takes everything back.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{self, Env, stderr};

const ADMISSION: &str = "admissionregistration.k8s.io";

/// No drain: nothing calls the Service here.
const WEBHOOKS: &[&str] = &[
    "--webhook-service",
    "default/rekon-webhooks:443",
    "--webhook-drain",
    "0s",
];

/// A replica serving the modules of `dir` as `identity`; returns its
/// index and webhook port.
fn replica(env: &mut Env, dir: &Path, identity: &str, extra: &[&str]) -> (usize, u16) {
    let port = support::free_port();
    let addr = format!("127.0.0.1:{port}");
    let mut args = support::LEASE.to_vec();
    args.extend(WEBHOOKS);
    args.extend(["--identity", identity, "--modules", dir.to_str().unwrap()]);
    args.extend(["--webhook-addr", &addr]);
    args.extend(extra);
    (env.run(&[], &args), port)
}

fn module_dir(env: &Env, name: &str) -> PathBuf {
    let dir = env.dir.path().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(rekon_test_artifacts::APP, dir.join("app.wasm")).unwrap();
    dir
}

fn configuration(env: &Env, kind: &str) -> Option<Value> {
    env.get(ADMISSION, "v1", kind, None, "rekon-app")
}

fn conversion(env: &Env) -> Value {
    env.get(
        "apiextensions.k8s.io",
        "v1",
        "CustomResourceDefinition",
        None,
        "apps.demo.rekon.dev",
    )
    .unwrap()["spec"]["conversion"]
        .clone()
}

fn leader(env: &Env) -> Option<String> {
    env.lease_holder("rekon-leader")
}

/// An environment with the App CRD and two replicas' module folders,
/// replica `a` started and leading, everything published.
async fn two_replicas_a_leading() -> (Env, PathBuf, PathBuf, usize) {
    let mut env = Env::new().await;
    env.use_shared_cache();
    env.apply_file(&support::path("guests/app/manifests/crd.yaml"));
    let (dir_a, dir_b) = (module_dir(&env, "a"), module_dir(&env, "b"));
    let (a, _) = replica(&mut env, &dir_a, "a", &[]);
    env.wait("a to lead", || leader(&env).filter(|l| l == "a"))
        .await;
    env.wait_long("the configurations", || all_published(&env).then_some(()))
        .await;
    (env, dir_a, dir_b, a)
}

/// Waits until `identity`'s webhook-server Lease names the module.
async fn serving(env: &Env, identity: &str) {
    let name = format!("rekon-webhooks-{identity}");
    env.wait(&format!("{name} naming the module"), || {
        env.get("coordination.k8s.io", "v1", "Lease", Some("default"), &name)
            .filter(|l| l["metadata"]["annotations"]["rekon.dev/webhook-modules"] == "app")
    })
    .await;
}

/// Everything published is there: both configurations, the conversion.
fn all_published(env: &Env) -> bool {
    configuration(env, "ValidatingWebhookConfiguration").is_some()
        && configuration(env, "MutatingWebhookConfiguration").is_some()
        && conversion(env)["strategy"] == "Webhook"
}

/// Stops host `index` with SIGTERM, checking that everything stays
/// published at every moment of its shutdown.
async fn stop_watching(env: &mut Env, index: usize) {
    env.signal(index, "TERM");
    let started = Instant::now();
    loop {
        assert!(
            all_published(env),
            "something was withdrawn while host {index} stopped\n{}",
            env.log()
        );
        if env.hosts[index].try_wait().unwrap().is_some() {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "host {index} does not stop"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // And for a while after.
    for _ in 0..40 {
        assert!(
            all_published(env),
            "something was withdrawn after host {index} stopped"
        );
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_come_and_go_and_what_they_publish_stays() {
    let (mut env, dir_a, dir_b, a) = two_replicas_a_leading().await;
    let (b, _) = replica(&mut env, &dir_b, "b", &[]);
    serving(&env, "b").await;
    let published = configuration(&env, "ValidatingWebhookConfiguration").unwrap();
    let selector = &published["webhooks"][0]["namespaceSelector"];
    assert_eq!(
        selector,
        &json!({"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn",
                "values": ["kube-node-lease", "kube-public", "kube-system"]}]}),
        "{published}"
    );

    // The leader stops (a rolling restart, a scale-down): nothing goes.
    stop_watching(&mut env, a).await;
    env.wait("b to lead", || leader(&env).filter(|l| l == "b"))
        .await;
    assert!(
        env.get(
            "coordination.k8s.io",
            "v1",
            "Lease",
            Some("default"),
            "rekon-webhooks-a"
        )
        .is_none(),
        "a stopped replica leaves the webhook servers"
    );

    // Deleted or changed by someone else: applied again at once.
    let validating = env.resource(ADMISSION, "v1", "ValidatingWebhookConfiguration");
    env.store()
        .delete(&validating, None, "rekon-app", None)
        .unwrap();
    let deleted = Instant::now();
    env.wait("the configuration back", || {
        configuration(&env, "ValidatingWebhookConfiguration")
    })
    .await;
    assert!(
        deleted.elapsed() < Duration::from_secs(5),
        "back in {:?}",
        deleted.elapsed()
    );
    let mut changed = configuration(&env, "ValidatingWebhookConfiguration").unwrap();
    changed["webhooks"][0]["failurePolicy"] = json!("Ignore");
    env.apply(changed);
    env.wait("the failure policy back", || {
        configuration(&env, "ValidatingWebhookConfiguration")
            .filter(|c| c["webhooks"][0]["failurePolicy"] == "Fail")
    })
    .await;
    let crds = env.resource("apiextensions.k8s.io", "v1", "CustomResourceDefinition");
    let mut crd = env.store().get(&crds, None, "apps.demo.rekon.dev").unwrap();
    crd["spec"]["conversion"] = json!({"strategy": "None"});
    env.apply(crd);
    env.wait("the conversion back", || {
        (conversion(&env)["strategy"] == "Webhook").then_some(())
    })
    .await;

    // A replica comes back without the module: the module stays
    // published while b serves it...
    std::fs::remove_file(dir_a.join("app.wasm")).unwrap();
    let (a2, _) = replica(&mut env, &dir_a, "a", &[]);
    env.signal(b, "TERM");
    env.wait("a to lead again", || leader(&env).filter(|l| l == "a"))
        .await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    // (b is gone: now nobody serves the module.)
    env.wait(
        "the configurations withdrawn once nobody serves the module",
        || {
            (configuration(&env, "ValidatingWebhookConfiguration").is_none()
                && configuration(&env, "MutatingWebhookConfiguration").is_none()
                && conversion(&env) == json!({"strategy": "None"}))
            .then_some(())
        },
    )
    .await;
    assert!(
        env.log_of(a2).contains("no replica serves the module"),
        "{}",
        env.log_of(a2)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_module_is_withdrawn_only_once_no_replica_serves_it() {
    let (mut env, dir_a, dir_b, a) = two_replicas_a_leading().await;
    replica(&mut env, &dir_b, "b", &[]);
    serving(&env, "b").await;
    // The leader loses the module; b still serves it.
    std::fs::remove_file(dir_a.join("app.wasm")).unwrap();
    env.wait("a to unload the module", || {
        env.log_of(a).contains("module unloaded").then_some(())
    })
    .await;
    for _ in 0..60 {
        assert!(all_published(&env), "withdrawn while b serves the module");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // b loses it too: now it goes.
    std::fs::remove_file(dir_b.join("app.wasm")).unwrap();
    env.wait("the configurations withdrawn", || {
        (configuration(&env, "ValidatingWebhookConfiguration").is_none()
            && configuration(&env, "MutatingWebhookConfiguration").is_none()
            && conversion(&env) == json!({"strategy": "None"}))
        .then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_module_whose_webhooks_no_server_serves_is_reported() {
    let mut env = Env::new().await;
    env.use_shared_cache();
    env.apply_file(&support::path("guests/app/manifests/crd.yaml"));
    env.run(&[rekon_test_artifacts::APP], &[]);
    let event = env
        .event("the WebhooksNotServed Event", |e| {
            e["reason"] == "WebhooksNotServed"
        })
        .await;
    assert_eq!(event["regarding"]["kind"], "CustomResourceDefinition");
    assert_eq!(event["regarding"]["name"], "apps.demo.rekon.dev");
    assert!(
        event["note"].as_str().unwrap().starts_with(
            "module app converts App.demo.rekon.dev between v1, v2, but no webhook server runs"
        ),
        "{event}"
    );
    let log = env.log();
    assert!(log.contains("the CRD's conversion stays None"), "{log}");
    assert!(
        log.contains("declares admission webhooks (validate-apps, default-apps)"),
        "{log}"
    );
    let checked = Command::new(env!("CARGO_BIN_EXE_rekon"))
        .args(["check", rekon_test_artifacts::APP])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&checked.stdout).unwrap();
    assert_eq!(report["warnings"].as_array().unwrap().len(), 2, "{report}");
    assert!(stderr(&checked).contains("warning: module app converts"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_sets_failure_policy_timeout_and_selectors_per_webhook() {
    let mut env = Env::new().await;
    env.use_shared_cache();
    env.apply_file(&support::path("guests/app/manifests/crd.yaml"));
    let config = env.dir.path().join("rekon.yaml");
    std::fs::write(
        &config,
        "excludeNamespaces: [ops]\nmodules:\n  app:\n    webhooks:\n      validate-apps:\n        \
             failurePolicy: Ignore\n        timeoutSeconds: 5\n        namespaceSelector: env in (prod)\n",
    )
    .unwrap();
    let dir = module_dir(&env, "a");
    replica(&mut env, &dir, "a", &["--config", config.to_str().unwrap()]);
    let validating = env
        .webhook_configuration("ValidatingWebhookConfiguration", "app")
        .await;
    let webhook = &validating["webhooks"][0];
    assert_eq!(webhook["failurePolicy"], "Ignore");
    assert_eq!(webhook["timeoutSeconds"], 5);
    assert_eq!(
        webhook["namespaceSelector"],
        json!({"matchExpressions": [
            {"key": "env", "operator": "In", "values": ["prod"]},
            {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["ops"]},
        ]})
    );
    let mutating = env
        .webhook_configuration("MutatingWebhookConfiguration", "app")
        .await;
    assert_eq!(mutating["webhooks"][0]["failurePolicy"], "Fail");
}

#[path = "lifecycle/teardown.rs"]
mod teardown;
