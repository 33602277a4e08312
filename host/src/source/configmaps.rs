//! Module ConfigMaps: the heads and parts `rekon pack` writes, watched
//! through the shared informers and assembled into module versions.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt as _;
use tokio::sync::mpsc;

use super::{CONFIGMAP_QUIET, Origin, SourceEvent, pack};

/// How long a module version with missing parts, or parts of another
/// version, is waited for before it is reported as broken.
pub(crate) const INCOMPLETE_GRACE: Duration = Duration::from_secs(10);
use crate::informer::Informers;
use crate::names::config_map_kind;

/// Watches module ConfigMaps (labelled [`pack::MODULE_LABEL`]) through
/// the shared informers, in `namespaces` (all when empty): sends an `Upsert`
/// for every complete module, an `Invalid` for a broken one, a `Remove` when
/// a module's ConfigMap goes. Changes are evaluated once the ConfigMaps
/// have been quiet for [`CONFIGMAP_QUIET`], so the parts of one `kubectl apply`
/// arrive together. A version whose parts are missing or belong to another
/// version is waited for quietly for [`INCOMPLETE_GRACE`] (its parts may
/// still be on their way) before it is reported.
/// `synced` turns true once the first list has been sent as events.
pub(crate) async fn watch_configmaps(
    informers: Arc<Informers>,
    namespaces: Vec<String>,
    events: mpsc::UnboundedSender<SourceEvent>,
    synced: tokio::sync::watch::Sender<bool>,
) {
    let kind = config_map_kind();
    // One informer per namespace named (so a Role in that namespace is
    // enough), or one for every namespace.
    let scopes: Vec<Option<String>> = if namespaces.is_empty() {
        vec![None]
    } else {
        namespaces.iter().cloned().map(Some).collect()
    };
    let mut watched = Vec::new();
    for scope in scopes {
        let informer = loop {
            match informers
                .informer(&kind, Some(pack::MODULE_LABEL), scope.as_deref())
                .await
            {
                Ok(informer) => break informer,
                Err(error) => {
                    tracing::error!(error = %error, "cannot watch module ConfigMaps; retrying");
                    tokio::time::sleep(Duration::from_secs(2)).await;
                }
            }
        };
        watched.push(informer);
    }
    let mut changes =
        futures::stream::select_all(watched.iter().map(|informer| informer.changed()));
    for informer in &watched {
        informer.wait_ready().await;
    }
    // origin -> the digest last sent (or the error last reported)
    let mut known: BTreeMap<Origin, String> = BTreeMap::new();
    // origin -> since when its version has been incomplete
    let mut incomplete: BTreeMap<Origin, Instant> = BTreeMap::new();
    loop {
        let configmaps: Vec<serde_json::Value> = watched
            .iter()
            .flat_map(|informer| informer.list(None))
            .filter_map(|c| serde_json::from_str(&c.json).ok())
            .collect();
        known = compare(&configmaps, known, &mut incomplete, &events);
        synced.send_replace(true);
        // Wait for a change, or for an incomplete version's grace to end;
        // then for quiet.
        let grace_ends = incomplete
            .values()
            .min()
            .map(|since| *since + INCOMPLETE_GRACE);
        let change = async {
            match grace_ends {
                Some(at) => tokio::time::timeout_at(at.into(), changes.next())
                    .await
                    .unwrap_or(Some(())),
                None => changes.next().await,
            }
        };
        if change.await.is_none() {
            return;
        }
        loop {
            match tokio::time::timeout(CONFIGMAP_QUIET, changes.next()).await {
                Ok(Some(_)) => continue,
                Ok(None) => return,
                Err(_) => break,
            }
        }
    }
}

/// Whether a version is broken only because its parts are not all there
/// yet (some missing, some of another version).
fn in_flight(error: &pack::PackError) -> bool {
    matches!(
        error,
        pack::PackError::MissingPart { .. } | pack::PackError::MixedParts { .. }
    )
}

/// Whether an incomplete version of `origin` is still within its grace
/// (starting it now if it was not incomplete before); never once this
/// very error has been reported.
fn waiting(
    incomplete: &mut BTreeMap<Origin, Instant>,
    known: &BTreeMap<Origin, String>,
    origin: &Origin,
    error: &pack::PackError,
) -> bool {
    if known.get(origin) == Some(&format!("error: {error}")) {
        return false;
    }
    let since = *incomplete
        .entry(origin.clone())
        .or_insert_with(Instant::now);
    since.elapsed() < INCOMPLETE_GRACE
}

/// Sends what changed since `known` (origin -> the digest last sent, or
/// the error last reported) in `configmaps`; returns what is known now.
fn compare(
    configmaps: &[serde_json::Value],
    known: BTreeMap<Origin, String>,
    incomplete: &mut BTreeMap<Origin, Instant>,
    events: &mpsc::UnboundedSender<SourceEvent>,
) -> BTreeMap<Origin, String> {
    let mut seen = BTreeMap::new();
    let mut present = Vec::new();
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
        present.push(origin.clone());
        let annotations = &manifest["metadata"]["annotations"];
        let rollout = super::Rollout::of(annotations, &origin);
        let marks = super::Marks::of(annotations, &origin);
        let (state, event) = match pack::assemble(manifest, configmaps) {
            Ok(bytes) => {
                // A change of the annotations alone is news too.
                let digest = format!("{} {rollout:?} {marks:?}", crate::runtime::digest(&bytes));
                let event = SourceEvent::Upsert {
                    origin: origin.clone(),
                    bytes: Arc::new(bytes),
                    rollout,
                    marks,
                };
                (digest, event)
            }
            Err(error) if in_flight(&error) && waiting(incomplete, &known, &origin, &error) => {
                tracing::debug!(%origin, %error, "module version incomplete: waiting for its parts");
                if let Some(state) = known.get(&origin) {
                    seen.insert(origin, state.clone());
                }
                continue;
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
        incomplete.remove(&origin);
        if known.get(&origin) != Some(&state) {
            let _ = events.send(event);
        }
        seen.insert(origin, state);
    }
    incomplete.retain(|origin, _| present.contains(origin));
    for origin in known.keys() {
        if !seen.contains_key(origin) {
            let _ = events.send(SourceEvent::Remove {
                origin: origin.clone(),
            });
        }
    }
    seen
}
