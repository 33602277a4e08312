//! Embedding rekon in your own program: a [`Host`] with one module, run
//! against a cluster until the work is done. It uses the library alone
//! (rekon-host, kube, tokio): no command line, no embedded Kubernetes.
//!
//! It talks to the cluster of your kubeconfig (`KUBECONFIG`, or
//! `~/.kube/config`), as any kube-rs program does. To try it without one,
//! start rekon's embedded API server in another terminal —
//! `cargo run -p rekon -- dev --api-only --write-kubeconfig /tmp/dev.kubeconfig` —
//! then run
//! `KUBECONFIG=/tmp/dev.kubeconfig cargo run -p rekon-host --example embed -- APP.wasm`
//! (the `app` guest, `target/guests/wasm32-wasip2/guest/app.wasm` after
//! `make test` or `cargo build -p rekon-test-artifacts`): the host installs
//! the CRD the module ships, the example applies an App and prints the
//! Deployment the module made.

use std::time::Duration;

use anyhow::Context as _;
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, DynamicObject, GroupVersionKind, PostParams};
use kube::discovery::ApiResource;
use rekon_host::{ControllerConfig, EngineConfig, Host};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let module = std::env::args()
        .nth(1)
        .context("usage: embed APP.wasm (the app guest)")?;
    let bytes = std::fs::read(&module).with_context(|| format!("cannot read {module}"))?;
    let client = kube::Client::try_default()
        .await
        .context("no cluster: set KUBECONFIG")?;

    // The host: one module (its CRD installed first), two reconciles at
    // once, no compile cache.
    let host = Host::builder()
        .client(client.clone())
        .engine_config(EngineConfig::default().cache_dir(None))
        .controller_config(ControllerConfig::default().concurrency(2))
        .install_crds(true)
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
    let deployments: Api<Deployment> = Api::namespaced(client, "default");
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
    Ok(())
}
