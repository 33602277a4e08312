//! Uninstalling as the README says: `kubectl delete -k deploy/` leaves no
//! webhook configuration, conversion, Lease or namespace behind, Apps work
//! without rekon, and `rekon uninstall` finds nothing left.

use std::path::Path;
use std::time::Duration;

use serde_json::json;

use crate::cluster::{Node, text, wait};

/// Uninstalls rekon from `node` with `deploy`, and checks nothing is left.
pub fn as_the_readme_says(node: &Node, deploy: &Path, step: &dyn Fn(&str)) {
    // ---- uninstall, as the README says.
    step("uninstalling");
    let deleted = node.kubectl(&[
        "delete",
        "-k",
        deploy.to_str().expect("a path"),
        "--timeout=180s",
    ]);
    assert!(
        deleted.status.success(),
        "kubectl delete -k: {}",
        text(&deleted.stderr)
    );
    assert!(
        text(&deleted.stderr).contains("rekon is uninstalled"),
        "kubectl shows what rekon took back: {}",
        text(&deleted.stderr)
    );
    wait("the namespace gone", Duration::from_secs(120), || {
        (!node
            .kubectl(&["get", "namespace", "rekon-system"])
            .status
            .success())
        .then_some(())
    });
    let left = node.k(&[
        "get",
        "validatingwebhookconfigurations,mutatingwebhookconfigurations",
        "-o",
        "name",
    ]);
    assert_eq!(left.trim(), "", "no webhook configuration left");
    let crd = node.json(&["get", "crd", "apps.demo.rekon.dev"]);
    assert_eq!(
        crd["spec"]["conversion"],
        json!({"strategy": "None"}),
        "the conversion is off again"
    );
    assert!(
        crd["metadata"]["labels"]["rekon.dev/converted-by"].is_null(),
        "{crd}"
    );
    let leases = node.k(&[
        "get",
        "leases",
        "-A",
        "-l",
        "app.kubernetes.io/managed-by=rekon",
        "-o",
        "name",
    ]);
    assert_eq!(leases.trim(), "", "no Lease left");
    for kind in ["clusterrole", "clusterrolebinding"] {
        let out = node.k(&["get", kind, "-o", "name"]);
        assert!(!out.contains("rekon"), "no {kind} of rekon's left: {out}");
    }
    // Writes and reads of Apps work without rekon.
    node.k(&[
        "-n",
        "team-a",
        "patch",
        "app.v1.demo.rekon.dev",
        "web",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"replicas":1}}"#,
    ]);
    node.k(&["get", "apps", "-A"]);
    let again = node.inside(
        env!("CARGO_BIN_EXE_rekon"),
        &[
            "uninstall",
            "--kubeconfig",
            node.dir.join("admin.kubeconfig").to_str().expect("a path"),
        ],
    );
    assert!(
        again.status.success(),
        "rekon uninstall: {}",
        text(&again.stderr)
    );
    assert_eq!(
        text(&again.stdout).trim(),
        "nothing of rekon's left for service rekon-system/rekon-webhooks:443"
    );
}
