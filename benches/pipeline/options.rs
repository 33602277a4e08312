//! The measures of the controller options: the priority queue under a
//! backlog, and the cache of metadata only.

use std::time::{Duration, Instant};

use rekon_apiserver::ApiServer;
use rekon_host::bench::SyncedInformer;
use rekon_host::{ControllerConfig, Host};
use serde_json::{Value, json};

use crate::process::{ServerProcess, stdin_closed};
use crate::run::client_for;
use crate::server::{config_map, seed_then_ready, serve_spec};
use crate::{CONCURRENCY, Sizes, common};

/// A ConfigMap of the backlog: already reconciled by `misbehave`'s `ok`
/// mode, so its reconcile writes nothing.
fn marked_config_map(index: usize) -> Value {
    let mut object = config_map(index);
    object["data"]["reconciled"] = json!("true");
    object["data"]["behaved-by"] = json!(misbehave::BUILD_MARK);
    object
}

/// A server process with `count` marked ConfigMaps; says `ready`, then
/// serves until stdin closes.
pub(super) fn serve_marked_config_maps() {
    let (count, kubeconfig) = serve_spec();
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    runtime.block_on(async {
        let server = ApiServer::builder()
            .start()
            .await
            .expect("the API server starts");
        let resource = server
            .store()
            .resource_for_kind("", "v1", "ConfigMap")
            .expect("ConfigMaps are served");
        seed_then_ready(&server, &resource, count, marked_config_map, &kubeconfig);
        stdin_closed().await;
        server.shutdown().await;
    });
}

/// The `misbehave` module on a backlog of marked ConfigMaps, while new
/// ConfigMaps are created at 100 per second until the backlog has drained:
/// the queue latency of those changes. Prints one JSON object.
pub(super) fn backlog(sizes: &Sizes) {
    let server = ServerProcess::start("serve-marked-config-maps", sizes.backlog);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let cache = tempfile::tempdir().expect("a cache directory");
    let result = runtime.block_on(async {
        let client = client_for(&server.kubeconfig).await;
        let host = Host::builder()
            .client(client.clone())
            .controller_config(ControllerConfig::default().concurrency(CONCURRENCY))
            .engine_config(super::common::steady_state(cache.path()))
            .module(
                "misbehave.wasm",
                std::fs::read(rekon_test_artifacts::MISBEHAVE).expect("misbehave is built"),
            )
            .start()
            .await
            .expect("the host starts");
        let api: kube::Api<kube::api::DynamicObject> = kube::Api::namespaced_with(
            client,
            "default",
            &kube::api::ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&()),
        );
        let started = Instant::now();
        let mut tick = tokio::time::interval(Duration::from_millis(10));
        let mut edits = 0usize;
        let mut drain_s = None;
        // Edits until the backlog has drained (every object reconciled
        // once), and at least 100 of them.
        loop {
            tick.tick().await;
            let object: kube::api::DynamicObject = serde_json::from_value(json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": format!("edit-{edits:05}"), "namespace": "default"},
                "data": {"edit": edits.to_string()},
            }))
            .expect("a ConfigMap");
            api.create(&kube::api::PostParams::default(), &object)
                .await
                .expect("creating a ConfigMap");
            edits += 1;
            // The backlog's reconciles are those no user caused.
            let stats = host.stats();
            let backlog_done = stats.queue_latency_count() - stats.user_queue_latency_count();
            if drain_s.is_none() && backlog_done as usize >= sizes.backlog {
                drain_s = Some(started.elapsed().as_secs_f64());
            }
            if drain_s.is_some() && edits >= 100 {
                break;
            }
            assert!(
                started.elapsed() < sizes.deadline,
                "the backlog never drained"
            );
        }
        let ms = |q| {
            host.stats()
                .user_queue_latency_quantile(q)
                .map_or(f64::NAN, |d| d.as_secs_f64() * 1e3)
        };
        let result = json!({ "edits": edits, "drain_s": drain_s, "p50_ms": ms(0.5),
            "p99_ms": ms(0.99) });
        host.shutdown().await;
        result
    });
    println!("{result}");
    server.stop();
}

/// Syncs an informer of the metadata of the ConfigMaps of a server
/// process; prints its growth in resident memory as one JSON object.
pub(super) fn metadata_cache(sizes: &Sizes) {
    let server = ServerProcess::start("serve-config-maps", sizes.config_maps);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let result = runtime.block_on(async {
        let client = client_for(&server.kubeconfig).await;
        // Warm the stack on a small kind first, as the full measure does.
        let namespaces = rekon_host::contract::Gvk {
            group: String::new(),
            version: "v1".into(),
            kind: "Namespace".into(),
        };
        let warm = SyncedInformer::start_metadata(client.clone(), &namespaces)
            .await
            .expect("syncing Namespaces");
        let config_maps = rekon_host::contract::Gvk {
            group: String::new(),
            version: "v1".into(),
            kind: "ConfigMap".into(),
        };
        let before = common::rss_mb();
        let informer = SyncedInformer::start_metadata(client, &config_maps)
            .await
            .expect("syncing ConfigMaps' metadata");
        let rss = common::rss_mb() - before;
        // And each namespace's kube-root-ca.crt.
        assert_eq!(informer.len(), sizes.config_maps + warm.len());
        drop((warm, informer));
        json!({ "rss_mb": rss })
    });
    println!("{result}");
    server.stop();
}
