//! Uninstalling: what rekon leaves in a cluster, and taking it back.
//! May call: the API server, webhook (the names of what it publishes).
//!
//! What rekon publishes outlives its processes on purpose (see
//! [`crate::webhook::publish`]): webhook configurations, CRD conversions,
//! Leases. When rekon itself is deleted (`kubectl delete -k deploy/`),
//! they must go too, or every write of the kinds its modules reviewed
//! fails (`failed calling webhook ... service "rekon-webhooks" not found`)
//! and every read of a CRD it converted in another version. Taking them
//! back needs rekon's own permissions and ServiceAccount, which that same
//! `kubectl delete` removes while the pods still run. So rekon learns of
//! its uninstall before anything is deleted: it publishes one more
//! validating webhook, `uninstall.rekon.dev`, called for the deletion of
//! the objects named as [`Triggers`] (its namespace, its ServiceAccount,
//! its ClusterRoleBinding). The first such deletion reaches a replica
//! while every permission still holds; the replica withdraws everything
//! pointing at its webhook endpoint ([`Uninstall::run`]), stops
//! publishing, and lets the deletion through. The webhook ignores
//! failures (a rekon that is down never blocks a deletion) and dry runs;
//! `rekon uninstall` runs the same clean-up where rekon is already gone.

mod run;
mod triggers;

pub use run::{Report, Uninstall};
pub use triggers::{DEFAULT_TRIGGERS, Trigger, Triggers};

/// The name of the uninstall webhook's configuration (a module's are
/// `rekon-<module>`, and a module name has no dot).
pub const CONFIGURATION: &str = "rekon.uninstall";

/// The name of the uninstall webhook, as the API server reports it.
pub const WEBHOOK: &str = "uninstall.rekon.dev";

/// The path the uninstall webhook is served at.
pub const PATH: &str = "/uninstall";

/// Why a trigger or an uninstall failed.
#[derive(Debug, thiserror::Error)]
pub enum UninstallError {
    /// A trigger is not `KIND/NAME` of a kind rekon can watch for.
    #[error(
        "uninstall trigger {0:?}: expected KIND/NAME with KIND one of namespace, serviceaccount, role, rolebinding, clusterrole, clusterrolebinding"
    )]
    Trigger(String),
    /// A request to the API server failed.
    #[error("{what}")]
    Api {
        /// What was being done.
        what: String,
        /// Why it failed.
        #[source]
        source: kube::Error,
    },
}

impl UninstallError {
    /// A short, bounded label for metrics and logs.
    pub fn metric_label(&self) -> &'static str {
        match self {
            UninstallError::Trigger(_) => "trigger",
            UninstallError::Api { .. } => "api",
        }
    }
}
