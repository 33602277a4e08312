//! Migrations against the embedded API server: objects written in v1, the
//! CRD then storing v2.

use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use serde_json::{Value, json};

use super::*;

async fn cluster() -> (rekon_apiserver::RunningServer, kube::Client) {
    let server = rekon_apiserver::ApiServer::builder().start().await.unwrap();
    let kubeconfig = kube::config::Kubeconfig::from_yaml(&server.kubeconfig()).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .unwrap();
    (server, kube::Client::try_from(config).unwrap())
}

fn version(name: &str, storage: bool) -> Value {
    json!({"name": name, "served": true, "storage": storage, "schema": {"openAPIV3Schema": {
        "type": "object",
        "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer"}}}},
    }}})
}

fn crd(versions: Vec<Value>) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.migrate.rekon.dev"},
        "spec": {
            "group": "migrate.rekon.dev", "scope": "Namespaced",
            "names": {"kind": "Gadget", "plural": "gadgets", "singular": "gadget", "listKind": "GadgetList"},
            "versions": versions,
        },
    })
}

async fn apply_crd(client: &kube::Client, body: Value) -> Result<Value, kube::Error> {
    let crds = crate::webhook::apis::crds(client);
    let params = PatchParams::apply("test").force();
    let applied = crds
        .patch("gadgets.migrate.rekon.dev", &params, &Patch::Apply(body))
        .await?;
    Ok(serde_json::to_value(applied).unwrap())
}

fn gadgets(client: &kube::Client, version: &str) -> Api<DynamicObject> {
    let resource = kube::api::ApiResource {
        group: "migrate.rekon.dev".into(),
        version: version.into(),
        api_version: format!("migrate.rekon.dev/{version}"),
        kind: "Gadget".into(),
        plural: "gadgets".into(),
    };
    Api::namespaced_with(client.clone(), "default", &resource)
}

/// A server whose Gadget CRD stores v1, and the v1 Gadgets.
async fn gadgets_in_v1() -> (
    rekon_apiserver::RunningServer,
    kube::Client,
    Api<DynamicObject>,
) {
    let (server, client) = cluster().await;
    apply_crd(&client, crd(vec![version("v1", true)]))
        .await
        .unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let v1 = gadgets(&client, "v1");
    (server, client, v1)
}

#[tokio::test]
async fn objects_stored_in_the_old_version_are_written_back_and_it_can_go() {
    let (_server, client, v1) = gadgets_in_v1().await;
    let mut versions = Vec::new();
    for i in 0..23 {
        let gadget: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "migrate.rekon.dev/v1", "kind": "Gadget",
            "metadata": {"name": format!("g{i:02}")}, "spec": {"size": i},
        }))
        .unwrap();
        let created = v1.create(&PostParams::default(), &gadget).await.unwrap();
        versions.push(created.metadata.resource_version.unwrap());
    }
    // v2 becomes the storage version; v1 objects stay as they were written.
    let both = apply_crd(
        &client,
        crd(vec![version("v1", false), version("v2", true)]),
    )
    .await
    .unwrap();
    assert_eq!(both["status"]["storedVersions"], json!(["v1", "v2"]));
    // v1 cannot go while objects may be stored in it.
    let refused = apply_crd(&client, crd(vec![version("v2", true)])).await;
    assert!(
        refused.is_err(),
        "v1 removed while still stored: {refused:?}"
    );

    let config = MigrateConfig {
        writes_per_second: 10_000.0,
        page_size: 5,
        ..MigrateConfig::default()
    };
    let metrics = std::sync::Arc::new(crate::telemetry::Metrics::new());
    let migrator = Migrator::new(client.clone(), config, None).metrics(metrics.clone());
    let outcome = migrator.migrate("gadgets.migrate.rekon.dev").await;
    assert_eq!(outcome, Outcome::Done { migrated: 23 });
    let served = metrics.encode();
    for series in [
        r#"rekon_migration_objects{crd="gadgets.migrate.rekon.dev",state="migrated"} 23"#,
        r#"rekon_migration_objects{crd="gadgets.migrate.rekon.dev",state="total"} 23"#,
        r#"rekon_migrations_total{crd="gadgets.migrate.rekon.dev",state="done"} 1"#,
    ] {
        assert!(served.contains(series), "{series} not in\n{served}");
    }

    // Every object was written again (in v2), unchanged.
    let listed = gadgets(&client, "v2")
        .list(&Default::default())
        .await
        .unwrap();
    assert_eq!(listed.items.len(), 23);
    for (i, gadget) in listed.items.iter().enumerate() {
        assert_ne!(
            gadget.metadata.resource_version.as_ref(),
            Some(&versions[i])
        );
        assert_eq!(gadget.data["spec"]["size"], json!(i));
    }
    let progress = progress::Book::new(client.clone(), "default", "rekon")
        .load("gadgets.migrate.rekon.dev")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (progress.state.as_str(), progress.migrated, progress.total),
        ("done", 23, 23)
    );
    // storedVersions says v2 alone, so v1 can be removed now.
    let dropped = apply_crd(&client, crd(vec![version("v2", true)]))
        .await
        .unwrap();
    assert_eq!(dropped["status"]["storedVersions"], json!(["v2"]));
    // Nothing more to do.
    assert_eq!(
        migrator.migrate("gadgets.migrate.rekon.dev").await,
        Outcome::NotDue
    );
}

/// Converts Gadgets between v1 and v2 by changing `apiVersion`, and
/// forgets `spec.size` on the way to v1.
struct ForgetsSize;

#[async_trait::async_trait]
impl Converter for ForgetsSize {
    async fn convert(&self, object: &Value, api_version: &str) -> Result<Value, String> {
        let mut out = object.clone();
        out["apiVersion"] = api_version.into();
        if api_version.ends_with("/v1")
            && let Some(spec) = out["spec"].as_object_mut()
        {
            spec.remove("size");
        }
        Ok(out)
    }

    fn converts(&self, group: &str, kind: &str) -> bool {
        group == "migrate.rekon.dev" && kind == "Gadget"
    }
}

#[tokio::test]
async fn a_conversion_that_loses_a_field_is_refused_before_anything_is_written() {
    let (_server, client, v1) = gadgets_in_v1().await;
    let gadget: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "migrate.rekon.dev/v1", "kind": "Gadget",
        "metadata": {"name": "g"}, "spec": {"size": 3},
    }))
    .unwrap();
    let created = v1.create(&PostParams::default(), &gadget).await.unwrap();
    apply_crd(
        &client,
        crd(vec![version("v1", false), version("v2", true)]),
    )
    .await
    .unwrap();
    let migrator = Migrator::new(
        client.clone(),
        MigrateConfig::default(),
        Some(std::sync::Arc::new(ForgetsSize)),
    );
    let outcome = migrator.migrate("gadgets.migrate.rekon.dev").await;
    assert_eq!(
        outcome,
        Outcome::Refused(
            "default/g: converted to migrate.rekon.dev/v1 and back, .spec.size is not what it was"
                .into()
        )
    );
    let after = v1.get("g").await.unwrap();
    assert_eq!(
        after.metadata.resource_version,
        created.metadata.resource_version
    );
    let crds = crate::webhook::apis::crds(&client);
    let now = serde_json::to_value(crds.get("gadgets.migrate.rekon.dev").await.unwrap()).unwrap();
    assert_eq!(now["status"]["storedVersions"], json!(["v1", "v2"]));
    let progress = progress::Book::new(client, "default", "rekon")
        .load("gadgets.migrate.rekon.dev")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(progress.state, "refused");
    assert!(
        progress.message.contains(".spec.size"),
        "{}",
        progress.message
    );
}

/// Several writes in flight do not outrun the configured rate: 12 objects
/// at 20 a second take at least 11 gaps of 50 ms.
#[tokio::test]
async fn writes_back_keep_to_the_configured_rate() {
    let (_server, client, v1) = gadgets_in_v1().await;
    for i in 0..12 {
        let gadget: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "migrate.rekon.dev/v1", "kind": "Gadget",
            "metadata": {"name": format!("g{i:02}")}, "spec": {"size": i},
        }))
        .unwrap();
        v1.create(&PostParams::default(), &gadget).await.unwrap();
    }
    apply_crd(
        &client,
        crd(vec![version("v1", false), version("v2", true)]),
    )
    .await
    .unwrap();
    let config = MigrateConfig {
        writes_per_second: 20.0,
        page_size: 5,
        ..MigrateConfig::default()
    };
    let migrator = Migrator::new(client.clone(), config, None);
    let started = std::time::Instant::now();
    let outcome = migrator.migrate("gadgets.migrate.rekon.dev").await;
    let took = started.elapsed();
    assert_eq!(outcome, Outcome::Done { migrated: 12 });
    assert!(
        took >= std::time::Duration::from_millis(550),
        "12 writes at 20 a second in {took:?}"
    );
}
