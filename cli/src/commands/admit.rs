//! `rekon admit`: one AdmissionReview or ConversionReview answered offline
//! by a module, as the host answers the API server.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context as _, bail};
use rekon_host::Metrics;
use rekon_host::runtime::Phase;
use rekon_host::webhook::chain::{Attributes, Chain, Outcome};
use rekon_host::webhook::{WebhookModules, review};
use rekon_offline::MemoryCluster;
use serde_json::{Value, json};

use crate::common::{load, read_documents, say};
use crate::global::{Global, engine};

/// `rekon admit MODULE --request REVIEW`.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The component (.wasm).
    module: PathBuf,
    /// The AdmissionReview or ConversionReview (YAML or JSON), as the API
    /// server sends it.
    #[arg(long)]
    request: PathBuf,
    /// Call only this webhook of the module (by its name in the module),
    /// and print its AdmissionReview answer. Without it, every matching
    /// mutating then validating webhook runs, as the API server would call
    /// them, and the outcome is printed.
    #[arg(long)]
    webhook: Option<String>,
    /// Objects that exist in the cluster, for the module's reads (YAML,
    /// several documents allowed). Repeatable.
    #[arg(long = "cluster")]
    fixtures: Vec<PathBuf>,
}

pub(super) async fn run(global: &Global, args: &Args) -> anyhow::Result<ExitCode> {
    let module = load(&engine(global)?, &args.module).await?;
    let cluster = MemoryCluster::default();
    for path in &args.fixtures {
        for document in read_documents(path)? {
            cluster
                .seed(document)
                .with_context(|| format!("cannot add an object of {}", path.display()))?;
        }
    }
    let mut documents = read_documents(&args.request)?;
    if documents.len() != 1 {
        bail!("{} must hold exactly one review", args.request.display());
    }
    let review = documents.remove(0);
    let cluster = Arc::new(cluster);
    let ok = |yes: bool| {
        if yes {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        }
    };
    match review["kind"].as_str() {
        Some("ConversionReview") => {
            let (answer, _) = review::convert(&module, cluster, &review).await;
            say(serde_json::to_string_pretty(&answer)?)?;
            Ok(ok(answer["response"]["result"]["status"] == "Success"))
        }
        Some("AdmissionReview") => match &args.webhook {
            Some(name) => {
                let phase = [Phase::Mutating, Phase::Validating]
                    .into_iter()
                    .find(|p| module.webhook(*p, name).is_some())
                    .with_context(|| {
                        format!("module {:?} has no webhook {name:?}", module.name())
                    })?;
                let (answer, _) = review::admit(&module, cluster, phase, name, &review).await;
                say(serde_json::to_string_pretty(&answer)?)?;
                Ok(ok(answer["response"]["allowed"] == true))
            }
            None => {
                let mut attributes = Attributes::from_review(&review)?;
                if let Some(namespace) = &attributes.namespace {
                    let ns = rekon_host::contract::ObjectRef {
                        kind: rekon_host::contract::Gvk {
                            group: String::new(),
                            version: "v1".into(),
                            kind: "Namespace".into(),
                        },
                        namespace: None,
                        name: namespace.clone(),
                    };
                    if let Ok(text) = rekon_host::Cluster::get(cluster.as_ref(), &ns).await {
                        let ns: Value = serde_json::from_str(&text)?;
                        attributes.namespace_labels =
                            serde_json::from_value(ns["metadata"]["labels"].clone())
                                .unwrap_or_default();
                    }
                }
                let modules = WebhookModules::default();
                modules.set(&module);
                let chain = Chain::new(modules, cluster, Arc::new(Metrics::new()));
                let answer = chain.run(attributes).await;
                let reviews: Vec<Value> = answer
                    .answers
                    .iter()
                    .map(|(webhook, answer)| json!({"webhook": webhook, "response": answer["response"]}))
                    .collect();
                let (out, allowed) = match answer.outcome {
                    Outcome::Allowed { object } => (
                        json!({"allowed": true, "object": object, "warnings": answer.warnings, "reviews": reviews}),
                        true,
                    ),
                    Outcome::Denied {
                        webhook,
                        code,
                        reason,
                        message,
                    } => (
                        json!({"allowed": false, "webhook": webhook, "code": code, "reason": reason,
                               "message": message, "warnings": answer.warnings, "reviews": reviews}),
                        false,
                    ),
                };
                say(serde_json::to_string_pretty(&out)?)?;
                Ok(ok(allowed))
            }
        },
        other => bail!(
            "{} is a {other:?}, not an AdmissionReview or a ConversionReview",
            args.request.display()
        ),
    }
}
