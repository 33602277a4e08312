//! `app`: the classic operator. An `App` (`demo.rekon.dev/v1`) names an
//! image, a replica count and a port; the reconciler keeps a Deployment and
//! a Service of the same name in line with it (server-side apply, controller
//! owner references), reports `status.observedGeneration`,
//! `status.readyReplicas` and a `Ready` condition through the status
//! subresource, and cleans up behind the `demo.rekon.dev/cleanup` finalizer.
//!
//! It serves webhooks too ([`webhook`]): defaults, validation, and
//! conversion between `v1` and `v2`.
//!
//! Its CRD ([`crd`]) is generated from the spec and status types below
//! (`#[derive(CustomResource)]`); `manifests/crd.yaml` is that CRD, checked
//! in and kept in step by a test.

use rekon_sdk::api;
use rekon_sdk::conditions::{Condition, set_condition};
use rekon_sdk::crd::CustomResource;
use rekon_sdk::k8s_openapi::api::apps::v1::Deployment;
use rekon_sdk::k8s_openapi::api::core::v1::Service;
use rekon_sdk::prelude::{
    Action, Error, EventType, Gvk, Manifest, Reconciler, Request, Value, json,
};
use rekon_sdk::schemars::{self, JsonSchema};
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};

pub mod webhook;

/// Every reconcile and review runs on a fresh instance: memory is handed
/// out by moving a pointer, and all of it goes with the instance.
#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: rekon_sdk::arena::Arena = rekon_sdk::arena::Arena::new();

/// What the reconcile reads of the Deployment after applying it.
#[derive(Deserialize)]
struct Applied {
    status: Option<AppliedStatus>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AppliedStatus {
    ready_replicas: Option<i32>,
}

/// The API group of `App`.
pub const GROUP: &str = "demo.rekon.dev";
/// The finalizer put on every `App`.
pub const FINALIZER: &str = "demo.rekon.dev/cleanup";
/// The name of the `Ready` condition.
pub const READY: &str = "Ready";

/// The kind this reconciler reconciles.
pub fn app_kind() -> Gvk {
    AppSpec::gvk()
}

/// The CRD of `App`: `v1` (the storage version, [`AppSpec`]) and `v2`
/// ([`AppSpecV2`]), both with [`AppStatus`]. `manifests/crd.yaml` is this
/// CRD as YAML; regenerate it with `REKON_UPDATE_CRDS=1 cargo test -p app`.
pub fn crd() -> Value {
    rekon_sdk::crd::merge([AppSpec::crd(), AppSpecV2::crd()])
        .expect("v1 and v2 are versions of one kind, v1 the only storage version")
}

/// What an App asks for (v1): which image to run, how many pods, on which port.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, CustomResource)]
#[resource(
    group = "demo.rekon.dev",
    version = "v1",
    kind = "App",
    namespaced,
    status = "AppStatus",
    printcolumn(name = "Image", type = "string", json_path = ".spec.image"),
    printcolumn(name = "Ready", type = "integer", json_path = ".status.readyReplicas"),
    printcolumn(name = "Age", type = "date", json_path = ".metadata.creationTimestamp")
)]
pub struct AppSpec {
    /// Container image to run.
    pub image: String,
    /// Desired number of pods.
    #[serde(default = "default_replicas")]
    #[schemars(range(min = 0))]
    pub replicas: i32,
    /// Port the container listens on and the Service exposes.
    #[serde(default = "default_port")]
    #[schemars(range(min = 1, max = 65535))]
    pub port: i32,
}

/// What an App asks for (v2): how many pods, and the container to run
/// (v1's image and port, grouped). The webhook converts between versions.
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema, CustomResource)]
#[resource(
    group = "demo.rekon.dev",
    version = "v2",
    kind = "App",
    namespaced,
    status = "AppStatus",
    storage = false,
    printcolumn(name = "Image", type = "string", json_path = ".spec.container.image"),
    printcolumn(name = "Ready", type = "integer", json_path = ".status.readyReplicas"),
    printcolumn(name = "Age", type = "date", json_path = ".metadata.creationTimestamp")
)]
pub struct AppSpecV2 {
    /// Desired number of pods.
    #[serde(default = "default_replicas")]
    #[schemars(range(min = 0))]
    pub replicas: i32,
    /// The container to run.
    pub container: Container,
}

/// The container of an App (v2).
#[derive(Clone, Debug, Serialize, Deserialize, JsonSchema)]
pub struct Container {
    /// Container image to run.
    pub image: String,
    /// Port the container listens on and the Service exposes.
    #[serde(default = "default_port")]
    #[schemars(range(min = 1, max = 65535))]
    pub port: i32,
}

fn default_replicas() -> i32 {
    1
}

fn default_port() -> i32 {
    80
}

/// What the reconciler last saw and did.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppStatus {
    /// The generation this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// Desired replicas, as last seen in the spec.
    #[serde(default)]
    pub replicas: i32,
    /// Ready pods of the Deployment.
    #[serde(default)]
    pub ready_replicas: i32,
    /// Ready: True once every replica is ready.
    #[serde(default)]
    pub conditions: Vec<Condition>,
}

/// The `App` reconciler.
pub struct AppReconciler;

#[rekon_sdk::reconciler(webhook)]
impl Reconciler for AppReconciler {
    fn manifest() -> Manifest {
        Manifest::new("app", app_kind())
            .version(env!("CARGO_PKG_VERSION"))
            .owns(Gvk::of::<Deployment>())
            .owns(Gvk::of::<Service>())
            .finalizer(FINALIZER)
            // Only spec changes of an App: its own status writes and
            // finalizer wake nothing (the Deployment's changes still do).
            .generation_changed()
    }

    /// Ships the App CRD inside the component: `rekon dev app.wasm`
    /// installs it, as `rekon run --install-crds` does on a cluster.
    fn crds() -> Vec<Value> {
        vec![crd()]
    }

    fn reconcile(req: Request) -> Result<Action, Error> {
        let Some(app) = req.json()? else {
            // Gone: the owner references let the garbage collector finish.
            return Ok(Action::Done);
        };
        if api::is_deleting(&app) {
            return finalize(&req, &app);
        }
        // Read in place: the App is neither copied nor parsed twice.
        let app = api::ensure_finalizer(app, FINALIZER)?;
        let current: AppStatus = app
            .get("status")
            .and_then(|s| AppStatus::deserialize(s).ok())
            .unwrap_or_default();
        let generation = app.pointer("/metadata/generation").and_then(Value::as_i64);
        let spec: AppSpec = match AppSpec::deserialize(app.get("spec").unwrap_or(&Value::Null)) {
            Ok(spec) => spec,
            Err(e) => {
                // Say why on the App itself; retrying will not help.
                let message = format!("invalid spec: {e}");
                let mut status = current.clone();
                status.observed_generation = generation;
                let condition = Condition::new(READY, false, "InvalidSpec", &message)
                    .observed_generation(generation);
                set_condition(&mut status.conditions, condition);
                if status != current {
                    api::patch_status_dyn(&req.target, &json!({ "status": status }))?;
                    api::event(&req.target, EventType::Warning, "InvalidSpec", &message);
                }
                return Err(Error::permanent(format!("{}: {message}", req.target)));
            }
        };
        let owner = api::controller_ref_to(&app)
            .ok_or_else(|| Error::permanent("App has no metadata.uid"))?;
        let ns = req.namespace();
        let name = req.name();

        let owner = serde_json::to_value(owner)?;
        // Only what is read of the answers is decoded: the Deployment's
        // ready replicas; nothing of the Service or the status patch.
        let applied: Applied = match api::apply_value_as(&deployment(ns, name, &spec, &owner), true)
        {
            Ok(applied) => applied,
            // The namespace is being deleted: so is this App, and its
            // finalizing reconcile follows. Nothing to do until then.
            Err(e) if e.is_namespace_terminating() => return Ok(Action::Done),
            Err(e) => return Err(e.into()),
        };
        match api::apply_value_as::<IgnoredAny>(&service(ns, name, &spec, &owner), true) {
            Err(e) if e.is_namespace_terminating() => return Ok(Action::Done),
            other => other?,
        };
        let ready = applied.status.and_then(|s| s.ready_replicas).unwrap_or(0);
        let status = desired_status(current.clone(), generation, spec.replicas, ready);
        if status != current {
            api::patch_status_dyn_as::<IgnoredAny>(&req.target, &json!({ "status": status }))?;
        }
        Ok(Action::Done)
    }
}

/// The status for `ready` of `replicas` ready pods, keeping the condition's
/// transition time when its status does not change.
pub fn desired_status(
    mut status: AppStatus,
    generation: Option<i64>,
    replicas: i32,
    ready: i32,
) -> AppStatus {
    status.observed_generation = generation;
    status.replicas = replicas;
    status.ready_replicas = ready;
    let all_ready = ready >= replicas;
    let condition = Condition::new(
        READY,
        all_ready,
        if all_ready {
            "Available"
        } else {
            "Progressing"
        },
        &format!("{ready}/{replicas} replicas ready"),
    )
    .observed_generation(generation);
    set_condition(&mut status.conditions, condition);
    status
}

/// Cleans up behind a deleted App, the way a finalizer should: what is
/// already gone is not an error, the Event is best effort, and a namespace
/// being deleted does not stop the finalizer from being removed.
fn finalize(req: &Request, app: &Value) -> Result<Action, Error> {
    if !api::has_finalizer(app, FINALIZER) {
        return Ok(Action::Done);
    }
    let ns = Some(req.namespace());
    let deleted_deployment = api::delete::<Deployment>(ns, req.name())?;
    let deleted_service = api::delete::<Service>(ns, req.name())?;
    let message = format!(
        "deleted Deployment ({}) and Service ({}) {}",
        if deleted_deployment {
            "was present"
        } else {
            "already gone"
        },
        if deleted_service {
            "was present"
        } else {
            "already gone"
        },
        req.name()
    );
    api::event(&req.target, EventType::Normal, "CleanedUp", &message);
    api::remove_finalizer(app, FINALIZER)?;
    Ok(Action::Done)
}

fn labels(name: &str) -> Value {
    json!({"app.kubernetes.io/name": name, "app.kubernetes.io/managed-by": "rekon-app"})
}

fn metadata(ns: &str, name: &str, owner: &Value) -> Value {
    json!({"name": name, "namespace": ns, "labels": labels(name), "ownerReferences": [owner]})
}

/// The Deployment an App asks for (the apply intent: only the fields we own).
pub fn deployment(ns: &str, name: &str, spec: &AppSpec, owner: &Value) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": metadata(ns, name, owner),
        "spec": {
            "replicas": spec.replicas,
            "selector": {"matchLabels": {"app.kubernetes.io/name": name}},
            "template": {
                "metadata": {"labels": labels(name)},
                "spec": {"containers": [{
                    "name": "app",
                    "image": spec.image,
                    "ports": [{"name": "http", "containerPort": spec.port}],
                }]},
            },
        },
    })
}

/// The Service an App asks for (the apply intent).
pub fn service(ns: &str, name: &str, spec: &AppSpec, owner: &Value) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(ns, name, owner),
        "spec": {
            "selector": {"app.kubernetes.io/name": name},
            "ports": [{"name": "http", "port": spec.port, "targetPort": spec.port}],
        },
    })
}
