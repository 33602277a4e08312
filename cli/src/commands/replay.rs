//! `rekon replay`: recorded reconciles run against another version of a
//! module, offline, and where it differs.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use rekon_host::replay::{Trace, replay};

use crate::common::{load, say};
use crate::global::{Global, engine};

/// `rekon replay TRACE... --module NEW.wasm`.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// Recorded reconciles (JSON lines, as `record:` writes them or the
    /// metrics port serves them at `/recordings/<module>`).
    #[arg(required = true)]
    traces: Vec<PathBuf>,
    /// The version to replay them against (.wasm).
    #[arg(long)]
    module: PathBuf,
}

pub(super) async fn run(global: &Global, args: &Args) -> anyhow::Result<ExitCode> {
    let module = load(&engine(global)?, &args.module).await?;
    let mut traces = Vec::new();
    for path in &args.traces {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        traces.extend(
            Trace::parse_all(&text, &path.display().to_string()).map_err(anyhow::Error::msg)?,
        );
    }
    // A recording made with another contract replays (the host calls are
    // the same), but what only the newer contract offers was never
    // called: say so once per contract.
    let contract = module.contract_version();
    let mut others: std::collections::BTreeMap<&str, usize> = Default::default();
    for trace in traces.iter().filter(|t| t.contract != contract) {
        *others.entry(trace.contract.as_str()).or_default() += 1;
    }
    for (recorded, count) in others {
        say(format!(
            "note: {count} of the reconciles were recorded with contract {recorded}; {} is built for {contract}: calls the one contract has and the other lacks are not in the recording",
            args.module.display()
        ))?;
    }
    let (mut agree, mut differ) = (0, 0);
    for trace in &traces {
        let replayed = replay(&module, trace)
            .await
            .map_err(|why| anyhow::anyhow!("{}: {why}", trace.target_name()))?;
        if replayed.agrees() {
            agree += 1;
            say(format!("agree   {} ({})", replayed.target, replayed.reason))?;
            continue;
        }
        differ += 1;
        say(format!("differ  {} ({})", replayed.target, replayed.reason))?;
        for difference in &replayed.differences {
            for line in difference.lines() {
                say(format!("  {line}"))?;
            }
        }
        for call in &replayed.unanswered {
            say(format!("  not in the recording: {call}"))?;
        }
    }
    say(format!(
        "{agree}/{} recorded reconciles agree ({differ} differ)",
        traces.len()
    ))?;
    Ok(if differ == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
