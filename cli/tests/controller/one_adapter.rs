//! Every way to run a module gives the same answers to its host calls:
//! `rekon reconcile` (the in-memory store), the SDK's native harness,
//! and a live host against the API server over HTTP.

use misbehave::{MODE_KEY, Misbehave, SCRIPT_KEY};
use rekon_sdk::testing::FakeCluster;
use serde_json::{Value, json};

use crate::support::Env;

/// The calls, and the start of the answer each must get.
fn script() -> (Value, Vec<&'static str>) {
    let cm = |call: &str, name: &str| {
        json!({"call": call, "apiVersion": "v1", "kind": "ConfigMap",
            "namespace": "default", "name": name})
    };
    let with = |mut call: Value, patch: &str, body: &str| {
        call["patch"] = json!(patch);
        call["body"] = json!(body);
        call
    };
    let cases = [
        // An apply body is YAML, as for a real server: a trailing comma is fine.
        (
            with(
                cm("patch", "applied"),
                "apply",
                r#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied", "namespace": "default"}, "data": {"a": "1",}}"#,
            ),
            "ok",
        ),
        (
            with(cm("create", ""), "", r#"{"metadata": {"name": "probe"}}"#),
            "409 AlreadyExists: configmaps \"probe\" already exists",
        ),
        (
            cm("get", "missing"),
            "404 NotFound: configmaps \"missing\" not found",
        ),
        (
            with(
                cm("patch", "applied"),
                "json",
                r#"[{"op": "test", "path": "/data/a", "value": "2"}]"#,
            ),
            "422 ",
        ),
        (
            with(
                cm("create", ""),
                "",
                r#"{"metadata": {"name": "Bad_Name"}}"#,
            ),
            "422 Invalid: ConfigMap \"Bad_Name\" is invalid",
        ),
        (
            json!({"call": "delete", "apiVersion": "v1", "kind": "Secret", "namespace": "default", "name": "victim"}),
            "403 Forbidden: module \"misbehave\" may not delete Secret/v1 in namespace \"default\": its manifest does not grant it",
        ),
        (
            with(
                cm("replace", "applied"),
                "",
                r#"{"metadata": {"name": "applied", "resourceVersion": "1"}, "data": {}}"#,
            ),
            "409 Conflict: Operation cannot be fulfilled on configmaps \"applied\"",
        ),
        (
            with(cm("patch", "missing"), "merge", "{}"),
            "404 NotFound: configmaps \"missing\" not found",
        ),
    ];
    let calls: Vec<Value> = cases.iter().map(|(c, _)| c.clone()).collect();
    let expected = cases.iter().map(|(_, e)| *e).collect();
    (json!(calls), expected)
}

fn probe_object() -> Value {
    let (calls, _) = script();
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "probe", "namespace": "default", "annotations": {
            MODE_KEY: "probe", SCRIPT_KEY: calls.to_string(),
        }},
    })
}

/// The `answer-<i>` entries of a ConfigMap's data, in order.
fn answers(data: &Value) -> Vec<String> {
    (0..)
        .map_while(|i| data[format!("answer-{i}")].as_str().map(str::to_string))
        .collect()
}

fn offline() -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let object = dir.path().join("probe.yaml");
    std::fs::write(&object, serde_yaml_ng::to_string(&probe_object()).unwrap()).unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_rekon"))
        .args(["reconcile", rekon_test_artifacts::MISBEHAVE, "--object"])
        .arg(&object)
        .env("REKON_CACHE_DIR", dir.path().join("cache"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    // The last merge patch is the module writing down its answers.
    let record: Value = stdout
        .lines()
        .rev()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|r| r["call"] == "patch" && r["args"]["patch"]["data"]["answer-0"].is_string())
        .unwrap_or_else(|| panic!("no answers written:\n{stdout}"));
    answers(&record["args"]["patch"]["data"])
}

fn harness() -> Vec<String> {
    let cluster = FakeCluster::new();
    cluster.seed(probe_object()).unwrap();
    cluster
        .reconcile::<Misbehave>(Some("default"), "probe")
        .unwrap();
    let cm = cluster
        .object(
            &rekon_sdk::Gvk::new("", "v1", "ConfigMap"),
            Some("default"),
            "probe",
        )
        .unwrap();
    answers(&cm["data"])
}

async fn live() -> Vec<String> {
    let mut env = Env::new().await;
    env.run(&[rekon_test_artifacts::MISBEHAVE], &[]);
    env.apply(probe_object());
    let cm = env
        .wait("the live answers", || {
            env.get("", "v1", "ConfigMap", Some("default"), "probe")
                .filter(|c| c["data"]["answer-0"].is_string())
        })
        .await;
    answers(&cm["data"])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_calls_get_the_same_answers_everywhere() {
    let (_, expected) = script();
    let offline = offline();
    assert_eq!(offline.len(), expected.len(), "{offline:#?}");
    for (answer, start) in offline.iter().zip(&expected) {
        assert!(
            answer.starts_with(start),
            "{answer:?} should start with {start:?}"
        );
    }
    assert_eq!(harness(), offline, "the SDK's harness");
    assert_eq!(live().await, offline, "a live host over HTTP");
}
