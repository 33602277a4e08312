//! The example App operator end to end: owned objects, status, repair and
//! its finalizer; the same operator built for older contract versions
//! behaves as before on this host.

use crate::support::{Env, app, path};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn app_lifecycle_owned_objects_status_repair_and_finalizer() {
    lifecycle(rekon_test_artifacts::APP).await;
}

/// The same App operator built for `rekon:reconciler@0.1.0` (kept in
/// the test artifacts, never rebuilt): a newer host runs it exactly as
/// it ran before.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_component_built_for_contract_0_1_0_behaves_as_before() {
    lifecycle(rekon_test_artifacts::APP_V0_1).await;
}

/// Built for `rekon:reconciler@0.2.0` (kept, as the 0.1.0 build).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_component_built_for_contract_0_2_0_behaves_as_before() {
    lifecycle(rekon_test_artifacts::APP_V0_2).await;
}

/// Built for `rekon:reconciler@0.3.0` (kept, as the 0.1.0 build).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_component_built_for_contract_0_3_0_behaves_as_before() {
    lifecycle(rekon_test_artifacts::APP_V0_3).await;
}

async fn lifecycle(module: &str) {
    let mut env = Env::new().await;
    env.apply_file(&path("guests/app/manifests/crd.yaml"));
    env.run(&[module], &[]);
    env.apply(app("web", 2));

    let deployment = env
        .wait("the Deployment", || {
            env.get("apps", "v1", "Deployment", Some("default"), "web")
        })
        .await;
    assert_eq!(deployment["spec"]["replicas"], 2);
    let owner = &deployment["metadata"]["ownerReferences"][0];
    assert_eq!(
        (owner["kind"].as_str(), owner["name"].as_str()),
        (Some("App"), Some("web"))
    );
    assert_eq!(owner["controller"], true);
    env.wait("the Service", || {
        env.get("", "v1", "Service", Some("default"), "web")
    })
    .await;
    let status = env
        .wait("the App status", || {
            env.get("demo.rekon.dev", "v1", "App", Some("default"), "web")
                .filter(|a| a["status"]["observedGeneration"] == 1)
        })
        .await;
    assert!(
        status["status"]["conditions"]
            .as_array()
            .is_some_and(|c| c.iter().any(|c| c["type"] == "Ready")),
        "{status}"
    );

    // Editing the spec updates the Deployment and observedGeneration.
    env.apply(app("web", 5));
    env.wait("replicas 5", || {
        env.get("apps", "v1", "Deployment", Some("default"), "web")
            .filter(|d| d["spec"]["replicas"] == 5)
    })
    .await;
    env.wait("observedGeneration 2", || {
        env.get("demo.rekon.dev", "v1", "App", Some("default"), "web")
            .filter(|a| a["status"]["observedGeneration"] == 2)
    })
    .await;

    // A Deployment deleted by hand is repaired.
    let deployments = env.resource("apps", "v1", "Deployment");
    let before = deployment["metadata"]["uid"].clone();
    env.store()
        .delete(&deployments, Some("default"), "web", None)
        .unwrap();
    env.wait("the Deployment recreated", || {
        env.get("apps", "v1", "Deployment", Some("default"), "web")
            .filter(|d| d["metadata"]["uid"] != before)
    })
    .await;

    // Deleting the App runs the finalizer's cleanup; everything goes.
    let apps = env.resource("demo.rekon.dev", "v1", "App");
    env.store()
        .delete(&apps, Some("default"), "web", None)
        .unwrap();
    env.wait("the App gone", || {
        env.get("demo.rekon.dev", "v1", "App", Some("default"), "web")
            .is_none()
            .then_some(())
    })
    .await;
    env.wait("owned objects gone", || {
        (env.get("apps", "v1", "Deployment", Some("default"), "web")
            .is_none()
            && env
                .get("", "v1", "Service", Some("default"), "web")
                .is_none())
        .then_some(())
    })
    .await;
}
