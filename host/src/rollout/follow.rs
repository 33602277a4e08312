//! Following the `Rollout` objects of the host's namespace through the
//! shared informers: each module's state, as it changes, for the loader.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::StreamExt as _;
use tokio::sync::mpsc;

use super::Rollouts;
use super::resource::{GROUP, KIND, RolloutStatus, VERSION};
use crate::contract::Gvk;
use crate::informer::{Informer, Informers};

/// A module's state changed (`None`: its `Rollout` is gone).
pub(crate) type StateChange = (String, Option<RolloutStatus>);

/// The kind `Rollout`.
pub(crate) fn rollout_kind() -> Gvk {
    Gvk {
        group: GROUP.into(),
        version: VERSION.into(),
        kind: KIND.into(),
    }
}

/// Every module's state as the informer holds it now.
fn states(informer: &Informer) -> BTreeMap<String, RolloutStatus> {
    informer
        .list(None)
        .iter()
        .filter_map(|cached| {
            let object: serde_json::Value = serde_json::from_str(&cached.json).ok()?;
            Some((cached.name().to_string(), RolloutStatus::of(&object)))
        })
        .collect()
}

/// Starts following the `Rollout` objects of `namespace`: returns every
/// module's state once listed, and the changes from then on.
pub(crate) async fn follow(
    informers: &Informers,
    namespace: &str,
    rollouts: Arc<Rollouts>,
) -> Result<
    (
        BTreeMap<String, RolloutStatus>,
        mpsc::UnboundedReceiver<StateChange>,
    ),
    String,
> {
    let informer: Arc<Informer> = informers
        .informer(&rollout_kind(), None, Some(namespace))
        .await
        .map_err(|e| e.to_string())?;
    informer.wait_ready().await;
    let mut known = states(&informer);
    for (module, state) in &known {
        rollouts.of(module).seen(Some(state.clone()));
    }
    let first = known.clone();
    let (sender, receiver) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut changes = informer.changed();
        // Until the informer stops, or no one follows any more (the host
        // stopped): the informer is let go then, and its watch ends.
        loop {
            tokio::select! {
                change = changes.next() => if change.is_none() { return },
                () = sender.closed() => return,
            }
            let now = states(&informer);
            for (module, state) in &now {
                if known.get(module) != Some(state) {
                    rollouts.of(module).seen(Some(state.clone()));
                    let _ = sender.send((module.clone(), Some(state.clone())));
                }
            }
            for module in known.keys().filter(|m| !now.contains_key(*m)) {
                rollouts.of(module).seen(None);
                let _ = sender.send((module.clone(), None));
            }
            known = now;
        }
    });
    Ok((first, receiver))
}
