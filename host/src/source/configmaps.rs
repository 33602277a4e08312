//! Module ConfigMaps: the heads and parts `rekon pack` writes, watched
//! through the shared informers and assembled into module versions.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast::error::RecvError;
use tokio::sync::mpsc;

use super::{CONFIGMAP_QUIET, Origin, SourceEvent, pack};
use crate::informer::Informers;
use crate::shared::config_map_kind;

/// Watches module ConfigMaps (labelled [`pack::MODULE_LABEL`]) through
/// the shared informers, in `namespaces` (all when empty): sends an `Upsert`
/// for every complete module, an `Invalid` for a broken one, a `Remove` when
/// a module's ConfigMap goes. Changes are evaluated once the ConfigMaps
/// have been quiet for [`CONFIGMAP_QUIET`], so the parts of one `kubectl apply`
/// arrive together.
pub(crate) async fn watch_configmaps(
    informers: Arc<Informers>,
    namespaces: Vec<String>,
    events: mpsc::UnboundedSender<SourceEvent>,
) {
    let kind = config_map_kind();
    let informer = loop {
        match informers
            .informer(&kind, Some(pack::MODULE_LABEL), None)
            .await
        {
            Ok(informer) => break informer,
            Err(error) => {
                tracing::error!(error = %error, "cannot watch module ConfigMaps; retrying");
                tokio::time::sleep(Duration::from_secs(2)).await;
            }
        }
    };
    let mut changes = informer.subscribe();
    informer.wait_ready().await;
    // origin -> the digest last sent (or the error last reported)
    let mut known: BTreeMap<Origin, String> = BTreeMap::new();
    loop {
        let configmaps: Vec<serde_json::Value> = informer
            .list(None)
            .iter()
            .filter(|c| {
                namespaces.is_empty()
                    || c.namespace()
                        .is_some_and(|ns| namespaces.iter().any(|n| n == ns))
            })
            .filter_map(|c| serde_json::from_str(&c.json).ok())
            .collect();
        known = compare(&configmaps, known, &events);
        // Wait for a change (a lagging receiver missed some: rescan too),
        // then for quiet.
        if let Err(RecvError::Closed) = changes.recv().await {
            return;
        }
        loop {
            match tokio::time::timeout(CONFIGMAP_QUIET, changes.recv()).await {
                Ok(Ok(_)) | Ok(Err(RecvError::Lagged(_))) => continue,
                Ok(Err(RecvError::Closed)) => return,
                Err(_) => break,
            }
        }
    }
}

/// Sends what changed since `known` (origin -> the digest last sent, or
/// the error last reported) in `configmaps`; returns what is known now.
fn compare(
    configmaps: &[serde_json::Value],
    known: BTreeMap<Origin, String>,
    events: &mpsc::UnboundedSender<SourceEvent>,
) -> BTreeMap<Origin, String> {
    let mut seen = BTreeMap::new();
    for manifest in configmaps.iter().filter(|c| pack::is_manifest(c)) {
        let text = |field: &str| {
            manifest["metadata"][field]
                .as_str()
                .unwrap_or_default()
                .to_string()
        };
        let origin = Origin::ConfigMap {
            namespace: text("namespace"),
            name: text("name"),
        };
        let (state, event) = match pack::assemble(manifest, configmaps) {
            Ok(bytes) => {
                let digest = crate::runtime::digest(&bytes);
                let event = SourceEvent::Upsert {
                    origin: origin.clone(),
                    bytes: Arc::new(bytes),
                };
                (digest, event)
            }
            Err(error) => {
                let message = error.to_string();
                let event = SourceEvent::Invalid {
                    origin: origin.clone(),
                    reason: error.metric_label(),
                    message: message.clone(),
                };
                (format!("error: {message}"), event)
            }
        };
        if known.get(&origin) != Some(&state) {
            let _ = events.send(event);
        }
        seen.insert(origin, state);
    }
    for origin in known.keys() {
        if !seen.contains_key(origin) {
            let _ = events.send(SourceEvent::Remove {
                origin: origin.clone(),
            });
        }
    }
    seen
}
