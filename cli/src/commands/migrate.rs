//! `rekon migrate`: the storage version migrations of CRDs — where each
//! stands (`status`, from the progress Leases the hosts keep), or one run
//! by hand against a cluster (`rekon migrate CRD`), as the host leading a
//! module runs it: conversion round trips checked (with `--module`), every
//! object written back in the storage version, then `storedVersions` set.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use rekon_host::cluster::KubeCluster;
use rekon_host::migrate::{
    Converter, MigrateConfig, Migrator, ModuleConverter, Outcome, Plan, progress::Book,
};

use crate::common::{load, say};
use crate::global::{Global, engine};

/// `rekon migrate status` or `rekon migrate CRD`.
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub(super) struct Args {
    #[command(subcommand)]
    command: Option<Command>,
    /// The CRD to migrate (`<plural>.<group>`).
    crd: Option<String>,
    /// Check the module's conversion round trips first (every object, each
    /// served version and back); nothing is written if one loses a field.
    #[arg(long)]
    module: Option<PathBuf>,
    /// Most objects written back per second.
    #[arg(long, default_value_t = 50.0)]
    writes_per_second: f64,
    #[command(flatten)]
    at: At,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Each migration the hosts recorded (progress Leases), and each CRD's
    /// storage version and storedVersions.
    Status {
        #[command(flatten)]
        at: At,
    },
}

/// The cluster, and where the hosts keep their progress Leases.
#[derive(Debug, Clone, clap::Args)]
struct At {
    /// The namespace of the hosts (their Leases).
    #[arg(long, short = 'n', env = "POD_NAMESPACE", default_value = "default")]
    namespace: String,
    /// The prefix of the progress Leases' names (`rekon run --lease-name`;
    /// `rekon-leader` with --leader-elect, `rekon` otherwise).
    #[arg(long, default_value = "rekon")]
    lease_name: String,
    /// The kubeconfig (default: `$KUBECONFIG`, `~/.kube/config`, or in-cluster).
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// The kubeconfig's context.
    #[arg(long)]
    context: Option<String>,
}

pub(super) async fn run(global: &Global, args: &Args) -> anyhow::Result<ExitCode> {
    match (&args.command, &args.crd) {
        (Some(Command::Status { at }), _) => status(at).await,
        (None, Some(crd)) => migrate(global, args, crd).await,
        (None, None) => anyhow::bail!("say which CRD to migrate, or `rekon migrate status`"),
    }
}

async fn client(at: &At) -> anyhow::Result<kube::Client> {
    super::run::kube_client(
        at.kubeconfig.as_deref(),
        at.context.clone(),
        "rekon-migrate",
    )
    .await
}

async fn status(at: &At) -> anyhow::Result<ExitCode> {
    let client = client(at).await?;
    let recorded = Book::new(client.clone(), &at.namespace, &at.lease_name)
        .all()
        .await
        .context("cannot read the progress Leases")?;
    if recorded.is_empty() {
        say(format!(
            "no migration recorded in namespace {}",
            at.namespace
        ))?;
    }
    for progress in recorded {
        let now = match Plan::read(&client, &progress.crd)
            .await
            .map_err(anyhow::Error::msg)?
        {
            Some(plan) => format!("storage {}, storedVersions {:?}", plan.storage, plan.stored),
            None => "the CRD is gone".into(),
        };
        let mut line = format!(
            "{}: {} to {}, {}/{} objects written back; {now}",
            progress.crd, progress.state, progress.storage, progress.migrated, progress.total
        );
        if !progress.message.is_empty() {
            line.push_str(&format!("\n  {}", progress.message));
        }
        say(line)?;
    }
    Ok(ExitCode::SUCCESS)
}

async fn migrate(global: &Global, args: &Args, crd: &str) -> anyhow::Result<ExitCode> {
    let client = client(&args.at).await?;
    let converter: Option<Arc<dyn Converter>> = match &args.module {
        Some(path) => {
            let module = load(&engine(global)?, path).await?;
            let reads = Arc::new(KubeCluster::direct(client.clone()));
            Some(Arc::new(ModuleConverter::new(module, reads)))
        }
        None => None,
    };
    let config = MigrateConfig {
        namespace: args.at.namespace.clone(),
        lease_prefix: args.at.lease_name.clone(),
        writes_per_second: args.writes_per_second,
        ..MigrateConfig::default()
    };
    let outcome = Migrator::new(client, config, converter).migrate(crd).await;
    let (text, code) = match outcome {
        Outcome::NotDue => (
            format!("{crd}: nothing to migrate (storedVersions is the storage version alone)"),
            ExitCode::SUCCESS,
        ),
        Outcome::Done { migrated } => (
            format!(
                "{crd}: {migrated} objects written back; storedVersions is the storage version alone"
            ),
            ExitCode::SUCCESS,
        ),
        Outcome::Refused(why) => (
            format!("{crd}: refused, nothing written: {why}"),
            ExitCode::FAILURE,
        ),
        Outcome::Failed(why) => (
            format!("{crd}: stopped (run it again to resume): {why}"),
            ExitCode::FAILURE,
        ),
    };
    say(text)?;
    Ok(code)
}
