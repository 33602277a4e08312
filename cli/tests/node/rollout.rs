//! A rollout as the README documents it: a new version shipped beside the
//! serving one as a shadow (`rekon pack --rollout shadow`), promoted with
//! `rekon rollout promote` — written to the module's `Rollout`, so both
//! replicas serve it, and still serve it after a rolling restart, though
//! its ConfigMap still says `shadow` and the old one is still there.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::cluster::{Node, apply_text, text};
use crate::updates::with_custom_section;

/// Promotes a new version of the app module on `node` through
/// `rekon rollout promote`, then restarts the Deployment.
pub fn promoted(node: &Node, work: &Path, step: &dyn Fn(&str)) {
    step("a shadow version promoted with rekon rollout promote");
    let v1 = std::fs::read(rekon_test_artifacts::APP).expect("app.wasm");
    let v3 = with_custom_section(&v1, "v3: promoted through its Rollout");
    let (v1_digest, v3_digest) = (
        rekon_host::runtime::digest(&v1),
        rekon_host::runtime::digest(&v3),
    );
    let v3_wasm = work.join("app-v3.wasm");
    std::fs::write(&v3_wasm, &v3).expect("writing app-v3.wasm");
    // rekon pack app-v3.wasm --name app-v3 --namespace rekon-system --rollout shadow | kubectl apply -f -
    let packed = Command::new(env!("CARGO_BIN_EXE_rekon"))
        .arg("pack")
        .arg(&v3_wasm)
        .args(["--name", "app-v3", "--namespace", "rekon-system"])
        .args(["--rollout", "shadow"])
        .output()
        .expect("running rekon pack");
    assert!(packed.status.success(), "{}", text(&packed.stderr));
    apply_text(node, &text(&packed.stdout));
    let rollout = || node.json(&["-n", "rekon-system", "get", "rollouts.rekon.dev", "app"]);
    node.wait(
        "v3 as the candidate in the Rollout",
        Duration::from_secs(60),
        || {
            let rollout = rollout();
            (rollout["status"]["candidate"]["digest"] == v3_digest.as_str()).then_some(())
        },
    );
    assert_eq!(rollout()["status"]["serving"]["digest"], v1_digest.as_str());
    // The documented flow says nothing is wrong: no refusal, no error.
    let rejected = node.json(&[
        "-n",
        "rekon-system",
        "get",
        "events",
        "--field-selector",
        "reason=ModuleRejected,involvedObject.name=app-v3",
    ]);
    assert_eq!(rejected["items"], Value::Array(Vec::new()), "{rejected}");
    let logs = node.in_rekon(&["logs", "-l", "app.kubernetes.io/name=rekon", "--tail=-1"]);
    let errors: Vec<&str> = logs
        .lines()
        .filter(|l| l.contains("app-v3") && (l.contains("ERROR") || l.contains("WARN")))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let serving = |digest: &str| {
        let line =
            format!("rekon_module_info{{module=\"app\",version=\"0.1.0\",digest=\"{digest}\"}} 1");
        let metrics = node.metrics();
        (metrics.len() == 2 && metrics.iter().all(|(_, m)| m.contains(&line))).then_some(())
    };
    assert!(serving(&v1_digest).is_some(), "v1 serves before");

    // As the README says, with the admin's kubeconfig (inside the node's
    // network, where its API server listens).
    let kubeconfig = node.dir.join("admin.kubeconfig");
    let promote = node.inside(
        env!("CARGO_BIN_EXE_rekon"),
        &[
            "rollout",
            "promote",
            "app",
            "-n",
            "rekon-system",
            "--kubeconfig",
            kubeconfig.to_str().expect("a path"),
        ],
    );
    assert!(
        promote.status.success(),
        "rekon rollout promote: {}{}",
        text(&promote.stdout),
        text(&promote.stderr)
    );
    node.wait(
        "both replicas serving the promoted version",
        Duration::from_secs(60),
        || serving(&v3_digest),
    );

    step("the promoted version after a rolling restart");
    let names = |pods: Vec<Value>| -> Vec<String> {
        pods.iter()
            .filter_map(|p| p["metadata"]["name"].as_str().map(str::to_string))
            .collect()
    };
    let before = names(node.rekon_pods());
    node.in_rekon(&["rollout", "restart", "deploy/rekon"]);
    node.rolled_out();
    node.wait(
        "two new replicas serving the promoted version",
        Duration::from_secs(120),
        || {
            let now = names(node.rekon_pods());
            let fresh = now.len() == 2 && now.iter().all(|n| !before.contains(n));
            fresh.then(|| serving(&v3_digest)).flatten()
        },
    );
    let status = rollout()["status"].clone();
    assert_eq!(status["serving"]["digest"], v3_digest.as_str(), "{status}");
    let retired = status["retired"].as_array().and_then(|r| r.last());
    assert_eq!(
        retired.map(|r| r["digest"].clone()),
        Some(Value::from(v1_digest.as_str())),
        "{status}"
    );
    assert_eq!(status["lastDecision"]["action"], "Promote", "{status}");
}
