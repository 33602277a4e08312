//! The phases with one operator on the real cluster: the App CRD
//! installed, then create, update, idle and delete, each until the Apps
//! settle.

use std::time::{Duration, Instant};

use futures::StreamExt as _;
use kube::api::{Api, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use super::operator::{Figures, Operator, SMAPS_ENV, peak_rss_mb, smaps};
use crate::process::cpu_seconds;
use crate::server::observed;

/// Installs the App CRD and waits until it is served.
pub async fn install_crd(client: &kube::Client) {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../guests/app/manifests/crd.yaml"
    ))
    .expect("the App CRD");
    let crd: Value = serde_yaml_ng::from_str(&text).expect("the App CRD is YAML");
    let crds: Api<DynamicObject> = Api::all_with(
        client.clone(),
        &kube::api::ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
        )),
    );
    let object: DynamicObject = serde_json::from_value(crd).expect("a CRD object");
    crds.create(&PostParams::default(), &object)
        .await
        .expect("creating the App CRD");
    // Until the server serves Apps.
    let apps = apps_api(client, "default");
    let started = Instant::now();
    while apps.list(&ListParams::default()).await.is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "Apps are not served"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

pub fn apps_api(client: &kube::Client, namespace: &str) -> Api<DynamicObject> {
    Api::namespaced_with(
        client.clone(),
        namespace,
        &kube::api::ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk(
            "demo.rekon.dev",
            "v1",
            "App",
        )),
    )
}

/// Waits until `done` holds for the Apps of `namespace` and `operator` has
/// made no reconcile for a second; returns when `done` first held.
pub async fn settle(
    apps: &Api<DynamicObject>,
    operator: &mut Operator,
    what: &str,
    done: impl Fn(&[Value]) -> bool,
) -> Instant {
    let started = Instant::now();
    loop {
        let listed = apps.list(&ListParams::default()).await.map(|l| {
            l.items
                .into_iter()
                .map(|o| serde_json::to_value(o).unwrap_or_default())
                .collect::<Vec<_>>()
        });
        if listed.is_ok_and(|items| done(&items)) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "the operator did not finish {what}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    let done_at = Instant::now();
    let mut seen = operator.reconciles();
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let now = operator.reconciles();
        if now == seen {
            return done_at;
        }
        seen = now;
    }
}

/// The phases with one operator, in `namespace`; stops it.
pub async fn phases(
    client: &kube::Client,
    mut operator: Operator,
    namespace: &str,
    count: usize,
    idle: Duration,
) -> Figures {
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    let ns: k8s_openapi::api::core::v1::Namespace =
        serde_json::from_value(json!({"metadata": {"name": namespace}})).expect("a Namespace");
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .expect("creating the namespace");
    let apps = apps_api(client, namespace);
    let pid = operator.pid();
    let mut figures = Figures::default();
    let name = |i: usize| format!("app-{i:05}");

    // Create.
    let (cpu, reconciles) = (cpu_seconds(&pid), operator.reconciles());
    let created = futures::stream::iter(0..count).for_each_concurrent(16, |i| {
        let apps = apps.clone();
        async move {
            let app: DynamicObject = serde_json::from_value(json!({
                "apiVersion": "demo.rekon.dev/v1", "kind": "App",
                "metadata": {"name": name(i)},
                "spec": {"image": "registry.example/shop/web:1.27.3", "replicas": 2, "port": 8080},
            }))
            .expect("an App");
            apps.create(&PostParams::default(), &app)
                .await
                .expect("creating an App");
        }
    });
    created.await;
    settle(&apps, &mut operator, "creating", |items| {
        items.len() == count && items.iter().all(observed)
    })
    .await;
    figures.create_cpu_s = cpu_seconds(&pid) - cpu;
    figures.create_reconciles = operator.reconciles() - reconciles;

    // Update.
    let (cpu, reconciles) = (cpu_seconds(&pid), operator.reconciles());
    futures::stream::iter(0..count)
        .for_each_concurrent(16, |i| {
            let apps = apps.clone();
            async move {
                apps.patch(
                    &name(i),
                    &PatchParams::default(),
                    &Patch::Merge(json!({"spec": {"replicas": 3}})),
                )
                .await
                .expect("editing an App");
            }
        })
        .await;
    settle(&apps, &mut operator, "updating", |items| {
        items
            .iter()
            .all(|a| a["metadata"]["generation"] == 2 && observed(a))
    })
    .await;
    figures.update_cpu_s = cpu_seconds(&pid) - cpu;
    figures.update_reconciles = operator.reconciles() - reconciles;

    // Idle.
    let cpu = cpu_seconds(&pid);
    tokio::time::sleep(idle).await;
    figures.idle_cpu_percent = (cpu_seconds(&pid) - cpu) / idle.as_secs_f64() * 100.0;
    figures.idle_rss_mb = crate::common::rss_mb_of(&pid);
    if std::env::var(SMAPS_ENV).is_ok_and(|v| v == "1") {
        eprintln!(
            "{namespace}: resident memory when idle, by mapping\n{}",
            smaps(&pid)
        );
    }

    // Delete.
    let started = Instant::now();
    apps.delete_collection(&DeleteParams::default(), &ListParams::default())
        .await
        .expect("deleting the Apps");
    let gone = settle(&apps, &mut operator, "deleting", <[Value]>::is_empty).await;
    figures.delete_s = gone.duration_since(started).as_secs_f64();
    let events: Api<k8s_openapi::api::events::v1::Event> =
        Api::namespaced(client.clone(), namespace);
    figures.cleaned_up_events = events
        .list(&ListParams::default())
        .await
        .expect("listing Events")
        .items
        .iter()
        .filter(|e| e.reason.as_deref() == Some("CleanedUp"))
        .count() as f64;
    figures.peak_rss_mb = peak_rss_mb(&pid);
    operator.stop();
    figures
}
