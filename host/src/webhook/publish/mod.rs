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
//! once no live replica serves the module ([`super::members`]). Every write
//! is fenced by leadership and idempotent. Uninstalling is
//! [`uninstall`](crate::webhook::uninstall)'s.

mod objects;
mod publisher;
mod writes;

use std::time::Duration;

use kube::api::{Api, DeleteParams, DynamicObject};
use kube::core::{ApiResource, GroupVersionKind};

pub use objects::{
    CaSource, Endpoint, configuration, configuration_kind, configuration_object_name, contains,
    conversion_patch, no_conversion_patch,
};
pub(crate) use objects::{client_config, configuration_metadata};
pub(crate) use publisher::Publisher;

use crate::contract::Gvk;
use crate::runtime::Phase;

/// How often everything is compared with the cluster even when nothing
/// was seen to change.
pub(super) const RESYNC: Duration = Duration::from_secs(60);

/// How long a change seen in what is published settles before the round
/// that answers it.
pub(super) const DRIFT_SETTLE: Duration = Duration::from_millis(500);

/// How soon a failed write is tried again.
pub(super) const RETRY: Duration = Duration::from_secs(2);

/// The field manager of what the host writes for its webhooks.
pub const FIELD_MANAGER: &str = "rekon-webhooks";

pub use crate::names::MANAGED_BY;

/// The label naming the module a webhook configuration is for.
pub const WEBHOOKS_OF: &str = "rekon.dev/webhooks-of";

/// The label naming the module that converts a CRD.
pub const CONVERTED_BY: &str = "rekon.dev/converted-by";

fn api_of(client: &kube::Client, kind: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("admissionregistration.k8s.io", "v1", kind);
    let plural = format!("{}s", kind.to_ascii_lowercase());
    Api::all_with(
        client.clone(),
        &ApiResource::from_gvk_with_plural(&gvk, &plural),
    )
}

/// The API of webhook configurations of `phase`.
pub(crate) fn configurations(client: &kube::Client, phase: Phase) -> Api<DynamicObject> {
    api_of(client, configuration_kind(phase))
}

/// The API of CustomResourceDefinitions (also `rekon run --install-crds`'s).
pub(crate) fn crds(client: &kube::Client) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition");
    Api::all_with(
        client.clone(),
        &ApiResource::from_gvk_with_plural(&gvk, "customresourcedefinitions"),
    )
}

pub(super) fn gvk(group: &str, kind: &str) -> Gvk {
    Gvk {
        group: group.to_string(),
        version: "v1".to_string(),
        kind: kind.to_string(),
    }
}

/// Deletes an object; one that is already gone is fine.
pub(crate) async fn delete_quietly<K>(api: &Api<K>, name: &str) -> Result<(), kube::Error>
where
    K: Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    match api.delete(name, &DeleteParams::default()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(e) => Err(e),
    }
}
