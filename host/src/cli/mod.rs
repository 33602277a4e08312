//! CLI: the `rekon` command, one file per subcommand (`new`, `run`, `dev`, `check`, `crd`, `pack`, `reconcile`, `replay`, `rollout`, `admit`, `bench`, `uninstall`...).
//! May call: the library's public API only, like any program that embeds the host.

mod admit;
mod bench;
mod check;
mod crd;
#[cfg(feature = "dev")]
mod dev;
mod new;
mod pack;
#[cfg(feature = "dev")]
mod real;
mod reconcile;
mod replay;
mod rollout;
mod run;
mod test;
mod uninstall;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use clap::{Parser, Subcommand};
use rekon_host::{Engine, EngineConfig, Module};
use serde_json::Value;

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
    /// No tiered loading: a module missing from the compile cache is
    /// compiled optimised before it serves, instead of serving at once on
    /// baseline code (Winch) while its optimised build compiles.
    #[arg(long, global = true)]
    no_baseline: bool,
    /// Log format on stderr: `text` (human-readable) or `json` (one object per line).
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
}

/// How logs are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum LogFormat {
    /// Human-readable lines (colours on a terminal).
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Validate a module against the rekon:reconciler world and print its manifest as JSON.
    Check(check::Args),
    /// Write a new module's project: source, CRD, example, test cases, README and Makefile.
    New(new::Args),
    /// Print the CustomResourceDefinitions a module ships, as YAML for `kubectl apply -f -`.
    Crd(crd::Args),
    /// Write the ConfigMap(s) that ship a module, as YAML for `kubectl apply -f -`.
    Pack(pack::Args),
    /// Run one reconcile offline and print, as JSON lines, every host call and its answer, then the result.
    Reconcile(reconcile::Args),
    /// Run recorded reconciles against another version of their module, offline; print where it differs.
    Replay(replay::Args),
    /// Safe rollout: what a module's shadow version does (`status`), from a running host.
    Rollout(rollout::Args),
    /// Answer one AdmissionReview or ConversionReview offline with a module's webhooks, as JSON.
    Admit(admit::Args),
    /// Run a module's reconcile against test cases written in YAML; print each failure as a diff.
    Test(test::Args),
    /// Measure per-reconcile latency of a module (fresh instance per reconcile).
    Bench(bench::Args),
    /// Run the modules against a cluster: one controller per module, until SIGTERM.
    Run(Box<run::Args>),
    /// Take back what an installation of rekon published (webhook configurations, CRD conversions, Leases, finalizers), where rekon is gone.
    Uninstall(uninstall::Args),
    /// Run the embedded in-memory Kubernetes API server (no cluster needed), or a real
    /// kube-apiserver + etcd with --kube-assets DIR or KUBEBUILDER_ASSETS.
    #[cfg(feature = "dev")]
    Dev(dev::Args),
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

/// Runs the command line.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // Long-running commands tell what they do; one-shot commands only warn.
    init_tracing(
        match cli.command {
            Command::Run { .. } => "info",
            #[cfg(feature = "dev")]
            Command::Dev { .. } => "info",
            _ => "warn",
        },
        cli.log_format,
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        // A host gone quiet gives its threads' free memory back.
        .on_thread_park(rekon_host::on_runtime_thread_park)
        .enable_all()
        .build()
        .expect("building the tokio runtime");
    // The command runs on the runtime's workers (this thread only waits),
    // so the memory it frees goes back when the host goes quiet.
    let command = async move {
        match &cli.command {
            Command::Check(args) => check::run(&cli, args).await,
            Command::Crd(args) => crd::run(&cli, args).await,
            Command::New(args) => new::run(args),
            Command::Pack(args) => pack::run(&cli, args).await,
            Command::Reconcile(args) => reconcile::run(&cli, args).await,
            Command::Replay(args) => replay::run(&cli, args).await,
            Command::Rollout(args) => rollout::run(args),
            Command::Admit(args) => admit::run(&cli, args).await,
            Command::Test(args) => test::run(&cli, args).await,
            Command::Bench(args) => bench::run(&cli, args).await,
            Command::Run(args) => run::run(&cli, args).await,
            Command::Uninstall(args) => uninstall::run(args).await,
            #[cfg(feature = "dev")]
            Command::Dev(args) => dev::run(&cli, args).await,
        }
    };
    let result = runtime.block_on(async {
        tokio::spawn(command)
            .await
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic.into_panic()))
    });
    match result {
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

/// Prints a line of output. A reader that went away (`rekon check m.wasm |
/// head -1`) is not an error: the rest is dropped.
fn say(text: impl std::fmt::Display) -> anyhow::Result<()> {
    use std::io::Write as _;
    match writeln!(std::io::stdout().lock(), "{text}") {
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// The engine settings the global flags ask for.
fn engine_config(cli: &Cli) -> EngineConfig {
    let default = EngineConfig::default();
    EngineConfig::default()
        .max_memory_bytes(cli.max_memory_mib << 20)
        .max_reconcile_time(Duration::from_millis(cli.timeout_ms))
        .fast_compile(cli.fast_compile)
        .baseline(!cli.no_baseline)
        .cache_dir(if cli.no_cache {
            None
        } else {
            cli.cache_dir.clone().or(default.cache_dir)
        })
}

/// The engine the global flags ask for.
fn engine(cli: &Cli) -> anyhow::Result<Engine> {
    Ok(Engine::new(engine_config(cli))?)
}

/// Reads a file, saying which one could not be read.
fn read(path: &Path) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
}

/// Loads the module at `path`.
async fn load(engine: &Engine, path: &Path) -> anyhow::Result<Module> {
    let bytes = read(path)?;
    Module::load(engine, &bytes)
        .await
        .with_context(|| format!("cannot load {}", path.display()))
}

/// An in-memory cluster (the embedded store) with the CRDs the module
/// ships installed, as `rekon dev` installs them.
async fn cluster_of(module: &Module) -> anyhow::Result<rekon_host::MemoryCluster> {
    let cluster = rekon_host::MemoryCluster::default();
    for crd in module.crds().await.context("the CRDs the module ships")? {
        cluster
            .seed(crd.clone())
            .map_err(|e| anyhow::anyhow!("{}", e.message))
            .with_context(|| format!("cannot install the CRD {}", crd["metadata"]["name"]))?;
    }
    // Custom resources are kept in their storage version and converted by
    // the module's conversions, as `rekon dev` and a cluster do.
    if !module.webhooks().conversions.is_empty() {
        let modules = rekon_host::webhook::WebhookModules::default();
        modules.set(module);
        let converter = rekon_host::webhook::DevConverter::new(
            modules,
            std::sync::Arc::new(rekon_host::Metrics::new()),
        );
        cluster
            .store()
            .set_converter(Some(std::sync::Arc::new(converter)));
    }
    Ok(cluster)
}

/// The request's target and object in the version the module's manifest
/// reconciles (an object given in another version of its primary kind is
/// read back converted, as the host's informer would hand it over).
async fn as_primary(
    module: &Module,
    cluster: &dyn rekon_host::Cluster,
    target: ObjectRefOf,
    object: Option<Value>,
) -> anyhow::Result<(ObjectRefOf, Option<Value>)> {
    let primary = &module.manifest().primary;
    let converts = target.kind.group == primary.group
        && target.kind.kind == primary.kind
        && target.kind.version != primary.version;
    if !converts {
        return Ok((target, object));
    }
    let mut target = target;
    target.kind.version.clone_from(&primary.version);
    let object = match object {
        Some(_) => Some(serde_json::from_str(
            &cluster
                .get(&target)
                .await
                .map_err(|e| anyhow::anyhow!("{}", e.message))
                .with_context(|| format!("cannot read the object as {}", primary.version))?,
        )?),
        None => None,
    };
    Ok((target, object))
}

type ObjectRefOf = rekon_host::ObjectRef;

/// Reads YAML or JSON documents from a file (a `List` gives its items).
fn read_documents(path: &Path) -> anyhow::Result<Vec<Value>> {
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

/// Adds each module file to the host.
fn with_modules(
    mut builder: rekon_host::HostBuilder,
    paths: &[PathBuf],
) -> anyhow::Result<rekon_host::HostBuilder> {
    for path in paths {
        builder = builder.module(path.display().to_string(), read(path)?);
    }
    Ok(builder)
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
