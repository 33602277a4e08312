//! CRDs shipped inside a module (contract 0.4.0): `rekon crd` prints them,
//! `rekon check` lists them, `rekon run --install-crds` applies them before
//! the controller starts. (`rekon dev` installing them: the runtime tests'
//! `dev_runs_the_example_guests_against_the_embedded_server`.)

use std::process::Command;

use serde_json::{Value, json};

use super::support::{Env, app, path};

fn rekon(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_rekon"))
        .args(args)
        .env("REKON_CACHE_DIR", path("target/rekon-test-cache"))
        .output()
        .expect("running rekon")
}

/// `rekon crd app.wasm` prints the CRD the app's Rust types make, which is
/// the checked-in `manifests/crd.yaml`; the 0.3.0 build ships none.
#[test]
fn rekon_crd_prints_the_crd_the_module_ships() {
    let output = rekon(&["crd", rekon_test_artifacts::APP]);
    assert!(output.status.success(), "{output:?}");
    let printed: Vec<Value> =
        serde_yaml::Deserializer::from_str(&String::from_utf8_lossy(&output.stdout))
            .map(|d| serde::Deserialize::deserialize(d).unwrap())
            .collect();
    let checked_in: Value = serde_yaml::from_str(
        &std::fs::read_to_string(path("guests/app/manifests/crd.yaml")).unwrap(),
    )
    .unwrap();
    assert_eq!(printed, vec![checked_in]);

    let output = rekon(&["crd", "--json", rekon_test_artifacts::APP]);
    let list: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(list["items"][0]["metadata"]["name"], "apps.demo.rekon.dev");

    let output = rekon(&["check", rekon_test_artifacts::APP]);
    let manifest: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(
        manifest["crds"],
        json!([{"name": "apps.demo.rekon.dev", "kind": "App", "scope": "Namespaced",
                "versions": ["v1", "v2"], "storage": "v1"}])
    );

    let output = rekon(&["crd", rekon_test_artifacts::APP_V0_3]);
    assert!(output.status.success());
    assert!(output.stdout.is_empty());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("ships no CustomResourceDefinition"),
        "{output:?}"
    );
}

/// `rekon run --install-crds` on a cluster without the App CRD applies it
/// (server-side, as `rekon-crds`), and the controller then reconciles an
/// App; without the flag the host leaves CRDs alone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_install_crds_applies_them_before_the_controller_starts() {
    let mut env = Env::new().await;
    env.use_shared_cache();
    env.run(&[rekon_test_artifacts::APP], &["--install-crds"]);
    let crd = env
        .wait_long("the App CRD", || {
            env.get(
                "apiextensions.k8s.io",
                "v1",
                "CustomResourceDefinition",
                None,
                "apps.demo.rekon.dev",
            )
        })
        .await;
    assert_eq!(crd["metadata"]["managedFields"][0]["manager"], "rekon-crds");
    let served: Vec<&Value> = crd["spec"]["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| &v["name"])
        .collect();
    assert_eq!(served, [&json!("v1"), &json!("v2")]);
    env.apply(app("installed", 2));
    env.wait("the App reconciled", || {
        env.get("demo.rekon.dev", "v1", "App", Some("default"), "installed")
            .filter(|a| a["status"]["observedGeneration"] == 1)
    })
    .await;
    assert!(
        env.log().contains("CRD applied"),
        "the host says what it applied:\n{}",
        env.log()
    );

    // Without --install-crds: nothing is applied.
    let mut bare = Env::new().await;
    bare.use_shared_cache();
    bare.run(&[rekon_test_artifacts::APP], &[]);
    bare.wait_long("the module loaded", || {
        bare.log().contains("module loaded").then_some(())
    })
    .await;
    assert!(
        bare.store()
            .resource_for_kind("demo.rekon.dev", "v1", "App")
            .is_none(),
        "a host without --install-crds installed the App CRD"
    );
}
