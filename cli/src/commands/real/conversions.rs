//! A module's CRD conversions served to a real API server, as `rekon
//! run`'s webhook server serves them on a cluster: the library's webhook
//! server on 127.0.0.1, the module's CRDs pointed at it.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context as _, anyhow};
use rekon_host::webhook::{CaSource, Endpoint, ServingCert, WebhookModules, serve_reviews};
use rekon_host::{Metrics, Module};

use super::Direct;

/// How long the API server may take to call a conversion it was just given
/// (it reloads a CRD's handler through its own informer).
const CONVERSION_SETTLE: Duration = Duration::from_secs(1);

/// Serves `module`'s CRD conversions over HTTPS on 127.0.0.1 and points its
/// CRDs at them (`spec.conversion` with the caBundle), as `rekon run`'s
/// webhook server publishes them on a cluster: so the real API server
/// converts custom resources with the module, as `rekon test` does in
/// memory. `None` when the module converts nothing; abort the task to stop.
pub(in crate::commands) async fn serve_conversions(
    direct: Arc<Direct>,
    module: &Module,
) -> anyhow::Result<Option<tokio::task::JoinHandle<()>>> {
    let conversions = &module.webhooks().conversions;
    if conversions.is_empty() {
        return Ok(None);
    }
    let cert = ServingCert::self_signed(&["127.0.0.1".to_string(), "localhost".to_string()])?;
    let modules = WebhookModules::default();
    modules.set(module);
    let (bound, task) = serve_reviews(
        ([127, 0, 0, 1], 0).into(),
        cert.server_config()?,
        modules,
        direct.cluster(),
        Arc::new(Metrics::new()),
    )
    .await
    .context("cannot serve the module's conversions")?;
    let patch = rekon_host::webhook::objects::conversion_patch(
        module.name(),
        &Endpoint::Url(format!("https://127.0.0.1:{}", bound.port())),
        &CaSource::Bundle(cert.ca_bundle()),
    );
    let crds = module.crds().await.context("the CRDs the module ships")?;
    for conversion in conversions {
        let Some(name) = crds
            .iter()
            .find(|crd| {
                crd["spec"]["group"] == conversion.kind.group.as_str()
                    && crd["spec"]["names"]["kind"] == conversion.kind.kind.as_str()
            })
            .and_then(|crd| crd["metadata"]["name"].as_str())
        else {
            continue;
        };
        direct
            .send(
                "PATCH",
                &format!("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}"),
                Some("application/merge-patch+json"),
                patch.to_string().into_bytes(),
            )
            .await
            .map_err(|e| {
                anyhow!(
                    "cannot point the CRD {name} at its conversion: {}",
                    e.message
                )
            })?;
    }
    tokio::time::sleep(CONVERSION_SETTLE).await;
    Ok(Some(task))
}
