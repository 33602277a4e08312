//! The `rekon` command line: `check`, `reconcile`, `bench` and `dev`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, bail};
use clap::{Parser, Subcommand};
use serde_json::{Value, json};

use crate::{
    Action, DispatchOptions, Engine, EngineConfig, MemoryCluster, Module, Reason, Request,
    manifest_json, object_ref_of,
};

/// rekon: Kubernetes reconcilers as WebAssembly components.
#[derive(Debug, Parser)]
#[command(name = "rekon", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Directory of the compile cache (default: $REKON_CACHE_DIR, else ~/.cache/rekon).
    #[arg(long, global = true, env = "REKON_CACHE_DIR")]
    cache_dir: Option<PathBuf>,
    /// Do not use the compile cache.
    #[arg(long, global = true)]
    no_cache: bool,
    /// Memory cap of one guest instance, in MiB.
    #[arg(long, global = true, default_value_t = 64)]
    max_memory_mib: usize,
    /// CPU deadline of one reconcile, in milliseconds.
    #[arg(long, global = true, default_value_t = 2000)]
    timeout_ms: u64,
    /// Compile modules without optimisation (faster start, slower reconciles).
    #[arg(long, global = true)]
    fast_compile: bool,
    /// Log format on stderr: `text` (human-readable) or `json` (one object per line).
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
}

/// How `rekon pack` compresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum Compress {
    /// zstd (smallest).
    Zstd,
    /// gzip.
    Gzip,
    /// Not compressed.
    None,
}

/// How logs are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum LogFormat {
    /// Human-readable lines (colours on a terminal).
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

// Parsed once per process: the size of the largest variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
enum Command {
    /// Validate a module against the rekon:reconciler world and print its manifest as JSON.
    Check {
        /// The component (.wasm), or the ConfigMap YAML `rekon pack` wrote.
        module: PathBuf,
    },
    /// Write the ConfigMap(s) that ship a module, as YAML for `kubectl apply -f -`.
    Pack {
        /// The component (.wasm).
        module: PathBuf,
        /// The ConfigMap's name (parts are named `<name>-part-<n>`).
        #[arg(long)]
        name: String,
        /// The namespace.
        #[arg(long, default_value = "default")]
        namespace: String,
        /// How to compress the module.
        #[arg(long, value_enum, default_value_t = Compress::Zstd)]
        compress: Compress,
        /// Largest slice of the module in one ConfigMap, in bytes.
        #[arg(long, default_value_t = crate::pack::DEFAULT_PART_SIZE)]
        part_size: usize,
    },
    /// Run one reconcile offline and print, as JSON lines, every host call and its answer, then the result.
    Reconcile {
        /// The component (.wasm).
        module: PathBuf,
        /// The object to reconcile (YAML or JSON).
        #[arg(long)]
        object: PathBuf,
        /// Objects that exist in the cluster beforehand (YAML, several documents allowed). Repeatable.
        #[arg(long = "cluster")]
        fixtures: Vec<PathBuf>,
        /// Report the object as gone (reason `deleted`, no object) instead.
        #[arg(long)]
        deleted: bool,
    },
    /// Measure per-reconcile latency of a module (fresh instance per reconcile).
    Bench {
        /// The component (.wasm).
        module: PathBuf,
        /// The object to reconcile (YAML or JSON).
        #[arg(long)]
        object: PathBuf,
        /// Objects that exist in the cluster beforehand. Repeatable.
        #[arg(long = "cluster")]
        fixtures: Vec<PathBuf>,
        /// How many reconciles to time.
        #[arg(long, default_value_t = 2000)]
        iterations: usize,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Run the modules against a cluster: one controller per module, until SIGTERM.
    Run {
        /// Module files (.wasm).
        modules: Vec<PathBuf>,
        /// A directory whose `*.wasm` files are modules, watched: changes are loaded live.
        #[arg(long = "modules")]
        module_dir: Vec<PathBuf>,
        /// Kubeconfig file (default: in-cluster config, else $KUBECONFIG, else ~/.kube/config).
        #[arg(long, env = "KUBECONFIG")]
        kubeconfig: Option<PathBuf>,
        /// Kubeconfig context (default: the current context).
        #[arg(long)]
        context: Option<String>,
        /// Reconciles at once per module (default: each module's hint, else 1).
        #[arg(long)]
        concurrency: Option<usize>,
        /// The operator's configuration (YAML): per-module concurrency and narrowed permissions.
        #[arg(long)]
        config: Option<PathBuf>,
        /// First retry delay of a failed reconcile, in milliseconds (doubling).
        #[arg(long, default_value_t = 5)]
        backoff_base_ms: u64,
        /// Longest retry delay, in seconds.
        #[arg(long, default_value_t = 1000)]
        backoff_max_s: u64,
        /// Serve /metrics, /healthz and /readyz on this address (e.g. 0.0.0.0:8080).
        #[arg(long)]
        metrics_addr: Option<std::net::SocketAddr>,
        #[command(flatten)]
        leader: LeaderArgs,
        #[command(flatten)]
        configmaps: ConfigMapArgs,
    },
    /// Run the embedded in-memory Kubernetes API server (no cluster needed).
    Dev {
        /// Module files (.wasm) to run against the embedded API server.
        modules: Vec<PathBuf>,
        /// A directory whose `*.wasm` files are modules, watched: changes are loaded live.
        #[arg(long = "modules")]
        module_dir: Vec<PathBuf>,
        /// Serve only the API server, run no module.
        #[arg(long)]
        api_only: bool,
        /// TCP port on 127.0.0.1 (0 picks a free one).
        #[arg(long, default_value_t = 0)]
        port: u16,
        /// Write a kubeconfig for kubectl and kube-rs clients to this file.
        #[arg(long)]
        write_kubeconfig: Option<PathBuf>,
        /// Manifests (CRDs and objects, YAML) to apply at start. Repeatable.
        #[arg(long = "filename", short = 'f')]
        manifests: Vec<PathBuf>,
        #[command(flatten)]
        configmaps: ConfigMapArgs,
    },
}

/// Module ConfigMap flags of `rekon run` and `rekon dev`.
#[derive(Debug, clap::Args)]
struct ConfigMapArgs {
    /// Load modules from ConfigMaps labelled `rekon.dev/module` (`rekon pack` writes them), live.
    #[arg(long)]
    watch_configmaps: bool,
    /// Only in this namespace (repeatable; default: every namespace).
    #[arg(long = "configmap-namespace")]
    configmap_namespaces: Vec<String>,
}

/// Leader election flags of `rekon run`.
#[derive(Debug, clap::Args)]
struct LeaderArgs {
    /// Reconcile only while holding the leader Lease (for several replicas).
    #[arg(long, conflicts_with = "scale_out")]
    leader_elect: bool,
    /// Spread the modules across the replicas: each module reconciles on the
    /// replica holding its own Lease, and each replica holds at most
    /// ceil(modules / replicas) of them.
    #[arg(long)]
    scale_out: bool,
    /// Name of the leader Lease (default `rekon-leader`); with --scale-out,
    /// the prefix of the Leases' names (default `rekon`).
    #[arg(long)]
    lease_name: Option<String>,
    /// Namespace of the leader Lease (default: $POD_NAMESPACE, else `default`).
    #[arg(long, env = "POD_NAMESPACE", default_value = "default")]
    lease_namespace: String,
    /// This replica's identity (default: $POD_NAME, else the host name and process id).
    #[arg(long, env = "POD_NAME")]
    identity: Option<String>,
    /// How long the Lease is valid without renewal.
    #[arg(long, default_value = "15s", value_parser = parse_duration)]
    lease_duration: Duration,
    /// How long a leader keeps leading without renewing.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    renew_deadline: Duration,
    /// How often to try to acquire or renew the Lease.
    #[arg(long, default_value = "2s", value_parser = parse_duration)]
    retry_period: Duration,
}

/// `150ms`, `2s`, `1m`.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let split = text
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .ok_or_else(|| format!("{text:?} needs a unit: ms, s or m"))?;
    let (number, unit) = text.split_at(split);
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration"))?;
    let seconds = match unit {
        "ms" => value / 1000.0,
        "s" => value,
        "m" => value * 60.0,
        _ => return Err(format!("{text:?}: unknown unit {unit:?} (ms, s or m)")),
    };
    Ok(Duration::from_secs_f64(seconds))
}

/// Prints a line of output. A reader that went away (`rekon check m.wasm |
/// head -1`) is not an error: the rest is dropped.
fn say(text: impl std::fmt::Display) -> anyhow::Result<()> {
    use std::io::Write as _;
    match writeln!(std::io::stdout().lock(), "{text}") {
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// Runs the command line; the binary's `main`.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // Long-running commands tell what they do; one-shot commands only warn.
    init_tracing(
        match cli.command {
            Command::Run { .. } | Command::Dev { .. } => "info",
            _ => "warn",
        },
        cli.log_format,
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("building the tokio runtime");
    match runtime.block_on(run(cli)) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn init_tracing(default: &str, format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Text => logs
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .init(),
        LogFormat::Json => logs.json().with_current_span(true).init(),
    }
}

fn engine_config(cli: &Cli) -> EngineConfig {
    let default = EngineConfig::default();
    EngineConfig::default()
        .max_memory_bytes(cli.max_memory_mib << 20)
        .max_reconcile_time(Duration::from_millis(cli.timeout_ms))
        .fast_compile(cli.fast_compile)
        .cache_dir(if cli.no_cache {
            None
        } else {
            cli.cache_dir.clone().or(default.cache_dir)
        })
}

async fn load(engine: &Engine, path: &Path) -> anyhow::Result<Module> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    Module::load(engine, &bytes)
        .await
        .with_context(|| format!("cannot load {}", path.display()))
}

async fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    if let Command::Dev {
        modules,
        module_dir,
        api_only,
        port,
        write_kubeconfig,
        manifests,
        configmaps,
    } = &cli.command
    {
        let (modules, dirs) = if *api_only {
            (Vec::new(), Vec::new())
        } else {
            (modules.clone(), module_dir.clone())
        };
        return dev(
            &cli,
            *port,
            write_kubeconfig.as_deref(),
            manifests,
            &modules,
            &dirs,
            (configmaps.watch_configmaps && !api_only).then_some(&configmaps.configmap_namespaces),
        )
        .await;
    }
    if let Command::Run {
        modules,
        module_dir,
        kubeconfig,
        context,
        concurrency,
        config,
        backoff_base_ms,
        backoff_max_s,
        metrics_addr,
        leader,
        configmaps,
    } = &cli.command
    {
        let config = match config {
            Some(path) => crate::HostConfig::read(path)?,
            None => crate::HostConfig::default(),
        };
        let stop = signals()?;
        let identity = leader
            .identity
            .clone()
            .unwrap_or_else(crate::host::default_identity);
        let client = kube_client(kubeconfig.as_deref(), context.clone(), &identity).await?;
        let mut builder = crate::Host::builder()
            .client(client)
            .identity(identity.clone())
            .engine_config(engine_config(&cli))
            .config(config)
            .backoff(
                Duration::from_millis(*backoff_base_ms),
                Duration::from_secs(*backoff_max_s),
            );
        if let Some(concurrency) = concurrency {
            builder = builder.concurrency(*concurrency);
        }
        if let Some(addr) = metrics_addr {
            builder = builder.metrics_addr(*addr);
        }
        if leader.leader_elect || leader.scale_out {
            if leader.renew_deadline >= leader.lease_duration {
                bail!("--renew-deadline must be shorter than --lease-duration");
            }
            let default_name = if leader.scale_out {
                "rekon"
            } else {
                "rekon-leader"
            };
            let config = crate::LeaderConfig::new(leader.lease_namespace.clone(), identity)
                .name(leader.lease_name.as_deref().unwrap_or(default_name))
                .timing(
                    leader.lease_duration,
                    leader.renew_deadline,
                    leader.retry_period,
                );
            builder = if leader.scale_out {
                builder.scale_out(config)
            } else {
                builder.leader_election(config)
            };
        }
        for dir in module_dir {
            builder = builder.watch_dir(dir.clone());
        }
        if configmaps.watch_configmaps {
            builder = builder.watch_configmaps(configmaps.configmap_namespaces.clone());
        }
        let host = with_modules(builder, modules)?.start().await?;
        tracing::info!(
            modules = host.modules().await.len(),
            refused = host.failures().len(),
            "rekon running"
        );
        stop.await;
        tracing::info!("shutting down: finishing reconciles in flight");
        host.shutdown().await;
        return Ok(ExitCode::SUCCESS);
    }
    let engine = Engine::new(engine_config(&cli))?;
    match &cli.command {
        Command::Dev { .. } | Command::Run { .. } => unreachable!("handled above"),
        Command::Check { module: path } => {
            let bytes =
                std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
            // A component, or the ConfigMaps that ship one or several.
            let modules: Vec<(String, Vec<u8>)> = if bytes.starts_with(b"\0asm") {
                vec![(path.display().to_string(), bytes)]
            } else if let Some(configmaps) = module_configmaps(&bytes) {
                let mut modules = Vec::new();
                for manifest in configmaps.iter().filter(|c| crate::pack::is_manifest(c)) {
                    let name = manifest["metadata"]["name"].as_str().unwrap_or_default();
                    let bytes =
                        crate::pack::assemble(manifest, &configmaps).with_context(|| {
                            format!("cannot assemble the module of {}", path.display())
                        })?;
                    modules.push((format!("{} (ConfigMap {name})", path.display()), bytes));
                }
                modules
            } else {
                vec![(path.display().to_string(), bytes)]
            };
            for (origin, bytes) in modules {
                let module = Module::load(&engine, &bytes)
                    .await
                    .with_context(|| format!("cannot load {origin}"))?;
                let mut out = manifest_json(module.manifest());
                out["digest"] = json!(module.digest());
                say(serde_json::to_string_pretty(&out)?)?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Pack {
            module,
            name,
            namespace,
            compress,
            part_size,
        } => {
            let bytes = std::fs::read(module)
                .with_context(|| format!("cannot read {}", module.display()))?;
            // Refuse to ship what would not load.
            Module::load(&engine, &bytes)
                .await
                .with_context(|| format!("cannot load {}", module.display()))?;
            let encoding = match compress {
                Compress::Zstd => crate::pack::Encoding::Zstd,
                Compress::Gzip => crate::pack::Encoding::Gzip,
                Compress::None => crate::pack::Encoding::None,
            };
            let documents = crate::pack::pack(&bytes, name, namespace, encoding, *part_size)?;
            for document in documents {
                say(format_args!(
                    "---\n{}",
                    serde_yaml::to_string(&document)?.trim_end()
                ))?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Reconcile {
            module,
            object,
            fixtures,
            deleted,
        } => {
            let module = load(&engine, module).await?;
            let (cluster, request) = offline_request(object, fixtures, *deleted)?;
            let outcome = module
                .reconcile(
                    Arc::new(cluster),
                    &request,
                    DispatchOptions { record: true },
                )
                .await;
            for call in &outcome.calls {
                say(serde_json::to_string(call)?)?;
            }
            let (result, code) = match &outcome.result {
                Ok(action) => (json!({ "ok": action_json(action) }), ExitCode::SUCCESS),
                Err(error) => (
                    json!({ "error": {
                        "kind": error.metric_label(),
                        "message": error.to_string(),
                        "retry": error.retry(),
                    }}),
                    ExitCode::from(2),
                ),
            };
            say(json!({ "result": result }))?;
            Ok(code)
        }
        Command::Bench {
            module,
            object,
            fixtures,
            iterations,
            json: as_json,
        } => {
            let module = load(&engine, module).await?;
            let (cluster, request) = offline_request(object, fixtures, false)?;
            let cluster: Arc<dyn crate::Cluster> = Arc::new(cluster);
            for _ in 0..(*iterations / 10).clamp(10, 200) {
                let outcome = module
                    .reconcile(cluster.clone(), &request, DispatchOptions::default())
                    .await;
                if let Err(error) = outcome.result {
                    bail!("the reconcile fails, nothing to measure: {error}");
                }
            }
            let mut samples = Vec::with_capacity(*iterations);
            for _ in 0..*iterations {
                let outcome = module
                    .reconcile(cluster.clone(), &request, DispatchOptions::default())
                    .await;
                samples.push(outcome.elapsed);
            }
            samples.sort();
            let at = |q: f64| {
                samples[((samples.len() as f64 * q) as usize).min(samples.len() - 1)].as_secs_f64()
                    * 1e6
            };
            let (p50, p99) = (at(0.50), at(0.99));
            if *as_json {
                say(json!({ "module": module.name(), "iterations": iterations,
                    "p50_us": p50, "p99_us": p99,
                    "load_ms": module.compile_time().as_secs_f64() * 1e3 }))?;
            } else {
                say(format_args!(
                    "{}: {} reconciles, fresh instance each: p50 {:.1} µs, p99 {:.1} µs \
                     (module loaded in {:.1} ms, {:?})",
                    module.name(),
                    iterations,
                    p50,
                    p99,
                    module.compile_time().as_secs_f64() * 1e3,
                    module.compile_source(),
                ))?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// A kube client from a kubeconfig file and context, or the usual
/// inference; its User-Agent names this replica.
async fn kube_client(
    kubeconfig: Option<&Path>,
    context: Option<String>,
    identity: &str,
) -> anyhow::Result<kube::Client> {
    let options = kube::config::KubeConfigOptions {
        context,
        ..Default::default()
    };
    let config = match kubeconfig {
        Some(path) => {
            let file = kube::config::Kubeconfig::read_from(path)
                .with_context(|| format!("cannot read the kubeconfig {}", path.display()))?;
            kube::Config::from_custom_kubeconfig(file, &options).await?
        }
        None if options.context.is_some() => kube::Config::from_kubeconfig(&options).await?,
        None => kube::Config::infer().await?,
    };
    client_from(config, identity)
}

/// A client with rekon's User-Agent: `rekon/<version> (<identity>)`.
fn client_from(mut config: kube::Config, identity: &str) -> anyhow::Result<kube::Client> {
    let agent = format!("rekon/{} ({identity})", env!("CARGO_PKG_VERSION"));
    config.headers.push((
        http::header::USER_AGENT,
        http::HeaderValue::from_str(&agent).context("the identity is not a valid header value")?,
    ));
    Ok(kube::Client::try_from(config)?)
}

/// Waits for SIGINT or SIGTERM. Install it before starting work, so a
/// signal that arrives during start-up is taken as a request to stop
/// gracefully once started, not as an immediate kill.
fn signals() -> anyhow::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = interrupt.recv() => {}
        }
    })
}

/// Adds each module file to the host.
fn with_modules(
    mut builder: crate::HostBuilder,
    paths: &[PathBuf],
) -> anyhow::Result<crate::HostBuilder> {
    for path in paths {
        let bytes =
            std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        builder = builder.module(path.display().to_string(), bytes);
    }
    Ok(builder)
}

/// `rekon dev`: the in-memory API server, the manifests applied, and the
/// modules running against it, until SIGINT/SIGTERM.
async fn dev(
    cli: &Cli,
    port: u16,
    kubeconfig: Option<&Path>,
    manifests: &[PathBuf],
    modules: &[PathBuf],
    dirs: &[PathBuf],
    configmaps: Option<&Vec<String>>,
) -> anyhow::Result<ExitCode> {
    let stop = signals()?;
    let server = rekon_apiserver::ApiServer::builder()
        .port(port)
        .start()
        .await
        .context("cannot start the API server")?;
    let store = server.store();
    for path in manifests {
        for document in read_documents(path)? {
            store
                .apply_object(document)
                .with_context(|| format!("cannot apply an object of {}", path.display()))?;
        }
    }
    let kubeconfig = match kubeconfig {
        Some(path) => path.to_path_buf(),
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
    let host = if modules.is_empty() && dirs.is_empty() && configmaps.is_none() {
        None
    } else {
        let file = kube::config::Kubeconfig::from_yaml(&server.kubeconfig())
            .context("the embedded server's kubeconfig")?;
        let config =
            kube::Config::from_custom_kubeconfig(file, &kube::config::KubeConfigOptions::default())
                .await?;
        let mut builder = crate::Host::builder()
            .client(client_from(config, "dev")?)
            .engine_config(engine_config(cli));
        for dir in dirs {
            builder = builder.watch_dir(dir.clone());
        }
        if let Some(namespaces) = configmaps {
            builder = builder.watch_configmaps(namespaces.clone());
        }
        Some(with_modules(builder, modules)?.start().await?)
    };
    stop.await;
    if let Some(host) = host {
        tracing::info!("shutting down: finishing reconciles in flight");
        host.shutdown().await;
    }
    server.shutdown().await;
    Ok(ExitCode::SUCCESS)
}

fn action_json(action: &Action) -> Value {
    match action {
        Action::Done => json!("done"),
        Action::RequeueAfter(ms) => json!({ "requeueAfterMs": ms }),
    }
}

/// The module ConfigMaps in a YAML or JSON text, if it holds any.
fn module_configmaps(bytes: &[u8]) -> Option<Vec<Value>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut configmaps = Vec::new();
    for document in serde_yaml::Deserializer::from_str(text) {
        let value: Value = serde::Deserialize::deserialize(document).ok()?;
        if value["kind"] == "ConfigMap"
            && value["metadata"]["labels"][crate::pack::MODULE_LABEL].is_string()
        {
            configmaps.push(value);
        }
    }
    (!configmaps.is_empty()).then_some(configmaps)
}

/// Reads YAML or JSON documents from a file.
pub fn read_documents(path: &Path) -> anyhow::Result<Vec<Value>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut documents = Vec::new();
    for document in serde_yaml::Deserializer::from_str(&text) {
        let value: Value = serde::Deserialize::deserialize(document)
            .with_context(|| format!("{} is not valid YAML", path.display()))?;
        match value {
            Value::Null => {}
            Value::Object(ref map) if map.get("kind").and_then(Value::as_str) == Some("List") => {
                documents.extend(map["items"].as_array().cloned().unwrap_or_default())
            }
            other => documents.push(other),
        }
    }
    Ok(documents)
}

/// Builds the in-memory cluster from fixtures and the object, and the request.
fn offline_request(
    object: &Path,
    fixtures: &[PathBuf],
    deleted: bool,
) -> anyhow::Result<(MemoryCluster, Request)> {
    let cluster = MemoryCluster::default();
    for path in fixtures {
        for document in read_documents(path)? {
            cluster
                .seed(document)
                .with_context(|| format!("cannot add an object of {}", path.display()))?;
        }
    }
    let mut documents = read_documents(object)?;
    if documents.len() != 1 {
        bail!(
            "{} must hold exactly one object, found {}",
            object.display(),
            documents.len()
        );
    }
    let mut document = documents.remove(0);
    let mut target = object_ref_of(&document).with_context(|| {
        format!(
            "{} needs apiVersion, kind and metadata.name",
            object.display()
        )
    })?;
    let namespaced = cluster
        .store()
        .resource_for_kind(&target.kind.group, &target.kind.version, &target.kind.kind)
        .is_none_or(|r| r.namespaced);
    if namespaced && target.namespace.is_none() {
        document["metadata"]["namespace"] = json!("default");
        target.namespace = Some("default".to_string());
    }
    if !namespaced {
        target.namespace = None;
    }
    let stored = if deleted {
        document
    } else {
        cluster
            .seed(document)
            .with_context(|| format!("cannot add the object of {}", object.display()))?
    };
    let request = Request {
        target,
        object: (!deleted).then(|| stored.to_string()),
        reason: if deleted {
            Reason::Deleted
        } else {
            Reason::Manual
        },
        attempt: 0,
    };
    Ok((cluster, request))
}
