//! One scenario, three languages: the Rust, JavaScript and Python
//! builds of the ConfigMap sync reconciler must behave the same.

use serde_json::{Value, json};

use crate::support::{Env, configmap, namespace};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rust_follows_creates_updates_and_deletes_including_the_watched_kind() {
    scenario(rekon_test_artifacts::CONFIGMAP_SYNC).await;
}

/// Built for `rekon:reconciler@0.1.0`, with its watched kind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn built_for_contract_0_1_0_follows_the_same_scenario() {
    scenario(rekon_test_artifacts::CONFIGMAP_SYNC_V0_1).await;
}

/// Built for `rekon:reconciler@0.2.0`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn built_for_contract_0_2_0_follows_the_same_scenario() {
    scenario(rekon_test_artifacts::CONFIGMAP_SYNC_V0_2).await;
}

/// Built for `rekon:reconciler@0.3.0`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn built_for_contract_0_3_0_follows_the_same_scenario() {
    scenario(rekon_test_artifacts::CONFIGMAP_SYNC_V0_3).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn javascript_follows_creates_updates_and_deletes_including_the_watched_kind() {
    scenario(rekon_test_artifacts::built(
        rekon_test_artifacts::CONFIGMAP_SYNC_JS,
    ))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_follows_creates_updates_and_deletes_including_the_watched_kind() {
    scenario(rekon_test_artifacts::built(
        rekon_test_artifacts::CONFIGMAP_SYNC_PY,
    ))
    .await;
}

/// The 12 MB JavaScript component, shipped as `rekon pack` writes it:
/// several ConfigMaps, loaded by the host's ConfigMap source.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn javascript_shipped_as_chunked_configmaps_behaves_the_same() {
    scenario_shipped(
        rekon_test_artifacts::built(rekon_test_artifacts::CONFIGMAP_SYNC_JS),
        true,
    )
    .await;
}

async fn scenario(module: &str) {
    scenario_shipped(module, false).await
}

/// Runs `rekon pack` on a module and applies what it wrote.
fn ship_as_configmaps(env: &Env, module: &str) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_rekon"))
        .args([
            "pack",
            module,
            "--name",
            "module-under-test",
            "--namespace",
            "rekon-system",
        ])
        .env("REKON_CACHE_DIR", &env.cache)
        .output()
        .expect("running rekon pack");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    env.apply(namespace("rekon-system"));
    let documents: Vec<Value> = serde_yaml_ng::Deserializer::from_slice(&output.stdout)
        .map(|d| <Value as serde::Deserialize>::deserialize(d).expect("YAML"))
        .filter(|v| !v.is_null())
        .collect();
    assert!(documents.len() > 2, "a big module is split into parts");
    for document in documents {
        env.apply(document);
    }
}

async fn scenario_shipped(module: &str, as_configmaps: bool) {
    let mut env = Env::new().await;
    // The JS and Python components are 12-20 MB: compile each once per
    // test run into the shared cache, before the host's deadlines start.
    env.use_shared_cache();
    env.warm_cache(module);
    env.apply(namespace("team-a"));
    env.apply(namespace("team-c"));
    env.apply(configmap(
        "team-c",
        "shared",
        json!({}),
        json!({ "mine": "yes" }),
    ));
    if as_configmaps {
        ship_as_configmaps(&env, module);
        env.run(
            &[],
            &[
                "--watch-configmaps",
                "--configmap-namespace",
                "rekon-system",
            ],
        );
    } else {
        env.run(&[module], &[]);
    }
    let mut source = configmap(
        "default",
        "shared",
        json!({ "rekon.dev/sync-to": "team-a,team-b,team-c" }),
        json!({ "region": "eu-west-1" }),
    );
    source["metadata"]["labels"] = json!({ "rekon.dev/sync": "true" });
    env.apply(source.clone());
    let copy = env
        .wait("the copy in team-a", || {
            env.get("", "v1", "ConfigMap", Some("team-a"), "shared")
                .filter(|c| c["data"]["region"] == "eu-west-1")
        })
        .await;
    assert_eq!(
        copy["metadata"]["labels"],
        json!({
            "rekon.dev/synced-from-namespace": "default",
            "rekon.dev/synced-from-name": "shared",
        })
    );
    let source = env
        .get("", "v1", "ConfigMap", Some("default"), "shared")
        .unwrap();
    assert_eq!(
        source["metadata"]["finalizers"],
        json!(["rekon.dev/sync-cleanup"])
    );
    // The module reads the Namespaces it watches: one informer of whole
    // Namespaces both queues its reconciles and serves its reads, so a
    // reconcile queued by a new Namespace finds it in the cache.
    let log = env.log();
    assert_eq!(
        log.matches("informer started kind=Namespace/v1").count(),
        1,
        "{log}"
    );
    assert!(
        log.contains("informer started kind=Namespace/v1 metadata_only=false"),
        "{log}"
    );

    // A ConfigMap of that name that is not a copy is left alone, with
    // a CopyConflict Warning Event on the source.
    let event = env
        .event("the CopyConflict Event", |e| e["reason"] == "CopyConflict")
        .await;
    assert_eq!(event["type"], "Warning");
    assert_eq!(event["regarding"]["name"], "shared");
    let foreign = env
        .get("", "v1", "ConfigMap", Some("team-c"), "shared")
        .unwrap();
    assert_eq!(foreign["data"], json!({ "mine": "yes" }));

    // team-b appears later: the Namespace watch brings the copy.
    env.apply(namespace("team-b"));
    env.wait("the copy in team-b", || {
        env.get("", "v1", "ConfigMap", Some("team-b"), "shared")
    })
    .await;

    // An update of the source reaches the copies.
    let mut updated = env
        .get("", "v1", "ConfigMap", Some("default"), "shared")
        .unwrap();
    updated["data"] = json!({ "region": "us-east-1" });
    env.apply(updated);
    env.wait("the updated copy", || {
        env.get("", "v1", "ConfigMap", Some("team-b"), "shared")
            .filter(|c| c["data"]["region"] == "us-east-1")
    })
    .await;

    // A namespace no longer listed loses its copy.
    let mut narrowed = env
        .get("", "v1", "ConfigMap", Some("default"), "shared")
        .unwrap();
    narrowed["metadata"]["annotations"]["rekon.dev/sync-to"] = json!("team-b,team-c");
    env.apply(narrowed);
    env.wait("the copy in team-a gone", || {
        env.get("", "v1", "ConfigMap", Some("team-a"), "shared")
            .is_none()
            .then_some(())
    })
    .await;

    // Deleting the source deletes the copies, then the source goes;
    // the foreign ConfigMap stays.
    let configmaps = env.resource("", "v1", "ConfigMap");
    env.store()
        .delete(&configmaps, Some("default"), "shared", None)
        .unwrap();
    env.wait("the copies and the source gone", || {
        (env.get("", "v1", "ConfigMap", Some("team-b"), "shared")
            .is_none()
            && env
                .get("", "v1", "ConfigMap", Some("default"), "shared")
                .is_none())
        .then_some(())
    })
    .await;
    assert!(
        env.get("", "v1", "ConfigMap", Some("team-c"), "shared")
            .is_some()
    );
}
