//! One webhook, three languages: the ConfigMap sync's validation of
//! sources, built in Rust, JavaScript and Python, answers alike.

use std::process::Command;

use serde_json::{Value, json};

use crate::support::{path, stderr, stdout};

fn shared_cache() -> String {
    path("target/rekon-test-cache")
}

fn admit(module: &str, review: &Value) -> (Value, bool) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("review.json");
    std::fs::write(&file, review.to_string()).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_rekon"))
        .args(["admit", module, "--request", file.to_str().unwrap()])
        .env("REKON_CACHE_DIR", shared_cache())
        .output()
        .unwrap();
    let answer = serde_json::from_str(&stdout(&output))
        .unwrap_or_else(|e| panic!("{e}: {} {}", stdout(&output), stderr(&output)));
    (answer, output.status.success())
}

fn source(annotation: Option<&str>) -> Value {
    let mut cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": "team-a",
                     "labels": {"rekon.dev/sync": "true"}},
        "data": {"k": "v"}});
    if let Some(targets) = annotation {
        cm["metadata"]["annotations"] = json!({"rekon.dev/sync-to": targets});
    }
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": "s-1", "operation": "CREATE",
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "resource": {"group": "", "version": "v1", "resource": "configmaps"},
            "name": "settings", "namespace": "team-a", "userInfo": {"username": "u"},
            "object": cm}})
}

fn same_answers(module: &str) {
    let (missing, ok) = admit(module, &source(None));
    assert!(!ok, "{module}: {missing}");
    assert_eq!(missing["code"], 422, "{module}: {missing}");
    assert_eq!(
        missing["message"],
        "admission webhook \"validate-sources.configmap-sync.rekon.dev\" denied the request: \
             rekon.dev/sync-to must name at least one namespace"
            .replace(
                "configmap-sync",
                missing["webhook"]
                    .as_str()
                    .unwrap()
                    .split('.')
                    .nth(1)
                    .unwrap()
            ),
        "{module}"
    );
    let (bad, _) = admit(module, &source(Some("team-b, Team_C")));
    assert!(
        bad["message"]
            .as_str()
            .unwrap()
            .ends_with("rekon.dev/sync-to: \"Team_C\" is not a namespace name"),
        "{module}: {bad}"
    );
    let (own, ok) = admit(module, &source(Some("team-a,team-b")));
    assert!(ok, "{module}: {own}");
    assert_eq!(
        own["warnings"],
        json!(["rekon.dev/sync-to lists the source's own namespace team-a: it is skipped"]),
        "{module}"
    );
    let (fine, ok) = admit(module, &source(Some("team-b")));
    assert!(ok && fine["warnings"] == json!([]), "{module}: {fine}");
    // Not a source: no webhook is called.
    let mut plain = source(None);
    plain["request"]["object"]["metadata"]["labels"] = json!({});
    let (plain, ok) = admit(module, &plain);
    assert!(ok && plain["reviews"] == json!([]), "{module}: {plain}");
    // No conversion: the module's reason is the answer.
    let conversion = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "request": {"uid": "c", "desiredAPIVersion": "demo.rekon.dev/v2", "objects": [{}]}});
    let (answer, ok) = admit(module, &conversion);
    assert!(!ok);
    let message = answer["response"]["result"]["message"].as_str().unwrap();
    assert!(
        message.contains("convert") && message.contains("demo.rekon.dev/v2"),
        "{module}: {answer}"
    );
}

#[test]
fn rust_javascript_and_python_validate_sources_alike() {
    same_answers(rekon_test_artifacts::CONFIGMAP_SYNC);
    same_answers(rekon_test_artifacts::built(
        rekon_test_artifacts::CONFIGMAP_SYNC_JS,
    ));
    same_answers(rekon_test_artifacts::built(
        rekon_test_artifacts::CONFIGMAP_SYNC_PY,
    ));
}
