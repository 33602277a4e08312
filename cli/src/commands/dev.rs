//! `rekon dev`: the embedded in-memory API server, the manifests applied,
//! and the modules running against it, until SIGINT/SIGTERM; in real mode
//! (`--kube-assets DIR` or `KUBEBUILDER_ASSETS`), the same on a real
//! kube-apiserver + etcd it starts ([`run_real`]).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use rekon_host::Host;

use super::real::{Direct, Real, ServerArgs};
use crate::common::{ConfigMapArgs, client_from, read_documents, signals, with_modules};
use crate::global::{Global, engine_config};

/// `rekon dev [MODULE]...`.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// Module files (.wasm) to run against the embedded API server.
    modules: Vec<PathBuf>,
    /// A directory whose `*.wasm` files are modules, watched: changes are loaded live.
    #[arg(long = "modules")]
    module_dir: Vec<PathBuf>,
    /// Serve only the API server, run no module.
    #[arg(long)]
    api_only: bool,
    /// Leave the modules' CRDs as they are stored: no storage version
    /// migration (see `rekon migrate`).
    #[arg(long)]
    no_migrate: bool,
    /// TCP port on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Write a kubeconfig for kubectl and kube-rs clients to this file.
    #[arg(long)]
    write_kubeconfig: Option<PathBuf>,
    /// Further resources to serve without a CRD (an aggregated API, a kind
    /// of another version): `APIResourceList` documents, YAML or JSON, as
    /// `kubectl get --raw /apis/GROUP/VERSION` prints them. Repeatable.
    #[arg(long = "api-resources")]
    api_resources: Vec<PathBuf>,
    /// Manifests (CRDs and objects, YAML) to apply at start. Repeatable.
    /// The CRDs the modules ship are installed first, without `-f`.
    #[arg(long = "filename", short = 'f')]
    manifests: Vec<PathBuf>,
    #[command(flatten)]
    configmaps: ConfigMapArgs,
    #[command(flatten)]
    server: ServerArgs,
}

/// The manifests of `-f`: the CRDs, and every other object.
type Manifests = Vec<(PathBuf, serde_json::Value)>;

fn read_manifests(args: &Args) -> anyhow::Result<(Manifests, Manifests)> {
    let mut manifests = Vec::new();
    for path in &args.manifests {
        for document in read_documents(path)? {
            manifests.push((path.clone(), document));
        }
    }
    Ok(manifests
        .into_iter()
        .partition(|(_, document)| document["kind"] == "CustomResourceDefinition"))
}

/// Applies `manifests` through the API server at `url` (server-side apply,
/// field manager `rekon-dev`), as `kubectl apply --server-side` would:
/// each write goes through the modules' webhooks.
fn apply_through(
    url: &str,
    store: &rekon_apiserver::Store,
    manifests: Vec<(PathBuf, serde_json::Value)>,
) -> anyhow::Result<()> {
    let client = rekon_envtest::http::Client::new(url, None, None);
    for (path, document) in manifests {
        let what = || format!("cannot apply an object of {}", path.display());
        let api_version = document["apiVersion"].as_str().unwrap_or_default();
        let kind = document["kind"].as_str().unwrap_or_default();
        let name = document["metadata"]["name"].as_str().unwrap_or_default();
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let res = store
            .resource_for_kind(group, version, kind)
            .with_context(|| format!("{api_version} {kind} is not served"))
            .with_context(what)?;
        let base = if group.is_empty() {
            format!("/api/{version}")
        } else {
            format!("/apis/{group}/{version}")
        };
        if !res.serves("patch") {
            // A read-only kind (an aggregated API's metrics): its objects
            // are fixtures, put straight in the store.
            store
                .seed_object(document)
                .map_err(|e| anyhow::anyhow!("{}", e.message))
                .with_context(what)?;
            continue;
        }
        let namespace = document["metadata"]["namespace"]
            .as_str()
            .unwrap_or("default");
        let path = if res.namespaced {
            format!("{base}/namespaces/{namespace}/{}/{name}", res.plural)
        } else {
            format!("{base}/{}/{name}", res.plural)
        };
        let answer = client
            .request(
                "PATCH",
                &format!("{path}?fieldManager=rekon-dev&force=true"),
                Some("application/apply-patch+yaml"),
                Some(document.to_string().as_bytes()),
            )
            .with_context(what)?;
        if !(200..300).contains(&answer.status) {
            let message = answer.json()["message"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| String::from_utf8_lossy(&answer.body).into_owned());
            return Err(anyhow::anyhow!("{message}")).with_context(what);
        }
    }
    Ok(())
}

pub(super) async fn run(global: &Global, args: &Args) -> anyhow::Result<ExitCode> {
    if let Some(assets) = args.server.assets() {
        return run_real(global, args, &assets).await;
    }
    let stop = signals()?;
    let mut builder = rekon_apiserver::ApiServer::builder().port(args.port);
    for (gate, on) in args.server.gates()? {
        builder = builder
            .feature_gate(&gate, on)
            .map_err(|why| anyhow::anyhow!("--feature-gates: {why}"))?;
    }
    let server = builder
        .start()
        .await
        .context("cannot start the API server")?;
    let store = server.store();
    for path in &args.api_resources {
        for document in read_documents(path)? {
            let served = store
                .serve_api_resources(&document)
                .map_err(anyhow::Error::msg)
                .with_context(|| format!("cannot serve the resources of {}", path.display()))?;
            for res in served {
                tracing::info!(resource = %res.plural, group_version = %res.api_version(), "serving");
            }
        }
    }
    // The CRDs first (the modules may watch their kinds); every other
    // object once the modules serve their webhooks, through the API
    // server, so the admission chain reviews it as on a cluster.
    let (crds, objects) = read_manifests(args)?;
    for (path, document) in crds {
        store
            .apply_object(document)
            .with_context(|| format!("cannot apply an object of {}", path.display()))?;
    }
    let kubeconfig = match &args.write_kubeconfig {
        Some(path) => path.clone(),
        None => std::env::temp_dir().join(format!("rekon-dev-{}.kubeconfig", server.addr().port())),
    };
    server
        .write_kubeconfig(&kubeconfig)
        .context("cannot write the kubeconfig")?;
    eprintln!(
        "rekon dev: Kubernetes API server (in memory) on {url}\n\
         kubeconfig: {path}\n\
         try: KUBECONFIG={path} kubectl get namespaces\n\
         stop with Ctrl-C",
        url = server.url(),
        path = kubeconfig.display(),
    );
    let watch_configmaps = args.configmaps.watch_configmaps && !args.api_only;
    let runs_modules = !args.api_only
        && (!args.modules.is_empty() || !args.module_dir.is_empty() || watch_configmaps);
    let host = if runs_modules {
        let file = kube::config::Kubeconfig::from_yaml(&server.kubeconfig())
            .context("the embedded server's kubeconfig")?;
        let config =
            kube::Config::from_custom_kubeconfig(file, &kube::config::KubeConfigOptions::default())
                .await?;
        let mut builder = Host::builder()
            .client(client_from(config, "dev")?)
            .engine_config(engine_config(global))
            .install_crds(true)
            .migrate(!args.no_migrate)
            .in_process_webhooks();
        for dir in &args.module_dir {
            builder = builder.watch_dir(dir.clone());
        }
        if watch_configmaps {
            builder = builder.watch_configmaps(args.configmaps.configmap_namespaces.clone());
        }
        let host = with_modules(builder, &args.modules)?.start().await?;
        // Writes go through the modules' admission webhooks, and custom
        // resources through their conversions, as on a cluster.
        server.set_admission(Some(std::sync::Arc::new(rekon_offline::ModuleAdmission(
            host.webhooks(),
        ))));
        let converter: std::sync::Arc<dyn rekon_apiserver::Converter> = std::sync::Arc::new(
            rekon_offline::ModuleConversions::new(host.webhook_modules(), host.metrics_handle()),
        );
        let modules = host.webhook_modules();
        let store = server.store();
        store.set_converter(Some(converter.clone()));
        tokio::spawn(async move {
            // What the converter converts changes with the modules.
            let mut changes = modules.subscribe();
            while changes.changed().await.is_ok() {
                store.set_converter(Some(converter.clone()));
            }
        });
        Some(host)
    } else {
        None
    };
    let url = server.url();
    let store = server.store();
    let applied = tokio::task::spawn_blocking(move || apply_through(&url, &store, objects))
        .await
        .context("applying the manifests")?;
    // An object refused stops `rekon dev`, in the same order as Ctrl-C:
    // the host first, so it never watches a server that has gone.
    if applied.is_ok() {
        stop.await;
    }
    if let Some(host) = host {
        tracing::info!("shutting down: finishing reconciles in flight");
        host.shutdown().await;
    }
    server.shutdown().await;
    applied.map(|()| ExitCode::SUCCESS)
}

/// `rekon dev` in real mode: the same, on a kube-apiserver and etcd (and
/// kube-controller-manager) started from `assets`; the modules' webhooks
/// served over HTTPS on 127.0.0.1 and published to it as on a cluster
/// (webhook configurations and CRD conversions with their caBundle).
async fn run_real(global: &Global, args: &Args, assets: &Path) -> anyhow::Result<ExitCode> {
    if !args.api_resources.is_empty() {
        anyhow::bail!(
            "--api-resources serves kinds without a server behind them: the in-memory server only (add --embedded)"
        );
    }
    if args.port != 0 {
        anyhow::bail!("--port chooses the in-memory server's port: a real one picks its own");
    }
    let stop = signals()?;
    let (crds, objects) = read_manifests(args)?;
    let real = Real::start_with(assets, &args.server.gates()?).await?;
    let client = real.client("dev").await?;
    let direct = Direct::new(client.clone());
    for (path, document) in &crds {
        direct
            .apply(document, "rekon-dev")
            .await
            .with_context(|| format!("cannot apply an object of {}", path.display()))?;
    }
    let kubeconfig = match &args.write_kubeconfig {
        Some(path) => path.clone(),
        None => std::env::temp_dir().join(format!("rekon-dev-{}.kubeconfig", std::process::id())),
    };
    std::fs::write(&kubeconfig, real.cluster.kubeconfig())
        .with_context(|| format!("cannot write the kubeconfig {}", kubeconfig.display()))?;
    eprintln!(
        "rekon dev: Kubernetes API server (real: {what}; ready in {took:.1} s) on {url}\n\
         etcd: {etcd} (objects as stored: POST /v3/kv/range)\n\
         kubeconfig: {path}\n\
         try: KUBECONFIG={path} kubectl get namespaces\n\
         stop with Ctrl-C (the API server stops and its data goes with it)",
        what = real.what,
        took = real.took.as_secs_f64(),
        url = real.cluster.url(),
        etcd = real.cluster.etcd_url(),
        path = kubeconfig.display(),
    );
    let watch_configmaps = args.configmaps.watch_configmaps && !args.api_only;
    let runs_modules = !args.api_only
        && (!args.modules.is_empty() || !args.module_dir.is_empty() || watch_configmaps);
    let host = if runs_modules {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .context("cannot find a free port for the webhook server")?
            .port();
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        let webhooks = rekon_host::webhook::WebhookServerConfig::new(
            addr,
            rekon_host::webhook::Endpoint::Url(format!("https://127.0.0.1:{port}")),
            "default",
        );
        let mut builder = Host::builder()
            .client(client)
            .engine_config(engine_config(global))
            .install_crds(true)
            .migrate(!args.no_migrate)
            .webhooks(webhooks);
        for dir in &args.module_dir {
            builder = builder.watch_dir(dir.clone());
        }
        if watch_configmaps {
            builder = builder.watch_configmaps(args.configmaps.configmap_namespaces.clone());
        }
        let host = with_modules(builder, &args.modules)?.start().await?;
        // The objects go through the modules' webhooks, as on a cluster:
        // once the server has them.
        wait_published(&direct, &host).await?;
        Some(host)
    } else {
        None
    };
    let mut applied = Ok(());
    for (path, document) in &objects {
        applied = direct
            .apply(document, "rekon-dev")
            .await
            .map(drop)
            .with_context(|| format!("cannot apply an object of {}", path.display()));
        if applied.is_err() {
            break;
        }
    }
    // An object refused stops `rekon dev`, in the same order as Ctrl-C.
    if applied.is_ok() {
        stop.await;
    }
    if let Some(host) = host {
        tracing::info!("shutting down: finishing reconciles in flight");
        host.shutdown().await;
    }
    tracing::info!("stopping the API server");
    drop(real);
    applied.map(|()| ExitCode::SUCCESS)
}

/// How long the modules' webhook configurations and CRD conversions may
/// take to reach the API server.
const PUBLISHED: std::time::Duration = std::time::Duration::from_secs(30);

/// Waits until the API server holds the webhook configurations and CRD
/// conversions of the modules loaded, and gives it a moment to start
/// calling them (it reads them through its own informers).
async fn wait_published(direct: &Direct, host: &Host) -> anyhow::Result<()> {
    let admission = "admissionregistration.k8s.io";
    let mut waited = Vec::new();
    for module in host.modules().await {
        let webhooks = module.webhooks();
        let name = rekon_host::webhook::objects::configuration_object_name(module.name());
        for (kind, any) in [
            (
                "ValidatingWebhookConfiguration",
                !webhooks.validating.is_empty(),
            ),
            (
                "MutatingWebhookConfiguration",
                !webhooks.mutating.is_empty(),
            ),
        ] {
            if any {
                waited.push((
                    rekon_host::contract::ObjectRef {
                        kind: rekon_host::contract::Gvk {
                            group: admission.into(),
                            version: "v1".into(),
                            kind: kind.into(),
                        },
                        namespace: None,
                        name: name.clone(),
                    },
                    None,
                ));
            }
        }
        let crds = module.crds().await.map(<[_]>::to_vec).unwrap_or_default();
        for conversion in &webhooks.conversions {
            let crd = crds.iter().find(|crd| {
                crd["spec"]["group"] == conversion.kind.group.as_str()
                    && crd["spec"]["names"]["kind"] == conversion.kind.kind.as_str()
            });
            if let Some(crd_name) = crd.and_then(|c| c["metadata"]["name"].as_str()) {
                waited.push((
                    rekon_host::contract::ObjectRef {
                        kind: rekon_host::contract::Gvk {
                            group: "apiextensions.k8s.io".into(),
                            version: "v1".into(),
                            kind: "CustomResourceDefinition".into(),
                        },
                        namespace: None,
                        name: crd_name.to_string(),
                    },
                    Some("/spec/conversion/strategy"),
                ));
            }
        }
    }
    if waited.is_empty() {
        return Ok(());
    }
    let deadline = std::time::Instant::now() + PUBLISHED;
    for (target, field) in &waited {
        loop {
            let there = match direct.cluster().get(target).await {
                Ok(text) => match field {
                    None => true,
                    Some(pointer) => serde_json::from_str::<serde_json::Value>(&text)
                        .is_ok_and(|o| o.pointer(pointer) == Some(&serde_json::json!("Webhook"))),
                },
                Err(_) => false,
            };
            if there {
                break;
            }
            if std::time::Instant::now() > deadline {
                anyhow::bail!(
                    "the modules' webhooks are not published after {PUBLISHED:?} ({} {} is missing)",
                    target.kind.kind,
                    target.name
                );
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    }
    // The API server reads webhook configurations and CRDs through its
    // informers: what was just written is called a moment later.
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    Ok(())
}
