//! Embedding rekon in your own program: a [`Host`] with one module, run
//! against a cluster until the work is done.
//!
//! Here the cluster is rekon's in-memory API server, so the example runs
//! anywhere; with a real cluster, use `kube::Client::try_default()` instead
//! and leave the server out. Run it with
//! `cargo run -p rekon-host --example embed [-- APP.wasm]` (the `app`
//! guest by default): it applies the App CRD and an App, and prints the
//! Deployment the module made.

use std::time::Duration;

use anyhow::Context as _;
use kube::api::{Api, DynamicObject, GroupVersionKind, PostParams};
use kube::discovery::ApiResource;
use rekon_host::{ControllerConfig, EngineConfig, Host};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let module = std::env::args()
        .nth(1)
        .unwrap_or_else(|| rekon_test_artifacts::APP.to_string());
    let bytes = std::fs::read(&module).with_context(|| format!("cannot read {module}"))?;

    // The cluster: rekon's in-memory API server, with the App CRD.
    let server = rekon_apiserver::ApiServer::builder().start().await?;
    let crd = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../guests/app/manifests/crd.yaml"
    ))?;
    server.store().apply_object(serde_yaml::from_str(&crd)?)?;
    let kubeconfig = kube::config::Kubeconfig::from_yaml(&server.kubeconfig())?;
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await?;
    let client = kube::Client::try_from(config)?;

    // The host: one module, two reconciles at once, no compile cache.
    let host = Host::builder()
        .client(client.clone())
        .engine_config(EngineConfig::default().cache_dir(None))
        .controller_config(ControllerConfig::default().concurrency(2))
        .module(module.as_str(), bytes)
        .start()
        .await?;
    for module in host.modules().await {
        println!(
            "running module {} {}",
            module.name(),
            module.manifest().version
        );
    }

    // An App, and the Deployment its reconcile makes.
    let apps = Api::<DynamicObject>::namespaced_with(
        client.clone(),
        "default",
        &ApiResource::from_gvk(&GroupVersionKind::gvk("demo.rekon.dev", "v1", "App")),
    );
    let app = serde_json::from_value(serde_json::json!({
        "apiVersion": "demo.rekon.dev/v1", "kind": "App",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"image": "nginx:1.27", "replicas": 2, "port": 8080},
    }))?;
    apps.create(&PostParams::default(), &app).await?;
    let deployments: Api<k8s_openapi::api::apps::v1::Deployment> =
        Api::namespaced(client, "default");
    let deployment = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            if let Some(deployment) = deployments.get_opt("web").await? {
                return anyhow::Ok(deployment);
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .context("no Deployment within 30 s")??;
    let replicas = deployment.spec.replicas.unwrap_or_default();
    println!("reconciled: Deployment default/web with {replicas} replicas");

    host.shutdown().await;
    server.shutdown().await;
    Ok(())
}
