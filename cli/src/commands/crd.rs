//! `rekon crd`: the CustomResourceDefinitions a module ships (contract
//! 0.4.0), as YAML for `kubectl apply -f -` (or JSON).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;

use crate::common::{load, say};
use crate::global::{Global, engine};

/// `rekon crd MODULE`.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The component (.wasm).
    module: PathBuf,
    /// Print a JSON `List` instead of YAML documents.
    #[arg(long)]
    json: bool,
}

pub(super) async fn run(global: &Global, args: &Args) -> anyhow::Result<ExitCode> {
    let module = load(&engine(global)?, &args.module).await?;
    let crds = module
        .crds()
        .await
        .with_context(|| format!("the CRDs of {}", args.module.display()))?;
    if crds.is_empty() {
        eprintln!(
            "{} ships no CustomResourceDefinition (contract {})",
            args.module.display(),
            module.contract_version()
        );
        return Ok(ExitCode::SUCCESS);
    }
    if args.json {
        let list = serde_json::json!({ "apiVersion": "v1", "kind": "List", "items": crds });
        say(serde_json::to_string_pretty(&list)?)?;
        return Ok(ExitCode::SUCCESS);
    }
    let documents = crds
        .iter()
        .map(serde_yaml_ng::to_string)
        .collect::<Result<Vec<_>, _>>()?;
    say(format!("---\n{}", documents.join("---\n")).trim_end())?;
    Ok(ExitCode::SUCCESS)
}
