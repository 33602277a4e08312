//! `rekon replay`: recorded reconciles run against another version of a
//! module, offline, and where it differs.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use rekon_host::replay::{Trace, replay};

use super::{Cli, engine, load, say};

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

pub(super) async fn run(cli: &Cli, args: &Args) -> anyhow::Result<ExitCode> {
    let module = load(&engine(cli)?, &args.module).await?;
    let mut traces = Vec::new();
    for path in &args.traces {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        traces.extend(
            Trace::parse_all(&text, &path.display().to_string()).map_err(anyhow::Error::msg)?,
        );
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
            say(format!("  {difference}"))?;
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
