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
}

pub(super) async fn run(global: &Global, args: &Args) -> anyhow::Result<ExitCode> {
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
    let documents = pack::pack(
        &bytes,
        &args.name,
        &args.namespace,
        encoding,
        args.part_size,
    )?;
    for document in documents {
        say(format_args!(
            "---\n{}",
            serde_yaml_ng::to_string(&document)?.trim_end()
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}
