//! The embedded Kubernetes of the offline commands (`rekon reconcile`,
//! `rekon test`): a cluster in memory with a module's CRDs and
//! conversions installed, as `rekon dev` installs them, and a request's
//! object read in the version the module reconciles.

use anyhow::Context as _;
use rekon_host::Module;
use serde_json::Value;

/// An in-memory cluster (the embedded store) with the CRDs the module
/// ships installed, as `rekon dev` installs them.
pub async fn cluster_of(module: &Module) -> anyhow::Result<rekon_offline::MemoryCluster> {
    let cluster = rekon_offline::MemoryCluster::default();
    for crd in module.crds().await.context("the CRDs the module ships")? {
        cluster
            .seed(crd.clone())
            .map_err(|e| anyhow::anyhow!("{}", e.message))
            .with_context(|| format!("cannot install the CRD {}", crd["metadata"]["name"]))?;
    }
    // Custom resources are kept in their storage version and converted by
    // the module's conversions, as `rekon dev` and a cluster do.
    if !module.webhooks().conversions.is_empty() {
        let modules = rekon_host::webhook::WebhookModules::default();
        modules.set(module);
        let converter = rekon_offline::ModuleConversions::new(
            modules,
            std::sync::Arc::new(rekon_host::Metrics::new()),
        );
        cluster
            .store()
            .set_converter(Some(std::sync::Arc::new(converter)));
    }
    Ok(cluster)
}

/// The request's target and object in the version the module's manifest
/// reconciles (an object given in another version of its primary kind is
/// read back converted, as the host's informer would hand it over).
pub async fn as_primary(
    module: &Module,
    cluster: &dyn rekon_host::Cluster,
    target: ObjectRefOf,
    object: Option<Value>,
) -> anyhow::Result<(ObjectRefOf, Option<Value>)> {
    let primary = &module.manifest().primary;
    let converts = target.kind.group == primary.group
        && target.kind.kind == primary.kind
        && target.kind.version != primary.version;
    if !converts {
        return Ok((target, object));
    }
    let mut target = target;
    target.kind.version.clone_from(&primary.version);
    let object = match object {
        Some(_) => Some(serde_json::from_str(
            &cluster
                .get(&target)
                .await
                .map_err(|e| anyhow::anyhow!("{}", e.message))
                .with_context(|| format!("cannot read the object as {}", primary.version))?,
        )?),
        None => None,
    };
    Ok((target, object))
}

use rekon_host::contract::ObjectRef as ObjectRefOf;
