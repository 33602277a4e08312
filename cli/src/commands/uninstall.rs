//! `rekon uninstall`: takes back what an installation of rekon published
//! (webhook configurations, CRD conversions, Leases), for a cluster where
//! rekon is already gone, or was deleted while none of its replicas ran.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use rekon_host::webhook::uninstall::Uninstall;

use crate::common::{client_from, say};

/// `rekon uninstall`.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The namespace rekon was installed in (its Leases, its namespaced
    /// guards, and by default its webhook Service).
    #[arg(long, short = 'n', default_value = "rekon-system")]
    namespace: String,
    /// The Service its webhooks were reached through, as
    /// `NAMESPACE/NAME[:PORT]` (default: NAMESPACE/rekon-webhooks).
    #[arg(long)]
    webhook_service: Option<String>,
    /// The URL its webhooks were reached at instead (a host outside the
    /// cluster).
    #[arg(long, conflicts_with = "webhook_service")]
    webhook_url: Option<String>,
    /// Kubeconfig file (default: $KUBECONFIG, else ~/.kube/config, else in-cluster).
    #[arg(long, env = "KUBECONFIG")]
    kubeconfig: Option<PathBuf>,
    /// Kubeconfig context (default: the current context).
    #[arg(long)]
    context: Option<String>,
}

pub(super) async fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let endpoint = super::run::endpoint(
        args.webhook_url.as_deref(),
        args.webhook_service.as_deref(),
        &args.namespace,
    )?;
    let options = kube::config::KubeConfigOptions {
        context: args.context.clone(),
        ..Default::default()
    };
    let config = match &args.kubeconfig {
        Some(path) => {
            let file = kube::config::Kubeconfig::read_from(path)
                .with_context(|| format!("cannot read the kubeconfig {}", path.display()))?;
            kube::Config::from_custom_kubeconfig(file, &options).await?
        }
        None => kube::Config::infer().await?,
    };
    let client = client_from(config, "uninstall")?;
    let report = Uninstall::new(client, &args.namespace, endpoint.clone())
        .run()
        .await;
    let report = match report {
        Ok(report) => report,
        Err(error) => bail!(anyhow::Error::new(error).context(format!(
            "cannot take back everything rekon published for {endpoint}"
        ))),
    };
    let lines = [
        ("deleted", &report.configurations),
        ("conversion set to None", &report.conversions),
        ("deleted Lease", &report.leases),
    ];
    let mut any = false;
    for (what, names) in lines {
        for name in names {
            say(format_args!("{what}: {name}"))?;
            any = true;
        }
    }
    if !any {
        say(format_args!("nothing of rekon's left for {endpoint}"))?;
    }
    Ok(ExitCode::SUCCESS)
}
