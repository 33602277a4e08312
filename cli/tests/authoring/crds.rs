//! CRDs shipped inside a module (contract 0.4.0): `rekon crd` prints them,
//! `rekon check` lists them, `rekon run --install-crds` applies them before
//! the controller starts, and a module that says them wrong is told so
//! without stopping anything. (`rekon dev` installing them: the runtime
//! tests' `dev_runs_the_example_guests_against_the_embedded_server`.)

use std::process::Command;

use serde_json::{Value, json};

use super::support::{Env, app, misbehave_with, path};

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
        serde_yaml_ng::Deserializer::from_str(&String::from_utf8_lossy(&output.stdout))
            .map(|d| serde::Deserialize::deserialize(d).unwrap())
            .collect();
    let checked_in: Value = serde_yaml_ng::from_str(
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
    // Applied by rekon-crds (the API server's own controllers own the
    // status they set).
    let appliers: Vec<&Value> = crd["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["operation"] == "Apply")
        .map(|e| &e["manager"])
        .collect();
    assert_eq!(appliers, [&json!("rekon-crds")]);
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

/// `misbehave` with its CRD broken: not a CRD any more (its kind renamed),
/// or not JSON (its `crds` panics).
fn broken_crd(from: &str, to: &str) -> Vec<u8> {
    let crd = misbehave::CRD.replace(from, to);
    assert_ne!(crd, misbehave::CRD);
    misbehave_with(misbehave::CRD, &crd)
}

/// A module whose CRDs are wrong: `rekon check` and `rekon crd` say what is
/// wrong and fail; `rekon run --install-crds` says it, installs nothing and
/// runs the controller all the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_crds_are_reported_and_the_controller_runs_anyway() {
    let dir = tempfile::tempdir().unwrap();
    let output = rekon(&["check", rekon_test_artifacts::MISBEHAVE]);
    assert!(output.status.success(), "{output:?}");
    let manifest: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(manifest["crds"][0]["name"], "troubles.misbehave.rekon.dev");

    let not_a_crd = dir.path().join("not-a-crd.wasm");
    std::fs::write(
        &not_a_crd,
        broken_crd("CustomResourceDefinition", "CustomResourceDefinitioX"),
    )
    .unwrap();
    let not_json = dir.path().join("not-json.wasm");
    std::fs::write(&not_json, broken_crd(r#""scope":"#, r#""scope"!"#)).unwrap();
    for (module, says) in [
        (
            &not_a_crd,
            "must be apiVersion apiextensions.k8s.io/v1, kind CustomResourceDefinition",
        ),
        (&not_json, "misbehave's CRD is JSON"),
    ] {
        for command in ["check", "crd"] {
            let output = rekon(&[command, module.to_str().unwrap()]);
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(
                !output.status.success(),
                "rekon {command} accepted {module:?}"
            );
            assert!(stderr.contains(says), "rekon {command}: {stderr}");
        }
    }

    let mut env = Env::new().await;
    env.use_shared_cache();
    env.run(&[not_json.to_str().unwrap()], &["--install-crds"]);
    env.apply(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "still-served", "namespace": "default"}, "data": {}}));
    env.wait("the ConfigMap reconciled", || {
        env.get("", "v1", "ConfigMap", Some("default"), "still-served")
            .filter(|c| c["data"]["behaved-by"] == misbehave::BUILD_MARK)
    })
    .await;
    let log = env.log();
    assert!(
        log.contains("cannot install the CRDs the module ships")
            && log.contains("misbehave's CRD is JSON"),
        "the host says why:\n{log}"
    );
    assert!(
        env.store()
            .resource_for_kind("misbehave.rekon.dev", "v1", "Trouble")
            .is_none()
    );
}
