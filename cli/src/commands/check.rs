//! `rekon check`: validates a module (or the ConfigMaps that ship one) and
//! prints its manifest, webhooks and the CRDs it ships, with the version of the contract and
//! the world it was built for.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use rekon_host::runtime::{manifest_json, webhooks_json};
use rekon_host::{Module, pack};
use serde_json::{Value, json};

use crate::common::{read, say};
use crate::global::{Global, engine};

/// `rekon check MODULE`.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The component (.wasm), or the ConfigMap YAML `rekon pack` wrote.
    module: PathBuf,
}

pub(super) async fn run(global: &Global, args: &Args) -> anyhow::Result<ExitCode> {
    let engine = engine(global)?;
    let path = &args.module;
    let bytes = read(path)?;
    // A component, or the ConfigMaps that ship one or several.
    let modules: Vec<(String, Vec<u8>)> = if bytes.starts_with(b"\0asm") {
        vec![(path.display().to_string(), bytes)]
    } else if let Some(configmaps) = module_configmaps(&bytes) {
        let mut modules = Vec::new();
        for manifest in configmaps.iter().filter(|c| pack::is_manifest(c)) {
            let name = manifest["metadata"]["name"].as_str().unwrap_or_default();
            let bytes = pack::assemble(manifest, &configmaps)
                .with_context(|| format!("cannot assemble the module of {}", path.display()))?;
            modules.push((format!("{} (ConfigMap {name})", path.display()), bytes));
        }
        modules
    } else {
        vec![(path.display().to_string(), bytes)]
    };
    for (origin, bytes) in modules {
        let module = Module::load(&engine, &bytes)
            .await
            .with_context(|| format!("cannot load {origin}"))?;
        let mut out = manifest_json(module.manifest());
        if !module.reconciles()
            && let Some(fields) = out.as_object_mut()
        {
            fields.retain(|key, _| matches!(key.as_str(), "name" | "version" | "permissions"));
        }
        out["digest"] = json!(module.digest());
        out["contract"] = json!(format!("rekon:reconciler@{}", module.contract_version()));
        out["world"] = json!(module.world());
        out["webhooks"] = webhooks_json(module.webhooks());
        let crds = module
            .crds()
            .await
            .with_context(|| format!("the CRDs {origin} ships"))?;
        out["crds"] = crds.iter().map(crd_summary).collect();
        // What a host without a webhook server leaves undone.
        let unserved = rekon_host::webhook::unserved(&module);
        for said in &unserved {
            eprintln!("warning: {said}");
        }
        out["warnings"] = json!(unserved);
        say(serde_json::to_string_pretty(&out)?)?;
    }
    Ok(ExitCode::SUCCESS)
}

/// What `rekon check` says of a CRD a module ships (`rekon crd` prints it
/// whole): its name, scope, versions and storage version.
fn crd_summary(crd: &Value) -> Value {
    let spec = &crd["spec"];
    let versions = spec["versions"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    json!({
        "name": crd["metadata"]["name"],
        "kind": spec["names"]["kind"],
        "scope": spec["scope"],
        "versions": versions.iter().map(|v| &v["name"]).collect::<Vec<_>>(),
        "storage": versions.iter().find(|v| v["storage"] == true).map(|v| &v["name"]),
    })
}

/// The module ConfigMaps in a YAML or JSON text, if it holds any.
fn module_configmaps(bytes: &[u8]) -> Option<Vec<Value>> {
    let text = std::str::from_utf8(bytes).ok()?;
    let mut configmaps = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_str(text) {
        let value: Value = serde::Deserialize::deserialize(document).ok()?;
        if value["kind"] == "ConfigMap"
            && value["metadata"]["labels"][pack::MODULE_LABEL].is_string()
        {
            configmaps.push(value);
        }
    }
    (!configmaps.is_empty()).then_some(configmaps)
}
