//! Helpers the subcommands share: output, reading files and modules,
//! the module ConfigMap flags, a kube client with rekon's User-Agent, and
//! the stop signals.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use rekon_host::{Engine, Module};
use serde_json::Value;

/// Prints a line of output. A reader that went away (`rekon check m.wasm |
/// head -1`) is not an error: the rest is dropped.
pub fn say(text: impl std::fmt::Display) -> anyhow::Result<()> {
    use std::io::Write as _;
    match writeln!(std::io::stdout().lock(), "{text}") {
        Err(error) if error.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => Ok(other?),
    }
}

/// Reads a file, saying which one could not be read.
pub fn read(path: &Path) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
}

/// Loads the module at `path`.
pub async fn load(engine: &Engine, path: &Path) -> anyhow::Result<Module> {
    let bytes = read(path)?;
    Module::load(engine, &bytes)
        .await
        .with_context(|| format!("cannot load {}", path.display()))
}

/// Module ConfigMap flags of `rekon run` and `rekon dev`.
#[derive(Debug, clap::Args)]
pub struct ConfigMapArgs {
    /// Load modules from ConfigMaps labelled `rekon.dev/module` (`rekon pack` writes them), live.
    #[arg(long)]
    pub watch_configmaps: bool,
    /// Only in this namespace (repeatable; default: every namespace).
    #[arg(long = "configmap-namespace")]
    pub configmap_namespaces: Vec<String>,
}

/// Reads YAML or JSON documents from a file (a `List` gives its items).
pub fn read_documents(path: &Path) -> anyhow::Result<Vec<Value>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut documents = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(&text) {
        let value: Value = serde::Deserialize::deserialize(document)
            .with_context(|| format!("{} is not valid YAML", path.display()))?;
        match value {
            Value::Null => {}
            Value::Object(ref map) if map.get("kind").and_then(Value::as_str) == Some("List") => {
                documents.extend(map["items"].as_array().cloned().unwrap_or_default())
            }
            other => documents.push(other),
        }
    }
    Ok(documents)
}

/// Adds each module file to the host.
pub fn with_modules(
    mut builder: rekon_host::HostBuilder,
    paths: &[PathBuf],
) -> anyhow::Result<rekon_host::HostBuilder> {
    for path in paths {
        builder = builder.module(path.display().to_string(), read(path)?);
    }
    Ok(builder)
}

/// A client with rekon's User-Agent: `rekon/<version> (<identity>)`.
pub fn client_from(mut config: kube::Config, identity: &str) -> anyhow::Result<kube::Client> {
    let agent = format!("rekon/{} ({identity})", env!("CARGO_PKG_VERSION"));
    config.headers.push((
        http::header::USER_AGENT,
        http::HeaderValue::from_str(&agent).context("the identity is not a valid header value")?,
    ));
    Ok(kube::Client::try_from(config)?)
}

/// Waits for SIGINT or SIGTERM. Install it before starting work, so a
/// signal that arrives during start-up is taken as a request to stop
/// gracefully once started, not as an immediate kill.
pub fn signals() -> anyhow::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = interrupt.recv() => {}
        }
    })
}
