//! `rekon admit`: admission and conversion reviews answered offline, by
//! one webhook or the whole chain, for components of each contract version.

use std::path::Path;
use std::process::Command;

use base64::Engine as _;
use serde_json::{Value, json};

use crate::support::{stderr, stdout};

fn rekon_admit(dir: &Path, module: &str, review: &Value, extra: &[&str]) -> (Value, bool) {
    let file = dir.join("review.json");
    std::fs::write(&file, review.to_string()).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_rekon"))
        .args(["admit", module, "--request", file.to_str().unwrap()])
        .args(extra)
        .env("REKON_CACHE_DIR", dir.join("cache"))
        .output()
        .unwrap();
    let answer = serde_json::from_str(&stdout(&output))
        .unwrap_or_else(|e| panic!("{e}: {} {}", stdout(&output), stderr(&output)));
    (answer, output.status.success())
}

fn review(operation: &str, object: Value) -> Value {
    json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {
            "uid": "review-1",
            "kind": {"group": "demo.rekon.dev", "version": "v1", "kind": "App"},
            "resource": {"group": "demo.rekon.dev", "version": "v1", "resource": "apps"},
            "name": "web", "namespace": "default", "operation": operation,
            "userInfo": {"username": "alice"},
            "object": object,
        }
    })
}

/// One webhook's AdmissionReview answer, the whole chain's outcome,
/// and a ConversionReview there and back, offline.
#[test]
fn rekon_admit_answers_admission_and_conversion_reviews() {
    admit_scenario(rekon_test_artifacts::APP);
}

/// The App operator built for `rekon:reconciler@0.3.0` (kept in the
/// test artifacts, never rebuilt) answers the same reviews alike.
#[test]
fn a_component_built_for_contract_0_3_0_answers_reviews_as_before() {
    admit_scenario(rekon_test_artifacts::APP_V0_3);
}

fn admit_scenario(module: &str) {
    let dir = tempfile::tempdir().unwrap();
    let app = json!({"apiVersion": "demo.rekon.dev/v1", "kind": "App",
        "metadata": {"name": "web", "namespace": "default", "uid": "u-1"},
        "spec": {"image": "nginx"}});
    let (answer, ok) = rekon_admit(
        dir.path(),
        module,
        &review("CREATE", app.clone()),
        &["--webhook", "default-apps"],
    );
    assert!(ok);
    assert_eq!(answer["kind"], "AdmissionReview");
    assert_eq!(answer["response"]["uid"], "review-1");
    assert_eq!(answer["response"]["patchType"], "JSONPatch");
    let patch = base64::engine::general_purpose::STANDARD
        .decode(answer["response"]["patch"].as_str().unwrap())
        .unwrap();
    let mut patch: Vec<Value> = serde_json::from_slice(&patch).unwrap();
    // Two independent adds, in whatever order the guest's JSON maps
    // keep keys (a build with serde_json's preserve_order lists them
    // as written, one without it sorted).
    patch.sort_by_key(|op| op["path"].as_str().unwrap_or_default().to_string());
    assert_eq!(
        patch,
        [
            json!({"op": "add", "path": "/spec/port", "value": 80}),
            json!({"op": "add", "path": "/spec/replicas", "value": 1}),
        ]
    );

    let mut bad = app.clone();
    bad["spec"]["replicas"] = json!(1000);
    let (answer, ok) = rekon_admit(dir.path(), module, &review("UPDATE", bad), &[]);
    assert!(!ok, "a denial exits non-zero");
    assert_eq!(answer["allowed"], false);
    assert_eq!(answer["code"], 422);
    assert_eq!(answer["webhook"], "validate-apps.app.rekon.dev");
    assert_eq!(
        answer["reviews"].as_array().unwrap().len(),
        2,
        "mutating, then validating"
    );

    let (answer, ok) = rekon_admit(dir.path(), module, &review("CREATE", app.clone()), &[]);
    assert!(ok);
    assert_eq!(
        answer["object"]["spec"],
        json!({"image": "nginx", "replicas": 1, "port": 80})
    );

    let mut v1 = app.clone();
    v1["spec"] = json!({"image": "nginx", "replicas": 2, "port": 8080});
    let conversion = |objects: Vec<Value>, to: &str| {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
               "request": {"uid": "c-1", "desiredAPIVersion": to, "objects": objects}})
    };
    let (answer, ok) = rekon_admit(
        dir.path(),
        module,
        &conversion(vec![v1.clone()], "demo.rekon.dev/v2"),
        &[],
    );
    assert!(ok, "{answer}");
    let v2 = answer["response"]["convertedObjects"][0].clone();
    assert_eq!(v2["apiVersion"], "demo.rekon.dev/v2");
    assert_eq!(
        v2["spec"],
        json!({"replicas": 2, "container": {"image": "nginx", "port": 8080}})
    );
    assert_eq!(v2["metadata"], v1["metadata"]);
    let (back, ok) = rekon_admit(
        dir.path(),
        module,
        &conversion(vec![v2], "demo.rekon.dev/v1"),
        &[],
    );
    assert!(ok, "{back}");
    assert_eq!(
        back["response"]["convertedObjects"][0], v1,
        "nothing is lost"
    );

    let (answer, ok) = rekon_admit(
        dir.path(),
        module,
        &conversion(vec![v1], "demo.rekon.dev/v9"),
        &[],
    );
    assert!(!ok);
    assert_eq!(answer["response"]["result"]["status"], "Failure");
    assert!(
        answer["response"]["result"]["message"]
            .as_str()
            .unwrap()
            .contains("no version demo.rekon.dev/v9"),
        "{answer}"
    );
}
