//! `rekon check`: what it refuses (garbage, truncated, core modules,
//! components of another world or without the exports) and the manifest
//! it prints, for each contract version.

use std::process::Command;

use serde_json::{Value, json};

use crate::support::{rekon, stderr, stdout, write};

fn refused(name: &str, bytes: Vec<u8>, expected: &str) {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), name, bytes);
    let output = rekon(&["check", &path], dir.path());
    assert!(!output.status.success(), "{name}: accepted");
    let err = stderr(&output);
    assert!(
        err.contains(expected),
        "{name}: expected {expected:?} in the error, got: {err}"
    );
    assert!(stdout(&output).is_empty(), "{name}: printed a manifest");
}

#[test]
fn garbage_bytes_are_refused() {
    refused(
        "garbage.wasm",
        b"this is not wasm at all".to_vec(),
        "not a WebAssembly component",
    );
}

#[test]
fn truncated_component_is_refused() {
    let mut bytes = std::fs::read(rekon_test_artifacts::APP).unwrap();
    bytes.truncate(bytes.len() / 2);
    refused("truncated.wasm", bytes, "the component is invalid");
}

#[test]
fn core_module_is_refused() {
    refused(
        "core.wasm",
        wat::parse_str("(module (func (export \"reconcile\")))").unwrap(),
        "core WebAssembly module, not a component",
    );
}

#[test]
fn component_of_another_world_is_refused() {
    refused(
        "other-import.wasm",
        wat::parse_str(
            r#"(component (import "acme:thing/api@1.0.0" (instance (export "ping" (func)))))"#,
        )
        .unwrap(),
        "does not target the rekon:reconciler world",
    );
}

#[test]
fn component_without_the_exports_is_refused() {
    refused(
        "empty.wasm",
        wat::parse_str("(component)").unwrap(),
        "does not export the rekon:reconciler world",
    );
}

#[test]
fn app_manifest_is_printed() {
    let dir = tempfile::tempdir().unwrap();
    let output = rekon(&["check", rekon_test_artifacts::APP], dir.path());
    assert!(output.status.success(), "{}", stderr(&output));
    let manifest: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(manifest["name"], "app");
    assert_eq!(manifest["primary"]["kind"], "App");
    assert_eq!(manifest["primary"]["apiVersion"], "demo.rekon.dev/v1");
    let owns: Vec<&str> = manifest["owns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["kind"].as_str().unwrap())
        .collect();
    assert!(
        owns.contains(&"Deployment") && owns.contains(&"Service"),
        "{owns:?}"
    );
    assert!(manifest["finalizer"].is_string());
    assert_eq!(manifest["digest"].as_str().unwrap().len(), 64);
    assert_eq!(manifest["contract"], "rekon:reconciler@0.4.0");
    assert_eq!(manifest["world"], "operator");
    let webhooks = &manifest["webhooks"];
    assert_eq!(webhooks["mutating"][0]["name"], "default-apps");
    assert_eq!(webhooks["validating"][0]["name"], "validate-apps");
    assert_eq!(webhooks["validating"][0]["failurePolicy"], "Fail");
    assert_eq!(
        webhooks["validating"][0]["operations"],
        json!(["CREATE", "UPDATE"])
    );
    assert_eq!(webhooks["conversions"][0]["versions"], json!(["v1", "v2"]));
}

/// A component built for 0.3.0 is recognised as such (its exports are
/// 0.4.0's but `crds`; its imports say 0.3.0): an operator with its
/// webhooks, shipping no CRD.
#[test]
fn a_0_3_0_component_is_checked_as_built_for_0_3_0() {
    let dir = tempfile::tempdir().unwrap();
    let output = rekon(&["check", rekon_test_artifacts::APP_V0_3], dir.path());
    assert!(output.status.success(), "{}", stderr(&output));
    let manifest: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(manifest["contract"], "rekon:reconciler@0.3.0");
    assert_eq!(manifest["world"], "operator");
    assert_eq!(
        manifest["webhooks"]["validating"][0]["name"],
        "validate-apps"
    );
    assert_eq!(manifest["crds"], json!([]));
}

/// A component built for 0.2.0 is recognised as such (its exports are
/// those of 0.3.0's `reconciler`; its imports say 0.2.0).
#[test]
fn a_0_2_0_component_is_checked_as_built_for_0_2_0() {
    let dir = tempfile::tempdir().unwrap();
    let output = rekon(&["check", rekon_test_artifacts::APP_V0_2], dir.path());
    assert!(output.status.success(), "{}", stderr(&output));
    let manifest: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(manifest["contract"], "rekon:reconciler@0.2.0");
    assert_eq!(manifest["world"], "reconciler");
    assert_eq!(manifest["primaryPredicates"], json!(["generationChanged"]));
    assert_eq!(manifest["webhooks"]["validating"], json!([]));
}

/// A component built for 0.1.0 is recognised as such, and its manifest
/// reads as 0.1.0 behaved: every change passes, no selector, no resync.
#[test]
fn a_0_1_0_component_is_checked_as_built_for_0_1_0() {
    let dir = tempfile::tempdir().unwrap();
    let output = rekon(&["check", rekon_test_artifacts::APP_V0_1], dir.path());
    assert!(output.status.success(), "{}", stderr(&output));
    let manifest: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(manifest["contract"], "rekon:reconciler@0.1.0");
    assert_eq!(manifest["name"], "app");
    assert_eq!(manifest["primaryPredicates"], json!([]));
    assert!(manifest["primarySelector"].is_null() && manifest["resyncPeriodMs"].is_null());
    assert_eq!(manifest["owns"][0]["predicates"], json!([]));
}

#[test]
fn a_reader_that_goes_away_is_not_an_error() {
    // `rekon check app.wasm | head -0`: the pipe closes before the
    // manifest is written.
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_rekon"))
        .args(["check", rekon_test_artifacts::APP])
        .env("REKON_CACHE_DIR", dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success() && !stderr(&output).contains("panicked"),
        "{:?}: {}",
        output.status,
        stderr(&output)
    );
}
