//! The sharded figures of the real-server mode: three `rekon run`
//! processes with the `app` module sharded by uid, on the same cluster.
//!
//! - `sharded_cache_fraction`: once every App is reconciled, the largest
//!   replica's cached Apps (`rekon_shard_objects`) over all Apps (a third
//!   is ideal; the issue asks at most 0.4).
//! - `sharded_handoff_s`: one replica killed (SIGKILL), then every App it
//!   owned changed at once: the time from the kill to the last of them
//!   reconciled by the two others (at most the Lease duration, 4 s here,
//!   plus 2 s).

use std::collections::HashSet;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{
    Api, DynamicObject, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use rekon_rules::{ShardRanges, shard_point};
use serde_json::json;

use super::operator::{free_port, http_get};
use super::phases::apps_api;
use crate::emit;

/// The replicas' Lease duration (and its renew deadline and retry period).
const LEASE: [&str; 6] = [
    "--lease-duration",
    "4s",
    "--renew-deadline",
    "3s",
    "--retry-period",
    "500ms",
];
const LEASE_S: f64 = 4.0;
const REPLICAS: [&str; 3] = ["shard-a", "shard-b", "shard-c"];
const NAMESPACE: &str = "bench-sharded";

struct Replica {
    child: Child,
    port: u16,
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(rekon: &str, kubeconfig: &Path, config: &Path, cache: &Path, identity: &str) -> Replica {
    let port = free_port();
    let child = Command::new(rekon)
        .args(["run", rekon_test_artifacts::APP, "--kubeconfig"])
        .arg(kubeconfig)
        .arg("--config")
        .arg(config)
        .args([
            "--leader-elect",
            "--identity",
            identity,
            "--shard",
            "app=uid",
        ])
        .args(LEASE)
        .args(["--metrics-addr", &format!("127.0.0.1:{port}")])
        .env("REKON_CACHE_DIR", cache)
        .env(
            "RUST_LOG",
            std::env::var("REKON_SHARDED_LOG").unwrap_or_else(|_| "warn".to_string()),
        )
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("starting rekon run");
    Replica { child, port }
}

/// Waits until `members` claim their slots of the hash space.
async fn settled(client: &kube::Client, members: &[&str]) {
    let leases: Api<Lease> = Api::namespaced(client.clone(), "default");
    let started = Instant::now();
    loop {
        let listed = leases
            .list(&ListParams::default().labels("rekon.dev/shard-group"))
            .await
            .map(|l| l.items)
            .unwrap_or_default();
        let claim = |who: &str| {
            listed.iter().find_map(|l| {
                let spec = l.spec.as_ref()?;
                (spec.holder_identity.as_deref() == Some(who))
                    .then(|| {
                        l.metadata
                            .annotations
                            .as_ref()?
                            .get("rekon.dev/shard-ranges")
                    })
                    .flatten()
                    .and_then(|t| ShardRanges::parse(t))
            })
        };
        if members
            .iter()
            .all(|m| claim(m) == Some(ShardRanges::assigned(members, m)))
        {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the ring did not settle on {members:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until every App named in `names` shows `generation` observed,
/// following a watch (a list polled in a loop would load the API server
/// the figure measures).
async fn observed(apps: &Api<DynamicObject>, names: &[String], generation: i64) {
    let started = Instant::now();
    let wanted: HashSet<&str> = names.iter().map(String::as_str).collect();
    let done_at = |a: &DynamicObject| a.data["status"]["observedGeneration"] == generation;
    loop {
        let listed = apps
            .list(&ListParams::default())
            .await
            .expect("listing Apps");
        let mut done: HashSet<String> = listed
            .items
            .iter()
            .filter(|a| done_at(a))
            .filter_map(|a| a.metadata.name.clone())
            .filter(|n| wanted.contains(n.as_str()))
            .collect();
        if done.len() == wanted.len() {
            return;
        }
        let version = listed.metadata.resource_version.unwrap_or_default();
        let mut events = apps
            .watch(&WatchParams::default().timeout(60), &version)
            .await
            .expect("watching Apps")
            .boxed();
        while let Some(Ok(event)) = events.next().await {
            let app = match event {
                WatchEvent::Added(app) | WatchEvent::Modified(app) => app,
                WatchEvent::Error(_) => break,
                _ => continue,
            };
            let Some(name) = app.metadata.name.clone() else {
                continue;
            };
            if !wanted.contains(name.as_str()) {
                continue;
            }
            if done_at(&app) {
                done.insert(name);
            } else {
                done.remove(&name);
            }
            if done.len() == wanted.len() {
                return;
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "Apps not reconciled at generation {generation}"
        );
    }
}

/// Runs the sharded phase with `count` Apps and prints its figures.
pub async fn run(client: &kube::Client, rekon: &str, dir: &Path, count: usize) {
    let kubeconfig = dir.join("kubeconfig");
    let config = dir.join("rekon.yaml");
    let cache = dir.join("cache");
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    let ns = serde_json::from_value(json!({"metadata": {"name": NAMESPACE}})).expect("a Namespace");
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .expect("creating the namespace");
    let mut replicas: Vec<Replica> = REPLICAS
        .iter()
        .map(|id| start(rekon, &kubeconfig, &config, &cache, id))
        .collect();
    settled(client, &REPLICAS).await;

    let apps = apps_api(client, NAMESPACE);
    let names: Vec<String> = (0..count).map(|i| format!("app-{i:05}")).collect();
    futures::stream::iter(names.clone())
        .for_each_concurrent(16, |name| {
            let apps = apps.clone();
            async move {
                let app: DynamicObject = serde_json::from_value(json!({
                    "apiVersion": "demo.rekon.dev/v1", "kind": "App",
                    "metadata": {"name": name},
                    "spec": {"image": "registry.example/shop/web:1.27.3", "replicas": 1, "port": 8080},
                }))
                .expect("an App");
                apps.create(&PostParams::default(), &app).await.expect("creating an App");
            }
        })
        .await;
    observed(&apps, &names, 1).await;
    // The gauges are set every second.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let cached: Vec<f64> = replicas
        .iter()
        .map(|r| {
            http_get(r.port, "/metrics")
                .unwrap_or_default()
                .lines()
                .find(|l| {
                    l.starts_with("rekon_shard_objects{")
                        && l.contains("kind=\"App.demo.rekon.dev/v1\"")
                })
                .and_then(|l| l.rsplit(' ').next()?.parse().ok())
                .unwrap_or(f64::NAN)
        })
        .collect();
    let largest = cached.iter().copied().fold(0.0, f64::max);

    // The last replica killed; what it owned changed at once.
    let listed = apps
        .list(&ListParams::default())
        .await
        .expect("listing Apps")
        .items;
    let dead = REPLICAS.len() - 1;
    let orphaned: Vec<String> = listed
        .iter()
        .filter(|a| {
            let uid = a.metadata.uid.as_deref().unwrap_or_default();
            ShardRanges::assigned(&REPLICAS, REPLICAS[dead]).contains(shard_point(uid))
        })
        .filter_map(|a| a.metadata.name.clone())
        .collect();
    let killed = Instant::now();
    drop(replicas.pop());
    if std::env::var("REKON_SHARDED_LOG").is_ok() {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        eprintln!("sharded: killed at {:.3} (unix)", now.as_secs_f64());
    }
    futures::stream::iter(orphaned.clone())
        .for_each_concurrent(16, |name| {
            let apps = apps.clone();
            async move {
                apps.patch(
                    &name,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"spec": {"replicas": 2}})),
                )
                .await
                .expect("editing an App");
            }
        })
        .await;
    observed(&apps, &orphaned, 2).await;
    let handoff = killed.elapsed().as_secs_f64();
    drop(replicas);

    emit("sharded_replicas", REPLICAS.len() as f64, "count");
    emit("sharded_apps", count as f64, "count");
    emit("sharded_cache_fraction", largest / count as f64, "ratio");
    emit("sharded_lease_duration_s", LEASE_S, "s");
    emit("sharded_handoff_s", handoff, "s");
    eprintln!(
        "sharded: Apps cached per replica {cached:?} of {count}; {} Apps of the killed replica reconciled elsewhere {handoff:.2} s after the kill",
        orphaned.len()
    );
}
