//! `tenant`: a namespace-as-a-service operator. A `Tenant`
//! (`demo.rekon.dev/v1`, cluster-scoped) names its admins, a quota and a
//! database; the reconciler keeps, in the namespace `tenant-<name>`:
//!
//! - the Namespace itself, labelled with the tenant;
//! - a ResourceQuota `tenant-quota` with the tenant's hard limits;
//! - a RoleBinding `tenant-admins` binding the admins to the ClusterRole
//!   `admin`;
//! - a StatefulSet `db` running the database;
//! - a Job `db-init` that initialises it, created once (a Job's template
//!   cannot change);
//!
//! all by server-side apply with a controller owner reference to the
//! Tenant, so deleting the Tenant deletes the Namespace and everything in
//! it. `status` says the namespace, how many database replicas are ready,
//! whether the Job succeeded, and a `Ready` condition.

use rekon_sdk::api;
use rekon_sdk::conditions::{Condition, set_condition};
use rekon_sdk::k8s_openapi::api::apps::v1::StatefulSet;
use rekon_sdk::k8s_openapi::api::batch::v1::Job;
use rekon_sdk::k8s_openapi::api::core::v1::{Namespace, ResourceQuota};
use rekon_sdk::k8s_openapi::api::rbac::v1::RoleBinding;
use rekon_sdk::prelude::{
    Action, ApiError, Error, EventType, Gvk, Manifest, Reconciler, Request, Value, json,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The API group of `Tenant`.
pub const GROUP: &str = "demo.rekon.dev";
/// The label put on everything a Tenant owns.
pub const TENANT_LABEL: &str = "demo.rekon.dev/tenant";
/// The name of the `Ready` condition.
pub const READY: &str = "Ready";

/// The kind this reconciler reconciles.
pub fn tenant_kind() -> Gvk {
    Gvk::new(GROUP, "v1", "Tenant")
}

/// The namespace of the tenant `name`.
pub fn namespace_of(name: &str) -> String {
    format!("tenant-{name}")
}

/// `Tenant.spec`.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct TenantSpec {
    /// Users bound to the ClusterRole `admin` in the namespace.
    #[serde(default)]
    pub admins: Vec<String>,
    /// Hard limits of the namespace's ResourceQuota.
    #[serde(default)]
    pub quota: BTreeMap<String, String>,
    /// The tenant's database.
    pub database: Database,
}

/// `Tenant.spec.database`.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Database {
    /// Container image.
    pub image: String,
    /// Replicas of the StatefulSet.
    #[serde(default = "one")]
    pub replicas: i32,
}

fn one() -> i32 {
    1
}

/// `Tenant.status`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TenantStatus {
    /// The generation this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// The tenant's namespace.
    #[serde(default)]
    pub namespace: String,
    /// Ready replicas of the database.
    #[serde(default)]
    pub database_ready: i32,
    /// Whether the `db-init` Job succeeded.
    #[serde(default)]
    pub initialized: bool,
    /// `Ready`: `True` once the database is ready and initialised.
    #[serde(default)]
    pub conditions: Vec<Condition>,
}

/// The `Tenant` reconciler.
pub struct TenantReconciler;

#[rekon_sdk::reconciler]
impl Reconciler for TenantReconciler {
    fn manifest() -> Manifest {
        Manifest::new("tenant", tenant_kind())
            .version(env!("CARGO_PKG_VERSION"))
            .owns(Gvk::of::<Namespace>())
            .owns(Gvk::of::<ResourceQuota>())
            .owns(Gvk::of::<RoleBinding>())
            .owns(Gvk::of::<StatefulSet>())
            .owns(Gvk::of::<Job>())
    }

    fn reconcile(req: Request) -> Result<Action, Error> {
        let Some(tenant) = req.json()? else {
            // Gone: the owner references let the garbage collector delete
            // the namespace, and the namespace its contents.
            return Ok(Action::Done);
        };
        if api::is_deleting(&tenant) {
            return Ok(Action::Done);
        }
        let generation = tenant
            .pointer("/metadata/generation")
            .and_then(Value::as_i64);
        let current: TenantStatus = tenant
            .get("status")
            .cloned()
            .and_then(|s| serde_json::from_value(s).ok())
            .unwrap_or_default();
        let spec: TenantSpec =
            serde_json::from_value(tenant.get("spec").cloned().unwrap_or_default())
                .map_err(|e| Error::permanent(format!("{}: invalid spec: {e}", req.target)))?;
        let owner = api::controller_ref_to(&tenant)
            .ok_or_else(|| Error::permanent("Tenant has no metadata.uid"))?;
        let owner = serde_json::to_value(owner)?;
        let name = req.name();
        let (database, job) = match provision(name, &spec, &owner) {
            Ok(found) => found,
            // The namespace is being deleted (the Tenant was, and its
            // garbage is being collected): nothing to do.
            Err(e) if e.is_namespace_terminating() => return Ok(Action::Done),
            Err(e) => return Err(e.into()),
        };
        let status = desired_status(current.clone(), generation, name, &spec, &database, &job);
        if status != current {
            api::patch_status_dyn(&req.target, &json!({ "status": status }))?;
            if status
                .conditions
                .iter()
                .any(|c| c.type_ == READY && c.is_true())
                && !current
                    .conditions
                    .iter()
                    .any(|c| c.type_ == READY && c.is_true())
            {
                let message = format!("namespace {} is ready", status.namespace);
                api::event(&req.target, EventType::Normal, "Provisioned", &message);
            }
        }
        Ok(Action::Done)
    }
}

/// Applies what the tenant owns; returns the database's StatefulSet and
/// the init Job as the server answered.
fn provision(name: &str, spec: &TenantSpec, owner: &Value) -> Result<(Value, Value), ApiError> {
    let ns = namespace_of(name);
    api::apply_value(&namespace(name, owner), true)?;
    api::apply_value(&quota(name, spec, owner), true)?;
    api::apply_value(&admins(name, spec, owner), true)?;
    let database = api::apply_value(&database(name, spec, owner), true)?;
    // A Job's template is immutable: it is created once, then only read.
    let job = match api::get::<Job>(Some(&ns), "db-init")? {
        Some(job) => serde_json::to_value(job).unwrap_or_default(),
        None => api::apply_value(&init_job(name, spec, owner), true)?,
    };
    Ok((database, job))
}

/// The status for the StatefulSet and Job as they are, keeping the
/// condition's transition time when its status does not change.
pub fn desired_status(
    mut status: TenantStatus,
    generation: Option<i64>,
    name: &str,
    spec: &TenantSpec,
    database: &Value,
    job: &Value,
) -> TenantStatus {
    let ready = database
        .pointer("/status/readyReplicas")
        .and_then(Value::as_i64)
        .and_then(|r| i32::try_from(r).ok())
        .unwrap_or(0);
    let initialized = job
        .pointer("/status/succeeded")
        .and_then(Value::as_i64)
        .is_some_and(|n| n >= 1);
    status.observed_generation = generation;
    status.namespace = namespace_of(name);
    status.database_ready = ready;
    status.initialized = initialized;
    let replicas = spec.database.replicas;
    let done = ready >= replicas && initialized;
    let message = format!(
        "database {ready}/{replicas} ready, {}",
        if initialized {
            "initialised"
        } else {
            "db-init not done"
        }
    );
    let condition = Condition::new(
        READY,
        done,
        if done { "Provisioned" } else { "Provisioning" },
        &message,
    )
    .observed_generation(generation);
    set_condition(&mut status.conditions, condition);
    status
}

fn labels(name: &str) -> Value {
    json!({TENANT_LABEL: name, "app.kubernetes.io/managed-by": "rekon-tenant"})
}

fn metadata(name: &str, object: &str, owner: &Value) -> Value {
    json!({"name": object, "namespace": namespace_of(name), "labels": labels(name),
           "ownerReferences": [owner]})
}

/// The tenant's Namespace (the apply intent).
pub fn namespace(name: &str, owner: &Value) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": namespace_of(name), "labels": labels(name), "ownerReferences": [owner]},
    })
}

/// The tenant's ResourceQuota.
pub fn quota(name: &str, spec: &TenantSpec, owner: &Value) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": metadata(name, "tenant-quota", owner),
        "spec": {"hard": spec.quota},
    })
}

/// The RoleBinding of the tenant's admins.
pub fn admins(name: &str, spec: &TenantSpec, owner: &Value) -> Value {
    let subjects: Vec<Value> = spec
        .admins
        .iter()
        .map(|user| json!({"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": user}))
        .collect();
    json!({
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": metadata(name, "tenant-admins", owner),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "admin"},
        "subjects": subjects,
    })
}

fn database_labels(name: &str) -> Value {
    json!({"app.kubernetes.io/name": "db", TENANT_LABEL: name})
}

/// The database's StatefulSet.
pub fn database(name: &str, spec: &TenantSpec, owner: &Value) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": metadata(name, "db", owner),
        "spec": {
            "replicas": spec.database.replicas,
            "serviceName": "db",
            "selector": {"matchLabels": database_labels(name)},
            "template": {
                "metadata": {"labels": database_labels(name)},
                "spec": {"containers": [{"name": "db", "image": spec.database.image}]},
            },
        },
    })
}

/// The Job that initialises the database, once.
pub fn init_job(name: &str, spec: &TenantSpec, owner: &Value) -> Value {
    json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": metadata(name, "db-init", owner),
        "spec": {
            "backoffLimit": 3,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{
                        "name": "init",
                        "image": spec.database.image,
                        "command": ["sh", "-c", "until pg_isready -h db; do sleep 1; done"],
                    }],
                },
            },
        },
    })
}
