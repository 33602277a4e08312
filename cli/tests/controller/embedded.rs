//! The host embedded as a library (`rekon_host::Host`): `modules()` answers
//! while a big module compiles, and stopping one module keeps the watch it
//! shares with another.

use std::time::Duration;

use rekon_apiserver::RunningServer;
use serde_json::json;

use crate::support::{Env, app, configmap, namespace, path};

async fn client(server: &RunningServer) -> kube::Client {
    let kubeconfig = kube::config::Kubeconfig::from_yaml(&server.kubeconfig()).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .unwrap();
    kube::Client::try_from(config).unwrap()
}

/// While a big module compiles (the JavaScript guest, no compile
/// cache), the host answers `modules()` at once and the other modules
/// keep reconciling.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modules_answers_and_others_reconcile_while_a_big_module_compiles() {
    let env = Env::new().await;
    env.apply_file(&path("guests/app/manifests/crd.yaml"));
    let dir = env.dir.path().join("modules");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(rekon_test_artifacts::APP, dir.join("app.wasm")).unwrap();
    let host = rekon_host::Host::builder()
        .client(client(&env.server).await)
        .engine_config(rekon_host::EngineConfig::default().cache_dir(None))
        .watch_dir(&dir)
        .start()
        .await
        .unwrap();
    let names = |modules: Vec<rekon_host::Module>| -> Vec<String> {
        modules.iter().map(|m| m.name().to_string()).collect()
    };
    std::fs::copy(
        rekon_test_artifacts::CONFIGMAP_SYNC_JS,
        dir.join("sync.wasm"),
    )
    .unwrap();
    // The directory's debounce has passed: the compile is under way.
    tokio::time::sleep(Duration::from_millis(300)).await;
    env.apply(app("during", 1));
    let answered = tokio::time::timeout(Duration::from_millis(200), host.modules())
        .await
        .expect("modules() answers while a module compiles");
    assert_eq!(names(answered), ["app"]);
    env.wait("the App reconciled during the compile", || {
        env.get("apps", "v1", "Deployment", Some("default"), "during")
    })
    .await;
    let during = names(host.modules().await);
    assert_eq!(during, ["app"], "the compile was still under way");
    let started = std::time::Instant::now();
    loop {
        if names(host.modules().await).contains(&"configmap-sync-js".to_string()) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the big module never loaded"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    host.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopping_one_module_keeps_the_shared_watch_of_the_other() {
    let env = Env::new().await;
    env.apply(namespace("team-a"));
    let host = rekon_host::Host::builder()
        .client(client(&env.server).await)
        .engine_config(rekon_host::EngineConfig::default().cache_dir(None))
        .module(
            "misbehave",
            std::fs::read(rekon_test_artifacts::MISBEHAVE).unwrap(),
        )
        .module(
            "configmap-sync",
            std::fs::read(rekon_test_artifacts::CONFIGMAP_SYNC).unwrap(),
        )
        .start()
        .await
        .unwrap();
    assert_eq!(host.modules().await.len(), 2);
    env.apply(configmap("default", "one", json!({}), json!({})));
    env.wait("misbehave running", || {
        env.get("", "v1", "ConfigMap", Some("default"), "one")
            .filter(|c| c["data"]["reconciled"] == "true")
    })
    .await;

    assert!(host.stop_module("misbehave").await);
    let mut source = configmap(
        "default",
        "shared",
        json!({ "rekon.dev/sync-to": "team-a" }),
        json!({ "k": "v" }),
    );
    source["metadata"]["labels"] = json!({ "rekon.dev/sync": "true" });
    env.apply(source);
    env.wait("configmap-sync still reconciling", || {
        env.get("", "v1", "ConfigMap", Some("team-a"), "shared")
    })
    .await;
    let source = env
        .get("", "v1", "ConfigMap", Some("default"), "shared")
        .unwrap();
    assert!(
        source["data"]["reconciled"].is_null(),
        "the stopped module did not run"
    );
    let watches = env
        .server
        .requests()
        .into_iter()
        .filter(|r| r.verb == "watch" && r.resource == "configmaps")
        .count();
    assert_eq!(watches, 1, "the ConfigMap watch was kept, not restarted");

    host.shutdown().await;
    env.wait("the watches closed", || {
        (env.store().watch_count() == 0).then_some(())
    })
    .await;
}
