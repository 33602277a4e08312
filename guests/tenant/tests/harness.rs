//! The `tenant` reconciler run natively against the in-memory cluster.

use rekon_sdk::k8s_openapi::api::apps::v1::StatefulSet;
use rekon_sdk::k8s_openapi::api::batch::v1::Job;
use rekon_sdk::k8s_openapi::api::core::v1::{Namespace, ResourceQuota};
use rekon_sdk::k8s_openapi::api::rbac::v1::RoleBinding;
use rekon_sdk::prelude::*;
use rekon_sdk::testing::FakeCluster;
use tenant::{TENANT_LABEL, TenantReconciler, tenant_kind};

const CRD: &str = include_str!("../manifests/crd.yaml");
const EXAMPLE: &str = include_str!("../manifests/example.yaml");
const NS: Option<&str> = Some("tenant-acme");

fn cluster() -> FakeCluster {
    let cluster = FakeCluster::from_yaml(CRD).expect("the CRD is valid");
    cluster.seed_yaml(EXAMPLE).expect("the example is valid");
    cluster
}

fn tenant(cluster: &FakeCluster) -> Value {
    cluster
        .object(&tenant_kind(), None, "acme")
        .expect("the Tenant exists")
}

#[test]
fn provisions_a_namespace_with_quota_admins_database_and_init_job() {
    let cluster = cluster();
    let action = cluster
        .reconcile::<TenantReconciler>(None, "acme")
        .expect("reconciles");
    assert_eq!(action, Action::Done);
    let uid = tenant(&cluster)["metadata"]["uid"].clone();

    let ns: Namespace = cluster.get(None, "tenant-acme").expect("the namespace");
    let labels = ns.metadata.labels.clone().unwrap_or_default();
    assert_eq!(labels.get(TENANT_LABEL).map(String::as_str), Some("acme"));
    let owner = &ns.metadata.owner_references.as_ref().expect("owned")[0];
    assert_eq!(
        (owner.kind.as_str(), owner.uid.as_str()),
        ("Tenant", uid.as_str().unwrap())
    );

    let quota: ResourceQuota = cluster.get(NS, "tenant-quota").expect("the quota");
    let hard = quota.spec.and_then(|s| s.hard).unwrap_or_default();
    assert_eq!(hard.get("pods").map(|q| q.0.as_str()), Some("20"));
    assert_eq!(
        hard.get("requests.memory").map(|q| q.0.as_str()),
        Some("8Gi")
    );

    let admins: RoleBinding = cluster.get(NS, "tenant-admins").expect("the binding");
    assert_eq!(admins.role_ref.name, "admin");
    assert_eq!(
        admins.subjects.expect("subjects")[0].name,
        "alice@acme.example"
    );

    let db: StatefulSet = cluster.get(NS, "db").expect("the database");
    let spec = db.spec;
    assert_eq!(spec.replicas, Some(1));
    let image = spec.template.spec.expect("pod spec").containers[0]
        .image
        .clone();
    assert_eq!(image.as_deref(), Some("postgres:17"));

    let job: Job = cluster.get(NS, "db-init").expect("the init job");
    assert_eq!(job.spec.expect("spec").backoff_limit, Some(3));

    let status = &tenant(&cluster)["status"];
    assert_eq!(status["namespace"], "tenant-acme");
    assert_eq!(status["conditions"][0]["status"], "False");
    assert_eq!(status["conditions"][0]["reason"], "Provisioning");
}

#[test]
fn ready_once_the_database_is_up_and_the_job_succeeded() {
    let cluster = cluster();
    cluster
        .reconcile::<TenantReconciler>(None, "acme")
        .expect("reconciles");
    let mut db = cluster
        .object(&Gvk::of::<StatefulSet>(), NS, "db")
        .expect("db");
    db["status"] = json!({"replicas": 1, "readyReplicas": 1});
    cluster.seed(db).expect("status stored");
    cluster
        .reconcile::<TenantReconciler>(None, "acme")
        .expect("reconciles");
    // The database alone is not enough.
    assert_eq!(
        tenant(&cluster)["status"]["conditions"][0]["status"],
        "False"
    );

    let mut job = cluster
        .object(&Gvk::of::<Job>(), NS, "db-init")
        .expect("job");
    job["status"] = json!({"succeeded": 1});
    cluster.seed(job).expect("status stored");
    cluster
        .reconcile::<TenantReconciler>(None, "acme")
        .expect("reconciles");
    let status = tenant(&cluster)["status"].clone();
    assert_eq!(status["databaseReady"], 1);
    assert_eq!(status["initialized"], true);
    assert_eq!(status["conditions"][0]["status"], "True");
    let events = cluster.events();
    assert!(
        events.iter().any(|e| e.reason == "Provisioned"),
        "{events:?}"
    );
}

#[test]
fn the_init_job_is_created_once_and_never_rewritten() {
    let cluster = cluster();
    cluster
        .reconcile::<TenantReconciler>(None, "acme")
        .expect("reconciles");
    let mut changed = tenant(&cluster);
    changed["spec"]["database"]["image"] = json!("postgres:18");
    cluster.seed(changed).expect("Tenant updated");
    cluster.take_writes();
    cluster
        .reconcile::<TenantReconciler>(None, "acme")
        .expect("reconciles");
    // The database follows the spec; the Job (immutable) is left alone.
    let db: StatefulSet = cluster.get(NS, "db").expect("db");
    let image = db.spec.template.spec.expect("pod").containers[0]
        .image
        .clone();
    assert_eq!(image.as_deref(), Some("postgres:18"));
    assert!(!cluster.writes().iter().any(|w| w.is("Job", "db-init")));
}
