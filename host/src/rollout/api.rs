//! Reading and writing `Rollout` objects ([`super::resource`]): each
//! write a read, a change and a replace of the status at the resourceVersion
//! read (so two writers never lose each other's change), retried on a
//! conflict.

use std::time::{Duration, Instant};

use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;

use super::resource::{CRD, GROUP, KIND, PLURAL, RolloutStatus, VERSION};

/// The field manager of rekon's writes to `Rollout` objects and their CRD.
pub const FIELD_MANAGER: &str = "rekon-rollout";

/// The label naming the module a `Rollout` is about.
pub const MODULE_LABEL: &str = "rekon.dev/module";

/// How many times a write is tried against conflicting writers.
const ATTEMPTS: usize = 8;

/// Why a write of a rollout's state did not happen.
#[derive(Debug, thiserror::Error)]
pub enum UpdateError {
    /// The change was refused by the state itself (nothing to promote, a
    /// decision about another candidate).
    #[error("{0}")]
    Refused(String),
    /// The API server refused or failed.
    #[error("the API server: {0}")]
    Api(#[from] kube::Error),
    /// Other writers kept changing the object.
    #[error("the Rollout kept changing under {ATTEMPTS} attempts")]
    Contended,
}

/// The `Rollout` objects of one namespace.
#[derive(Clone)]
pub struct RolloutApi {
    api: Api<DynamicObject>,
    resource: ApiResource,
    namespace: String,
}

impl std::fmt::Debug for RolloutApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RolloutApi")
            .field("namespace", &self.namespace)
            .finish_non_exhaustive()
    }
}

impl RolloutApi {
    /// The `Rollout` objects in `namespace`.
    pub fn new(client: kube::Client, namespace: &str) -> RolloutApi {
        let gvk = GroupVersionKind::gvk(GROUP, VERSION, KIND);
        let resource = ApiResource::from_gvk_with_plural(&gvk, PLURAL);
        RolloutApi {
            api: Api::namespaced_with(client, namespace, &resource),
            resource,
            namespace: namespace.to_string(),
        }
    }

    /// The namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// Applies the `Rollout` CRD (server-side) and waits until the API
    /// server serves it.
    pub async fn install_crd(client: &kube::Client) -> Result<(), String> {
        let crd: serde_json::Value =
            serde_yaml_ng::from_str(CRD).map_err(|e| format!("the Rollout CRD: {e}"))?;
        let gvk = GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition");
        let crds: Api<DynamicObject> = Api::all_with(
            client.clone(),
            &ApiResource::from_gvk_with_plural(&gvk, "customresourcedefinitions"),
        );
        let name = format!("{PLURAL}.{GROUP}");
        // Installed already (deploy/ does): nothing to write, so a replica
        // that does not lead writes nothing.
        let installed = crds.get_opt(&name).await.map_err(|e| e.to_string())?;
        if installed.is_some_and(|crd| serves(&crd.data)) {
            return Ok(());
        }
        crds.patch(
            &name,
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(crd),
        )
        .await
        .map_err(|e| e.to_string())?;
        let started = Instant::now();
        loop {
            let crd = crds.get(&name).await.map_err(|e| e.to_string())?;
            if serves(&crd.data) {
                return Ok(());
            }
            if started.elapsed() > Duration::from_secs(30) {
                return Err(format!("{name} is not established after 30s"));
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// The state of `module`'s rollout; `None` when it has no `Rollout`.
    pub async fn get(&self, module: &str) -> Result<Option<RolloutStatus>, kube::Error> {
        Ok(self
            .api
            .get_opt(module)
            .await?
            .map(|object| RolloutStatus::of(&object.data)))
    }

    /// Changes the state of `module`'s rollout with `change` (on a
    /// `Rollout` created when there is none), which says whether it
    /// changed anything or why it refuses; returns the state written
    /// (`None`: nothing to write).
    pub async fn update<F>(
        &self,
        module: &str,
        mut change: F,
    ) -> Result<Option<RolloutStatus>, UpdateError>
    where
        F: FnMut(&mut RolloutStatus) -> Result<bool, String>,
    {
        for _ in 0..ATTEMPTS {
            let mut object = match self.api.get_opt(module).await? {
                Some(object) => object,
                None => match self.create(module).await {
                    Ok(object) => object,
                    Err(kube::Error::Api(status)) if status.code == 409 => continue,
                    Err(error) => return Err(error.into()),
                },
            };
            let mut status = RolloutStatus::of(&object.data);
            if !change(&mut status).map_err(UpdateError::Refused)? {
                return Ok(None);
            }
            object.data["status"] =
                serde_json::to_value(&status).expect("a rollout status is JSON");
            let params = PostParams {
                field_manager: Some(FIELD_MANAGER.to_string()),
                ..PostParams::default()
            };
            match self.api.replace_status(module, &params, &object).await {
                Ok(_) => return Ok(Some(status)),
                Err(kube::Error::Api(status)) if status.code == 409 => continue,
                Err(error) => return Err(error.into()),
            }
        }
        Err(UpdateError::Contended)
    }

    async fn create(&self, module: &str) -> Result<DynamicObject, kube::Error> {
        let mut object =
            DynamicObject::new(module, &self.resource).data(serde_json::json!({ "spec": {} }));
        object.metadata.labels = Some([(MODULE_LABEL.to_string(), module.to_string())].into());
        let params = PostParams {
            field_manager: Some(FIELD_MANAGER.to_string()),
            ..PostParams::default()
        };
        self.api.create(&params, &object).await
    }
}

/// Whether a `Rollout` CRD serves this version and is established.
fn serves(crd: &serde_json::Value) -> bool {
    let established = crd["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Established" && c["status"] == "True");
    let served = crd["spec"]["versions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|v| v["name"] == VERSION && v["served"] == true);
    established && served
}
