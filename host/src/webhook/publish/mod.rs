//! What a cluster needs to call the webhooks: one
//! Validating/MutatingWebhookConfiguration per module (`rekon-<module>`)
//! with the caBundle of the serving certificate, and the `spec.conversion`
//! of the CRDs a module converts.
//!
//! They belong to the set of replicas, not to one process, as
//! controller-runtime's webhook server and cert-manager's CA injector
//! treat them: a replica that stops (a rolling restart, a scale-down, an
//! eviction, a crash) withdraws nothing. The replica that leads (the
//! module's Lease holder with `--scale-out`) applies them (server-side,
//! field manager `rekon-webhooks`) when a module starts serving or a new
//! version changes them, and again at once when it sees them changed or
//! deleted (it watches them); it withdraws a module's configurations only
//! once no live replica serves the module (`super::members`). Every write
//! is fenced by leadership and idempotent. Uninstalling is
//! [`uninstall`](crate::webhook::uninstall)'s.

mod publisher;
mod writes;

use std::time::Duration;

pub(crate) use publisher::Publisher;

use crate::contract::Gvk;

/// How often everything is compared with the cluster even when nothing
/// was seen to change.
pub(super) const RESYNC: Duration = Duration::from_secs(60);

/// How long a change seen in what is published settles before the round
/// that answers it.
pub(super) const DRIFT_SETTLE: Duration = Duration::from_millis(500);

/// How soon a failed write is tried again.
pub(super) const RETRY: Duration = Duration::from_secs(2);

pub(super) fn gvk(group: &str, kind: &str) -> Gvk {
    Gvk {
        group: group.to_string(),
        version: "v1".to_string(),
        kind: kind.to_string(),
    }
}
