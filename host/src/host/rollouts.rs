//! Start-up of the rollouts kept in the cluster: the `Rollout` CRD
//! applied, the host's namespace's `Rollout` objects followed, and each
//! module's rollout written there by its leader. Without the permission
//! (or a server that takes the CRD), rollouts are kept in this process
//! only, as the log says.

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio::sync::mpsc;

use crate::controller::Shared;
use crate::rollout::resource::RolloutStatus;
use crate::rollout::{RolloutApi, Rollouts, StateChange, follow};

/// The states at start and their changes, when rollouts are kept in the
/// cluster.
pub(super) type Followed = (
    BTreeMap<String, RolloutStatus>,
    mpsc::UnboundedReceiver<StateChange>,
);

/// Keeps the rollouts in `namespace`'s `Rollout` objects.
pub(super) async fn keep(
    client: &kube::Client,
    shared: &Shared,
    rollouts: &Arc<Rollouts>,
    namespace: &str,
) -> Option<Followed> {
    if let Err(error) = RolloutApi::install_crd(client).await {
        tracing::warn!(
            error = %error,
            "cannot apply the Rollout CRD (rollouts.rekon.dev; deploy/crds/rollouts.yaml): \
             rollouts are kept in this process only, and a restart forgets promotions and aborts"
        );
        return None;
    }
    let followed = match follow(&shared.informers, namespace, rollouts.clone()).await {
        Ok(followed) => followed,
        Err(error) => {
            tracing::warn!(error = %error, "cannot watch Rollout objects: rollouts are kept in this process only");
            return None;
        }
    };
    rollouts.keep_in(
        RolloutApi::new(client.clone(), namespace),
        shared.leaders.clone(),
        shared.cluster.clone(),
    );
    tracing::info!(%namespace, modules = followed.0.len(), "rollouts kept in the cluster (Rollout objects)");
    Some(followed)
}
