//! `rekon pack`: the ConfigMaps that ship a module.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use rekon_host::{Module, pack};

use crate::common::{read, say};
use crate::global::{Global, engine};

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

/// `rekon pack MODULE --name NAME`.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
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
    #[arg(long, default_value_t = pack::DEFAULT_PART_SIZE)]
    part_size: usize,
    /// How the version runs: `serve`, or `shadow` beside the serving
    /// version (annotation `rekon.dev/rollout: shadow`).
    #[arg(long, value_enum, default_value_t = RolloutMode::Serve)]
    rollout: RolloutMode,
    /// The share of objects (0 to 100) the shadow serves live, as a
    /// canary (`rekon.dev/canary`); implies `--rollout shadow`.
    #[arg(long, value_parser = clap::value_parser!(u8).range(0..=100))]
    canary: Option<u8>,
    /// Promote the shadow once this many of its reconciles in a row agree
    /// (`rekon.dev/promote-after`).
    #[arg(long)]
    promote_after: Option<u64>,
    /// Drop the shadow at its first difference
    /// (`rekon.dev/abort-on-difference`).
    #[arg(long)]
    abort_on_difference: bool,
    /// Drop the shadow above this share of failed reconciles, `0.05` or
    /// `5%` (`rekon.dev/abort-error-rate`).
    #[arg(long)]
    abort_error_rate: Option<String>,
    /// Record the version's reconciles, keeping this many of the latest
    /// (`rekon.dev/record`).
    #[arg(long)]
    record: Option<usize>,
    /// The canary's steps, shares and pauses: `10%/5m,50%/5m`
    /// (`rekon.dev/steps`); implies `--rollout shadow`.
    #[arg(long)]
    steps: Option<String>,
    /// No automatic promotion before the candidate has run this long, `5m`
    /// (`rekon.dev/min-soak`).
    #[arg(long)]
    min_soak: Option<String>,
}

/// Whether `text` is a duration as the host reads one (`90s`, `5m`, `1h30m`).
fn duration(text: &str) -> bool {
    let text = text.trim();
    !text.is_empty()
        && text.split_inclusive(['h', 'm', 's']).all(|part| {
            let number = part.trim_end_matches(['h', 'm', 's']);
            !number.is_empty() && number.chars().all(|c| c.is_ascii_digit() || c == '.')
        })
}

/// How a packed version runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum RolloutMode {
    /// It serves.
    Serve,
    /// It shadows the serving version of its module.
    Shadow,
}

impl Args {
    /// The head ConfigMap's annotations these flags ask for.
    fn annotations(&self) -> anyhow::Result<Vec<(&'static str, String)>> {
        let shadow =
            self.rollout == RolloutMode::Shadow || self.canary.is_some() || self.steps.is_some();
        let mut annotations = Vec::new();
        if shadow {
            annotations.push((pack::ROLLOUT_ANNOTATION, "shadow".to_string()));
        } else if self.promote_after.is_some()
            || self.abort_on_difference
            || self.abort_error_rate.is_some()
            || self.min_soak.is_some()
        {
            anyhow::bail!(
                "--promote-after, --abort-on-difference, --abort-error-rate and --min-soak are a shadow's policy: add --rollout shadow"
            );
        }
        if let Some(steps) = &self.steps {
            let valid = steps.split(',').all(|step| {
                let (share, pause) = step.split_once('/').unwrap_or((step, "0s"));
                let share = share.trim().trim_end_matches('%').trim().parse::<u8>();
                share.is_ok_and(|s| s <= 100) && duration(pause)
            });
            anyhow::ensure!(valid, "--steps {steps}: not steps (10%/5m,50%/5m)");
            annotations.push((pack::STEPS_ANNOTATION, steps.clone()));
        }
        if let Some(soak) = &self.min_soak {
            anyhow::ensure!(duration(soak), "--min-soak {soak}: not a duration (5m)");
            annotations.push((pack::MIN_SOAK_ANNOTATION, soak.clone()));
        }
        if let Some(canary) = self.canary {
            annotations.push((pack::CANARY_ANNOTATION, canary.to_string()));
        }
        if let Some(n) = self.promote_after {
            anyhow::ensure!(n > 0, "--promote-after must be at least 1");
            annotations.push((pack::PROMOTE_AFTER_ANNOTATION, n.to_string()));
        }
        if self.abort_on_difference {
            annotations.push((pack::ABORT_ON_DIFFERENCE_ANNOTATION, "true".to_string()));
        }
        if let Some(rate) = &self.abort_error_rate {
            let number = rate.trim().trim_end_matches('%').trim().parse::<f64>().ok();
            let share = number.map(|n| if rate.contains('%') { n / 100.0 } else { n });
            anyhow::ensure!(
                share.is_some_and(|s| (0.0..=1.0).contains(&s)),
                "--abort-error-rate {rate}: not a share (0.05 or 5%)"
            );
            annotations.push((pack::ABORT_ERROR_RATE_ANNOTATION, rate.trim().to_string()));
        }
        if let Some(last) = self.record {
            annotations.push((pack::RECORD_ANNOTATION, last.to_string()));
        }
        Ok(annotations)
    }
}

pub(super) async fn run(global: &Global, args: &Args) -> anyhow::Result<ExitCode> {
    let annotations = args.annotations()?;
    let engine = engine(global)?;
    let bytes = read(&args.module)?;
    // Refuse to ship what would not load.
    Module::load(&engine, &bytes)
        .await
        .with_context(|| format!("cannot load {}", args.module.display()))?;
    let encoding = match args.compress {
        Compress::Zstd => pack::Encoding::Zstd,
        Compress::Gzip => pack::Encoding::Gzip,
        Compress::None => pack::Encoding::None,
    };
    let mut documents = pack::pack(
        &bytes,
        &args.name,
        &args.namespace,
        encoding,
        args.part_size,
    )?;
    for head in documents.iter_mut().filter(|d| pack::is_manifest(d)) {
        for (key, value) in &annotations {
            head["metadata"]["annotations"][*key] = serde_json::Value::String(value.clone());
        }
    }
    for document in documents {
        say(format_args!(
            "---\n{}",
            serde_yaml_ng::to_string(&document)?.trim_end()
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}
