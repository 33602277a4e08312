//! The subcommands of `rekon`, one file or folder each (`new`, `run`,
//! `dev`, `check`, `crd`, `pack`, `reconcile`, `replay`, `rollout`, `migrate`,
//! `admit`, `bench`, `test`, `uninstall`), over the library's public API
//! only, like any program that embeds the host; the flags they share and
//! the helpers they share are here.

mod admit;
mod bench;
mod check;
mod crd;
mod dev;
mod migrate;
mod new;
mod pack;
mod real;
mod reconcile;
mod replay;
mod rollout;
mod run;
mod test;
mod uninstall;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::global::{Global, LogFormat};

/// rekon: Kubernetes reconcilers as WebAssembly components.
#[derive(Debug, Parser)]
#[command(name = "rekon", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    global: Global,
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
    /// Storage version migration of a CRD (`rekon migrate CRD`), or where the hosts' migrations stand (`status`).
    Migrate(migrate::Args),
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
    Dev(dev::Args),
}

/// Runs the command line.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // Long-running commands tell what they do; one-shot commands only warn.
    init_tracing(
        match cli.command {
            Command::Run { .. } => "info",
            Command::Dev { .. } => "info",
            _ => "warn",
        },
        cli.global.log_format,
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        // A host gone quiet gives its threads' free memory back.
        .on_thread_park(crate::process::quiet::on_runtime_thread_park)
        .enable_all()
        .build()
        .expect("building the tokio runtime");
    // The command runs on the runtime's workers (this thread only waits),
    // so the memory it frees goes back when the host goes quiet.
    let command = async move {
        match &cli.command {
            Command::Check(args) => check::run(&cli.global, args).await,
            Command::Crd(args) => crd::run(&cli.global, args).await,
            Command::New(args) => new::run(args),
            Command::Pack(args) => pack::run(&cli.global, args).await,
            Command::Reconcile(args) => reconcile::run(&cli.global, args).await,
            Command::Replay(args) => replay::run(&cli.global, args).await,
            Command::Rollout(args) => rollout::run(args).await,
            Command::Migrate(args) => migrate::run(&cli.global, args).await,
            Command::Admit(args) => admit::run(&cli.global, args).await,
            Command::Test(args) => test::run(&cli.global, args).await,
            Command::Bench(args) => bench::run(&cli.global, args).await,
            Command::Run(args) => run::run(&cli.global, args).await,
            Command::Uninstall(args) => uninstall::run(args).await,
            Command::Dev(args) => dev::run(&cli.global, args).await,
        }
    };
    let result = runtime.block_on(async {
        // A host gone quiet gives the allocator's free memory back.
        let quiet = tokio::spawn(crate::process::quiet::trim_when_quiet(
            crate::process::quiet::LOOK_EVERY,
            rekon_host::telemetry::activity,
        ));
        let _quiet = AbortOnDrop(quiet);
        tokio::spawn(command)
            .await
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic.into_panic()))
    });
    // The command has ended: work it left behind on the blocking pool (a
    // module's background optimisation, whose cache write is atomic) does
    // not hold the process up.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    match result {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// Aborts a task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
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
