//! `rekon bench`: per-reconcile latency of a module, a fresh instance each.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::bail;
use rekon_host::Cluster;
use rekon_host::runtime::DispatchOptions;
use serde_json::json;

use super::reconcile::offline_request;
use crate::common::{load, say};
use crate::global::{Global, engine};

/// `rekon bench MODULE --object OBJ`.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The component (.wasm).
    module: PathBuf,
    /// The object to reconcile (YAML or JSON).
    #[arg(long)]
    object: PathBuf,
    /// Objects that exist in the cluster beforehand. Repeatable.
    #[arg(long = "cluster")]
    fixtures: Vec<PathBuf>,
    /// How many reconciles to time.
    #[arg(long, default_value_t = 2000)]
    iterations: usize,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub(super) async fn run(global: &Global, args: &Args) -> anyhow::Result<ExitCode> {
    let module = load(&engine(global)?, &args.module).await?;
    let (cluster, request) = offline_request(&module, &args.object, &args.fixtures, false).await?;
    let cluster: Arc<dyn Cluster> = Arc::new(cluster);
    for _ in 0..(args.iterations / 10).clamp(10, 200) {
        let outcome = module
            .reconcile(cluster.clone(), &request, DispatchOptions::default())
            .await;
        if let Err(error) = outcome.result {
            bail!("the reconcile fails, nothing to measure: {error}");
        }
    }
    let mut samples = Vec::with_capacity(args.iterations);
    for _ in 0..args.iterations {
        let outcome = module
            .reconcile(cluster.clone(), &request, DispatchOptions::default())
            .await;
        samples.push(outcome.elapsed);
    }
    samples.sort();
    let at = |q: f64| {
        samples[((samples.len() as f64 * q) as usize).min(samples.len() - 1)].as_secs_f64() * 1e6
    };
    let (p50, p99) = (at(0.50), at(0.99));
    if args.json {
        say(
            json!({ "module": module.name(), "iterations": args.iterations,
            "p50_us": p50, "p99_us": p99,
            "load_ms": module.compile_time().as_secs_f64() * 1e3 }),
        )?;
    } else {
        say(format_args!(
            "{}: {} reconciles, fresh instance each: p50 {:.1} µs, p99 {:.1} µs \
             (module loaded in {:.1} ms, {:?})",
            module.name(),
            args.iterations,
            p50,
            p99,
            module.compile_time().as_secs_f64() * 1e3,
            module.compile_source(),
        ))?;
    }
    Ok(ExitCode::SUCCESS)
}
