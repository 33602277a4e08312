//! Installing as the README says (in a copy of deploy/, client-side then
//! server-side): two replicas Ready with one leader, the published
//! webhooks, an App reconciled into Ready pods, a denial and a conversion
//! through the webhook Service.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::json;

use crate::cluster::{
    APP_IMAGE, Node, all_reconciled, app, apply_text, root, text, too_many_replicas, wait,
};

/// Installs rekon on `node` from a copy of deploy/ in `work`; returns
/// that copy.
pub fn as_the_readme_says(node: &Node, work: &Path, step: &dyn Fn(&str)) -> PathBuf {
    // ---- install, as the README says (in a copy of deploy/).
    step("installing");
    let deploy = work.join("deploy");
    copy_dir(&root().join("deploy"), &deploy);
    let app_wasm = PathBuf::from(rekon_test_artifacts::APP);
    pack(&app_wasm, &deploy.join("modules/app.yaml"));
    let crd = root().join("guests/app/manifests/crd.yaml");
    node.k(&["apply", "-f", crd.to_str().expect("a path")]);
    node.k(&["apply", "-k", deploy.to_str().expect("a path")]);
    node.rolled_out();
    // Server-side apply over the client-side install works too.
    node.k(&[
        "apply",
        "--server-side",
        "-k",
        deploy.to_str().expect("a path"),
    ]);

    step("two replicas Ready, one leader");
    wait("two Ready rekon pods", Duration::from_secs(120), || {
        (node.ready() == 2).then_some(())
    });
    let pods = node.rekon_pods();
    let names: Vec<String> = pods
        .iter()
        .map(|p| {
            p["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    let leader = wait("a leader", Duration::from_secs(60), || {
        Some(node.leader()).filter(|l| !l.is_empty())
    });
    assert!(
        names.contains(&leader),
        "the leader {leader} is one of {names:?}"
    );
    wait(
        "exactly one replica leading",
        Duration::from_secs(30),
        || {
            let leading = node
                .metrics()
                .iter()
                .filter(|(_, m)| m.lines().any(|l| l == "rekon_leader 1"))
                .count();
            (leading == 1).then_some(())
        },
    );
    let validating = node.json(&["get", "validatingwebhookconfiguration", "rekon-app"]);
    assert_eq!(
        validating["webhooks"][0]["namespaceSelector"],
        json!({"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn",
            "values": ["kube-node-lease", "kube-public", "kube-system", "rekon-system"]}]}),
        "published webhooks leave the system namespaces and rekon's own alone"
    );

    step("an App reconciled into Ready pods");
    node.k(&["create", "namespace", "team-a"]);
    node.k(&["create", "namespace", "probe"]);
    apply_text(node, &app("web", "team-a", 2));
    apply_text(node, &app("probe", "probe", 0));
    wait(
        "the App web Ready with 2 replicas",
        Duration::from_secs(120),
        || all_reconciled(node, "team-a"),
    );

    step("a denial and a conversion through the webhook Service");
    let denied = too_many_replicas(node);
    assert!(!denied.status.success());
    assert!(
        text(&denied.stderr).contains(
            "admission webhook \"validate-apps.app.rekon.dev\" denied the request: spec.replicas must be between 0 and 100, not 500"
        ),
        "{}",
        text(&denied.stderr)
    );
    let v2 = node.json(&["-n", "team-a", "get", "apps.v2.demo.rekon.dev", "web"]);
    assert_eq!(v2["apiVersion"], "demo.rekon.dev/v2");
    assert_eq!(v2["spec"]["container"]["image"], APP_IMAGE, "{v2}");
    deploy
}

/// `rekon pack MODULE --name app` into `file` (as `make deploy-modules` does).
pub fn pack(module: &Path, file: &Path) {
    let output = Command::new(env!("CARGO_BIN_EXE_rekon"))
        .arg("pack")
        .arg(module)
        .args(["--name", "app"])
        .output()
        .expect("running rekon pack");
    assert!(
        output.status.success(),
        "rekon pack: {}",
        text(&output.stderr)
    );
    std::fs::write(file, &output.stdout).expect("writing the pack");
}

/// A copy of the folder `from` at `to`.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("a folder");
    for entry in std::fs::read_dir(from).expect("reading a folder") {
        let entry = entry.expect("an entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("a type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copying");
        }
    }
}
