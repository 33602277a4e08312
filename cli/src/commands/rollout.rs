//! `rekon rollout`: a module's rollout — which version serves, which is
//! tried beside it, the last decision and its evidence — read from and
//! written to its `Rollout` in the cluster, which every replica follows;
//! or, with `--addr`, what one running host compares live.

use std::io::{Read as _, Write as _};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, bail};
use rekon_host::rollout::RolloutApi;
use rekon_host::rollout::api::UpdateError;
use rekon_host::rollout::resource::{Evidence, RolloutStatus, short};

use crate::common::say;

/// `rekon rollout status|promote|abort MODULE`.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// The module's rollout: the serving version, the candidate (shadow or
    /// canary), what was retired or aborted, the last decision and its
    /// evidence. With `--addr`, one host's live comparison per object,
    /// with a unified diff of each difference (exit code 1 when any
    /// object differs).
    Status {
        /// The module, by its manifest name.
        module: String,
        #[command(flatten)]
        at: At,
    },
    /// Make the candidate the serving version, on every replica: every
    /// object is reconciled once by it (as after a reload), none lost.
    Promote {
        /// The module, by its manifest name.
        module: String,
        /// Why, kept with the decision.
        #[arg(long, default_value = "promoted by the operator")]
        reason: String,
        #[command(flatten)]
        at: At,
    },
    /// Drop the candidate, on every replica; it is not tried again until
    /// its bytes change. The serving version goes on alone.
    Abort {
        /// The module, by its manifest name.
        module: String,
        /// Why, kept with the decision.
        #[arg(long, default_value = "aborted by the operator")]
        reason: String,
        #[command(flatten)]
        at: At,
    },
}

/// Where the rollout is: the cluster (the default), or one host.
#[derive(Debug, clap::Args)]
struct At {
    /// The namespace of the hosts (their `Rollout` objects).
    #[arg(long, short = 'n', env = "POD_NAMESPACE", default_value = "default")]
    namespace: String,
    /// The kubeconfig (default: `$KUBECONFIG`, `~/.kube/config`, or in-cluster).
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// The kubeconfig's context.
    #[arg(long)]
    context: Option<String>,
    /// Ask one running host instead, at its metrics address
    /// (`rekon run --metrics-addr`): its live per-object comparisons.
    #[arg(long)]
    addr: Option<String>,
}

pub(super) async fn run(args: &Args) -> anyhow::Result<ExitCode> {
    let (module, at, command) = match &args.command {
        Command::Status { module, at } => (module, at, None),
        Command::Promote { module, reason, at } => (module, at, Some(("promote", reason))),
        Command::Abort { module, reason, at } => (module, at, Some(("abort", reason))),
    };
    if let Some(addr) = &at.addr {
        return by_host(addr, module, command.map(|(c, _)| c));
    }
    let client = super::run::kube_client(
        at.kubeconfig.as_deref(),
        at.context.clone(),
        "rekon-rollout",
    )
    .await?;
    let api = RolloutApi::new(client, &at.namespace);
    let Some((command, reason)) = command else {
        let Some(status) = api.get(module).await? else {
            bail!(
                "no Rollout for module {module:?} in namespace {}: no host keeps that module's rollout there (see --namespace)",
                at.namespace
            );
        };
        say(describe(module, &status).trim_end())?;
        return Ok(ExitCode::SUCCESS);
    };
    if api.get(module).await?.is_none() {
        bail!(
            "no Rollout for module {module:?} in namespace {}: no host runs that module there (see --namespace)",
            at.namespace
        );
    }
    let now = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let written = api
        .update(module, |status| {
            let decided = if command == "promote" {
                status.promote(None, "operator", reason, Evidence::default(), &now)
            } else {
                status.abort(None, "operator", reason, Evidence::default(), &now)
            };
            decided.map(|()| true)
        })
        .await;
    match written {
        Ok(Some(status)) => {
            say(describe(module, &status).trim_end())?;
            Ok(ExitCode::SUCCESS)
        }
        Ok(None) => Ok(ExitCode::SUCCESS),
        Err(UpdateError::Refused(why)) => bail!("module {module:?}: {why}"),
        Err(error) => Err(error).context(format!("cannot write module {module:?}'s rollout")),
    }
}

/// The state as people read it.
fn describe(module: &str, status: &RolloutStatus) -> String {
    let mut out = String::new();
    let name = |v: &rekon_host::rollout::resource::VersionRef| {
        format!("{} ({}) from {}", v.version, short(&v.digest), v.source)
    };
    let serving = status.serving.as_ref().map_or("none".to_string(), name);
    let phase = status.phase.as_deref().unwrap_or("Serving");
    out.push_str(&format!("module {module}: {phase}; serving {serving}\n"));
    if let Some(candidate) = &status.candidate {
        out.push_str(&format!(
            "candidate {}, {}, since {}\n",
            name(&candidate.version),
            if candidate.canary > 0 {
                format!("canary {}% live", candidate.canary)
            } else {
                "shadow".to_string()
            },
            candidate.since.as_deref().unwrap_or("?")
        ));
    }
    for retired in &status.retired {
        out.push_str(&format!("retired {}\n", name(retired)));
    }
    for aborted in &status.aborted {
        out.push_str(&format!("aborted {}\n", name(aborted)));
    }
    if let Some(decision) = &status.last_decision {
        out.push_str(&format!(
            "last decision: {:?} of {} by {} at {}: {}\n",
            decision.action,
            name(&decision.version),
            decision.by,
            decision.at,
            decision.reason
        ));
        for (figure, value) in &decision.evidence.figures {
            out.push_str(&format!("  {figure}: {value}\n"));
        }
        for difference in &decision.evidence.differences {
            out.push_str(&format!("  differ {}\n", difference.object));
            for line in difference.diff.lines() {
                out.push_str(&format!("    {line}\n"));
            }
        }
    }
    out
}

/// The command asked of one host through its metrics port.
fn by_host(addr: &str, module: &str, command: Option<&str>) -> anyhow::Result<ExitCode> {
    let reach = || format!("cannot reach the host's metrics port at {addr}");
    if let Some(command) = command {
        let (code, body) =
            request(addr, "POST", &format!("/rollout/{module}/{command}")).with_context(reach)?;
        if code != 202 {
            bail!("{}", body.trim_end());
        }
        say(body.trim_end())?;
        return Ok(ExitCode::SUCCESS);
    }
    let (code, body) = request(addr, "GET", &format!("/rollout/{module}")).with_context(reach)?;
    if code != 200 {
        bail!("{}", body.trim_end());
    }
    say(body.trim_end())?;
    let differs = body
        .lines()
        .any(|l| l.starts_with("differ ") || l.starts_with("error "));
    Ok(if differs {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The status code and body of `method path` at `addr` (HTTP/1.0).
fn request(addr: &str, method: &str, path: &str) -> anyhow::Result<(u16, String)> {
    let mut stream = std::net::TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(std::time::Duration::from_secs(10)))?;
    write!(
        stream,
        "{method} {path} HTTP/1.0\r\nHost: {addr}\r\nContent-Length: 0\r\n\r\n"
    )?;
    let mut text = String::new();
    stream.read_to_string(&mut text)?;
    let (head, body) = text
        .split_once("\r\n\r\n")
        .context("the answer is not HTTP")?;
    let code = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .context("the answer has no status code")?;
    Ok((code, body.to_string()))
}
