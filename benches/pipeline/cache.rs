//! What the informer cache costs in memory: an informer synced on the
//! ConfigMaps of a server process.

use rekon_host::bench::SyncedInformer;
use serde_json::{Value, json};

use crate::process::ServerProcess;
use crate::run::client_for;
use crate::{Sizes, common};

/// Syncs an informer on the ConfigMaps of a server process; prints the
/// result as one JSON object.
pub fn cache_cost(sizes: &Sizes) {
    let server = ServerProcess::start("serve-config-maps", sizes.config_maps);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let result = runtime.block_on(async {
        let client = client_for(&server.kubeconfig).await;
        // Warm the client, discovery and the informer code on a small kind,
        // so the measure is the cache and not the first use of the stack.
        let namespaces = rekon_host::contract::Gvk {
            group: String::new(),
            version: "v1".into(),
            kind: "Namespace".into(),
        };
        let warm = SyncedInformer::start(client.clone(), &namespaces)
            .await
            .expect("syncing Namespaces");
        let config_maps = rekon_host::contract::Gvk {
            group: String::new(),
            version: "v1".into(),
            kind: "ConfigMap".into(),
        };
        let before = common::rss_mb();
        let informer = SyncedInformer::start(client.clone(), &config_maps)
            .await
            .expect("syncing ConfigMaps");
        let rss = common::rss_mb() - before;
        // And each namespace's kube-root-ca.crt.
        assert_eq!(informer.len(), sizes.config_maps + warm.len());
        let cached = informer.json_bytes();
        let request = http::Request::get("/api/v1/configmaps")
            .body(Vec::new())
            .expect("a list request");
        let list: Value = serde_json::from_str(
            &client
                .request_text(request)
                .await
                .expect("listing ConfigMaps"),
        )
        .expect("a JSON list");
        let listed: usize = list["items"]
            .as_array()
            .expect("a list of items")
            .iter()
            .map(|item| item.to_string().len())
            .sum();
        drop((warm, informer));
        json!({ "rss_mb": rss, "listed_json_mb": listed as f64 / (1024.0 * 1024.0),
            "cached_json_mb": cached as f64 / (1024.0 * 1024.0) })
    });
    println!("{result}");
    server.stop();
}
