//! The APIs of what the host publishes for its webhooks: webhook
//! configurations and CRDs, read and written as dynamic objects.

use kube::api::{Api, DeleteParams, DynamicObject};
use kube::core::{ApiResource, GroupVersionKind};

use super::objects::configuration_kind;
use crate::runtime::Phase;

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
