//! `rekon reconcile`: one reconcile offline, every host call printed.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context as _, bail};
use rekon_host::Module;
use rekon_host::contract::{ObjectRef, Reason, Request};
use rekon_host::names::object_ref_of;
use rekon_host::runtime::DispatchOptions;
use rekon_offline::MemoryCluster;
use serde_json::{Value, json};

use crate::common::{load, read_documents, say};
use crate::global::{Global, engine};

/// `rekon reconcile MODULE --object OBJ`.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The component (.wasm).
    module: PathBuf,
    /// The object to reconcile (YAML or JSON).
    #[arg(long)]
    object: PathBuf,
    /// Objects that exist in the cluster beforehand (YAML, several documents allowed). Repeatable.
    #[arg(long = "cluster")]
    fixtures: Vec<PathBuf>,
    /// Report the object as gone (reason `deleted`, no object) instead. (An
    /// object with a `deletionTimestamp` and the module's finalizer is
    /// reconciled as `finalizing`; `creationTimestamp` is kept as given.)
    #[arg(long)]
    deleted: bool,
}

pub(super) async fn run(global: &Global, args: &Args) -> anyhow::Result<ExitCode> {
    let module = load(&engine(global)?, &args.module).await?;
    let (cluster, mut request) =
        offline_request(&module, &args.object, &args.fixtures, args.deleted).await?;
    if let Some(object) = &request.object
        && finalizing(&module, &serde_json::from_str(object)?)
    {
        request.reason = Reason::Finalizing;
    }
    let outcome = module
        .reconcile(
            Arc::new(cluster),
            &request,
            DispatchOptions {
                record: true,
                ..DispatchOptions::default()
            },
        )
        .await;
    for call in &outcome.calls {
        say(serde_json::to_string(call)?)?;
    }
    let result = rekon_host::replay::result_json(&outcome.result);
    let code = match &outcome.result {
        Ok(_) => ExitCode::SUCCESS,
        Err(_) => ExitCode::from(2),
    };
    say(json!({ "result": result }))?;
    Ok(code)
}

/// Whether a live host would reconcile `object` as `finalizing`: it is
/// being deleted and still carries the module's finalizer.
pub(super) fn finalizing(module: &Module, object: &Value) -> bool {
    let Some(finalizer) = &module.manifest().finalizer else {
        return false;
    };
    let deleting = !object["metadata"]["deletionTimestamp"].is_null();
    let holds = object["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|f| f.iter().any(|f| f == finalizer.as_str()));
    deleting && holds
}

/// Builds the in-memory cluster from fixtures and the object, and the request.
pub(super) async fn offline_request(
    module: &Module,
    object: &Path,
    fixtures: &[PathBuf],
    deleted: bool,
) -> anyhow::Result<(MemoryCluster, Request)> {
    let cluster = crate::memory::cluster_of(module).await?;
    for path in fixtures {
        for document in read_documents(path)? {
            cluster
                .seed(document)
                .with_context(|| format!("cannot add an object of {}", path.display()))?;
        }
    }
    let mut documents = read_documents(object)?;
    if documents.len() != 1 {
        bail!(
            "{} must hold exactly one object, found {}",
            object.display(),
            documents.len()
        );
    }
    let mut document = documents.remove(0);
    let target = settle_target(&cluster, &mut document).with_context(|| {
        format!(
            "{} needs apiVersion, kind and metadata.name",
            object.display()
        )
    })?;
    let stored = if deleted {
        None
    } else {
        Some(
            cluster
                .seed(document)
                .with_context(|| format!("cannot add the object of {}", object.display()))?,
        )
    };
    let (target, stored) = crate::memory::as_primary(module, &cluster, target, stored).await?;
    let request = Request {
        target,
        object: stored.map(|s| s.to_string()),
        reason: if deleted {
            Reason::Deleted
        } else {
            Reason::Manual
        },
        attempt: 0,
    };
    Ok((cluster, request))
}

/// The reference of `document` (`None` without apiVersion, kind and
/// metadata.name), its namespace settled as the API server would: a
/// namespaced kind given none is in `default` (written into the document
/// too), a cluster-scoped kind has none. A kind the cluster does not serve
/// yet counts as namespaced.
pub(super) fn settle_target(cluster: &MemoryCluster, document: &mut Value) -> Option<ObjectRef> {
    let target = object_ref_of(document)?;
    let namespaced = cluster
        .store()
        .resource_for_kind(&target.kind.group, &target.kind.version, &target.kind.kind)
        .is_none_or(|r| r.namespaced);
    Some(settled(document, target, namespaced))
}

/// `target` of `document`, its namespace settled as the API server would
/// for a kind that is `namespaced` or not (`default` written into the
/// document when it names none).
pub(super) fn settled(document: &mut Value, mut target: ObjectRef, namespaced: bool) -> ObjectRef {
    if namespaced && target.namespace.is_none() {
        document["metadata"]["namespace"] = json!("default");
        target.namespace = Some("default".to_string());
    }
    if !namespaced {
        target.namespace = None;
    }
    target
}
