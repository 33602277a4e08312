//! The server processes: the in-memory API server seeded with Apps (and
//! their CRD) or with ConfigMaps, saying when it is ready and, for Apps,
//! how many are reconciled.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rekon_apiserver::{
    ApiServer, ListOptions, ResourceInfo, RunningServer, Store, StoreConfig, WriteOptions,
};
use serde_json::{Value, json};

use crate::SERVE_ENV;
use crate::process::{say, stdin_closed};

pub fn apply_file(store: &Store, path: &str) {
    let text = std::fs::read_to_string(path).expect("the CRD manifest");
    for document in serde_yaml_ng::Deserializer::from_str(&text) {
        let value: Value = serde::Deserialize::deserialize(document).expect("YAML");
        if !value.is_null() {
            store.apply_object(value).expect("applying the CRD");
        }
    }
}

pub fn app_name(index: usize) -> String {
    format!("app-{index:05}")
}

pub fn app(index: usize) -> Value {
    json!({
        "apiVersion": "demo.rekon.dev/v1", "kind": "App",
        "metadata": { "name": app_name(index), "namespace": "default",
            "labels": { "app.kubernetes.io/part-of": "bench" } },
        "spec": { "image": "registry.example/shop/web:1.27.3", "replicas": 2, "port": 8080 },
    })
}

/// Whether an App's status describes its current generation.
pub fn observed(app: &Value) -> bool {
    let generation = &app["metadata"]["generation"];
    !generation.is_null() && app["status"]["observedGeneration"] == *generation
}

/// The count and the kubeconfig path a server process is started with.
pub fn serve_spec() -> (usize, String) {
    let spec = std::env::var(SERVE_ENV).expect("the server's settings");
    let (count, kubeconfig) = spec.split_once(':').expect("<count>:<kubeconfig path>");
    (count.parse().expect("a count"), kubeconfig.to_string())
}

/// A server process with `count` Apps; says `ready`, then `observed N`
/// every 50 ms while N changes, until stdin closes.
pub fn serve_apps() {
    let (count, kubeconfig) = serve_spec();
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    runtime.block_on(async {
        // A Service per App: a service range for more than the 240 Services
        // kube-apiserver's default range holds, as clusters have.
        let config = StoreConfig::default().service_cluster_ip_range("10.96.0.0/16");
        let server = ApiServer::builder()
            .store(Store::new(config))
            .start()
            .await
            .expect("the API server starts");
        let store = server.store();
        apply_file(
            &store,
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../guests/app/manifests/crd.yaml"
            ),
        );
        let resource = store
            .resource_for_kind("demo.rekon.dev", "v1", "App")
            .expect("the CRD serves App");
        let done = Arc::new(Mutex::new(HashSet::new()));
        {
            let done = done.clone();
            store
                .watch(
                    &resource,
                    &ListOptions::default(),
                    None,
                    Box::new(move |event| {
                        if observed(&event.object)
                            && let Some(name) = event.object["metadata"]["name"].as_str()
                        {
                            done.lock().expect("done lock").insert(name.to_string());
                        }
                        true
                    }),
                )
                .expect("watching Apps");
        }
        seed_then_ready(&server, &resource, count, app, &kubeconfig);
        let report = async {
            let mut last = usize::MAX;
            let mut tick = tokio::time::interval(Duration::from_millis(50));
            loop {
                tick.tick().await;
                let now = done.lock().expect("done lock").len();
                if now != last {
                    say(&format!("observed {now}"));
                    last = now;
                }
            }
        };
        tokio::select! {
            _ = report => {}
            _ = stdin_closed() => {}
        }
        server.shutdown().await;
    });
}

/// A ConfigMap of about 1 KB of JSON as the server lists it.
pub fn config_map(index: usize) -> Value {
    let data: serde_json::Map<String, Value> = (0..6)
        .map(|k| {
            (
                format!("setting-{k}.properties"),
                json!(format!("key{k}={}", "v".repeat(64))),
            )
        })
        .collect();
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": { "name": format!("settings-{index:05}"), "namespace": "default",
            "labels": { "app.kubernetes.io/name": "shop", "app.kubernetes.io/part-of": "bench" } },
        "data": data,
    })
}

/// Creates `count` objects made by `object` in namespace `default`,
/// writes the kubeconfig and says `ready`: the server process is set.
pub fn seed_then_ready(
    server: &RunningServer,
    resource: &ResourceInfo,
    count: usize,
    object: fn(usize) -> Value,
    kubeconfig: &str,
) {
    let store = server.store();
    let writes = WriteOptions {
        field_manager: Some("bench".to_string()),
        ..WriteOptions::default()
    };
    for index in 0..count {
        store
            .create(resource, Some("default"), object(index), &writes)
            .unwrap_or_else(|e| panic!("creating {} {index}: {}", resource.kind, e.message));
    }
    server
        .write_kubeconfig(kubeconfig)
        .expect("writing the kubeconfig");
    say("ready");
}

/// A server process with `count` ConfigMaps; says `ready`, then serves
/// until stdin closes.
pub fn serve_config_maps() {
    let (count, kubeconfig) = serve_spec();
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    runtime.block_on(async {
        let server = ApiServer::builder()
            .start()
            .await
            .expect("the API server starts");
        let store = server.store();
        let resource = store
            .resource_for_kind("", "v1", "ConfigMap")
            .expect("ConfigMaps are served");
        seed_then_ready(&server, &resource, count, config_map, &kubeconfig);
        stdin_closed().await;
        server.shutdown().await;
    });
}
