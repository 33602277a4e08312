//! `rekon run --install-crds` (and `rekon dev`): the CustomResourceDefinitions
//! a module ships (contract 0.4.0, `crds`) are applied server-side before
//! its controller starts, and the controller waits until the API server
//! serves them (condition `Established`), as `kubectl wait` would.

use std::time::{Duration, Instant};

use kube::api::{Api, DynamicObject, Patch, PatchParams};
use serde_json::Value;

use crate::runtime::Module;

/// The field manager of the CRDs the host applies.
pub(crate) const FIELD_MANAGER: &str = "rekon-crds";

/// How long a controller waits for its CRDs to be served.
const ESTABLISH_TIMEOUT: Duration = Duration::from_secs(30);

/// Applies the module's CRDs and waits until each is established. A CRD
/// that cannot be applied is logged, not fatal: the controller starts
/// anyway (the CRD may be installed by other means) and says why it waits.
pub(crate) async fn install(client: &kube::Client, module: &Module) {
    let crds = match module.crds().await {
        Ok([]) => return,
        Ok(crds) => crds,
        Err(error) => {
            tracing::error!(
                module = %module.name(),
                error = %error,
                "cannot install the CRDs the module ships: they are not valid; \
                 its controller starts anyway"
            );
            return;
        }
    };
    let api = crate::webhook::apis::crds(client);
    let params = PatchParams::apply(FIELD_MANAGER).force();
    for crd in crds {
        let name = crd["metadata"]["name"].as_str().unwrap_or_default();
        match api.patch(name, &params, &Patch::Apply(crd)).await {
            Ok(_) => match established(&api, name).await {
                Ok(()) => tracing::info!(module = %module.name(), crd = %name, "CRD applied"),
                Err(why) => tracing::warn!(
                    module = %module.name(), crd = %name, "CRD applied but not established: {why}"
                ),
            },
            Err(error) => tracing::error!(
                module = %module.name(),
                crd = %name,
                error = %error,
                "cannot apply the CRD the module ships (it needs create and patch on \
                 customresourcedefinitions); its controller starts anyway"
            ),
        }
    }
}

/// Waits until the CRD's `Established` condition is true.
async fn established(api: &Api<DynamicObject>, name: &str) -> Result<(), String> {
    let started = Instant::now();
    loop {
        let crd = api.get(name).await.map_err(|e| e.to_string())?;
        let conditions = crd.data["status"]["conditions"].as_array().cloned();
        let condition = |kind: &str| -> Option<Value> {
            conditions
                .iter()
                .flatten()
                .find(|c| c["type"] == kind)
                .cloned()
        };
        if condition("Established").is_some_and(|c| c["status"] == "True") {
            return Ok(());
        }
        if started.elapsed() > ESTABLISH_TIMEOUT {
            let why = condition("NamesAccepted")
                .filter(|c| c["status"] == "False")
                .and_then(|c| c["message"].as_str().map(str::to_string))
                .unwrap_or_else(|| format!("not established after {ESTABLISH_TIMEOUT:?}"));
            return Err(why);
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
