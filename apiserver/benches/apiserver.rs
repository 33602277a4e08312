//! Throughput of the in-memory API server over real HTTP, through kube-rs.
//!
//! Run with `cargo bench --bench apiserver`. Prints one JSON object per line:
//! `creates_per_s`, `list_10k_ms` and `watch_fanout_events_per_s` (10 watchers).

use std::time::{Duration, Instant};

use futures::{StreamExt as _, TryStreamExt as _};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, PostParams, WatchEvent, WatchParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use rekon_apiserver::{ApiServer, WriteOptions};
use serde_json::json;

fn report(metric: &str, value: f64, unit: &str) {
    println!(
        "{}",
        json!({"bench": "apiserver", "metric": metric, "value": (value * 100.0).round() / 100.0, "unit": unit})
    );
}

fn cm(name: &str) -> ConfigMap {
    serde_json::from_value(
        json!({"metadata": {"name": name, "labels": {"bench": "yes"}}, "data": {"k": "v"}}),
    )
    .expect("configmap")
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let server = ApiServer::builder().history_limit(50_000).start().await?;
    let kc = Kubeconfig::from_yaml(&server.kubeconfig())?;
    let config = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default()).await?;
    let client = kube::Client::try_from(config)?;
    let store = server.store();
    let ns_res = store
        .resource_for_kind("", "v1", "Namespace")
        .expect("namespaces are built in");
    let cm_res = store
        .resource_for_kind("", "v1", "ConfigMap")
        .expect("configmaps are built in");
    for ns in ["creates", "list", "fanout"] {
        store.create(
            &ns_res,
            None,
            json!({"metadata": {"name": ns}}),
            &WriteOptions::default(),
        )?;
    }

    // creates_per_s: 8 concurrent clients, 4000 creates.
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "creates");
    let total = 4000usize;
    let workers = 8usize;
    let start = Instant::now();
    let tasks: Vec<_> = (0..workers)
        .map(|w| {
            let api = api.clone();
            tokio::spawn(async move {
                for i in 0..total / workers {
                    api.create(&PostParams::default(), &cm(&format!("c-{w}-{i}")))
                        .await?;
                }
                Ok::<_, kube::Error>(())
            })
        })
        .collect();
    for t in tasks {
        t.await??;
    }
    report(
        "creates_per_s",
        total as f64 / start.elapsed().as_secs_f64(),
        "1/s",
    );

    // list_10k_ms: one list of 10 000 ConfigMaps.
    for i in 0..10_000 {
        store.create(
            &cm_res,
            Some("list"),
            serde_json::to_value(cm(&format!("l-{i}")))?,
            &WriteOptions::default(),
        )?;
    }
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "list");
    let mut best = Duration::MAX;
    for _ in 0..3 {
        let start = Instant::now();
        let list = api.list(&ListParams::default()).await?;
        best = best.min(start.elapsed());
        assert_eq!(list.items.len(), 10_000);
    }
    report("list_10k_ms", best.as_secs_f64() * 1000.0, "ms");

    // watch_fanout_events_per_s: 10 watchers, 2000 writes each delivered to all.
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "fanout");
    let rv = api
        .list(&ListParams::default())
        .await?
        .metadata
        .resource_version
        .unwrap_or_default();
    let events = 2000usize;
    let mut watchers = Vec::new();
    for _ in 0..10 {
        let stream = api.watch(&WatchParams::default().timeout(290), &rv).await?;
        watchers.push(tokio::spawn(async move {
            let mut stream = stream.boxed();
            let mut n = 0usize;
            while let Some(ev) = stream.try_next().await? {
                if matches!(ev, WatchEvent::Added(_)) {
                    n += 1;
                    if n == events {
                        break;
                    }
                }
            }
            Ok::<_, kube::Error>(n)
        }));
    }
    let start = Instant::now();
    for i in 0..events {
        store.create(
            &cm_res,
            Some("fanout"),
            serde_json::to_value(cm(&format!("f-{i}")))?,
            &WriteOptions::default(),
        )?;
    }
    let mut delivered = 0usize;
    for w in watchers {
        delivered += w.await??;
    }
    report(
        "watch_fanout_events_per_s",
        delivered as f64 / start.elapsed().as_secs_f64(),
        "1/s",
    );
    server.shutdown().await;
    Ok(())
}
