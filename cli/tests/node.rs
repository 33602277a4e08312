//! rekon installed the way its README says, on a real one-node Kubernetes
//! 1.36 (kube-apiserver, etcd, kube-controller-manager, kube-scheduler,
//! kubelet, kube-proxy, containerd and runc, in network namespaces of its
//! own: `tests/node/node.sh`), from an image built by `tools/image.sh`
//! out of this build's `rekon` binary.
//!
//! One scenario, in the order a user lives it: install (`rekon pack`,
//! `kubectl apply -k deploy/`, client-side, then server-side), two replicas
//! Ready with one leader, an App reconciled into Ready pods, a denial and a
//! conversion through the webhook Service, a module updated in place, a
//! garbage module refused with an Event, a rollback, a shadow version
//! promoted with `rekon rollout promote` and served by both replicas
//! through a rolling restart; then a rolling
//! restart, a scale from 2 to 1 and back, a graceful leader kill and a
//! crash, while a write the validating webhook must refuse is sent every
//! 100 ms (refused at every moment, and by the webhook itself outside the
//! crash) and Apps are edited (every edit reconciled afterwards); the app
//! module sharded over 3 replicas with the README's overlay; finally
//! `kubectl delete -k deploy/` leaves no webhook configuration, conversion,
//! Lease or namespace behind, and `rekon uninstall` finds nothing left.
//!
//! It needs root, `KUBEBUILDER_ASSETS` with the node's binaries (CI: from
//! `../shared/kube/unpack.sh`), and containerd, runc, the CNI plugins,
//! umoci, skopeo, iptables and curl (Debian packages); without them it is
//! skipped, saying why — unless `REKON_NODE_E2E=require` (CI), where a
//! missing piece fails it.

#[path = "node/churn.rs"]
mod churn;
#[path = "node/cluster.rs"]
mod cluster;
#[path = "node/install.rs"]
mod install;
#[path = "node/rollout.rs"]
mod rollout;
#[path = "node/sharding.rs"]
mod sharding;
#[path = "node/uninstall.rs"]
mod uninstall;
#[path = "node/updates.rs"]
mod updates;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use cluster::{Node, root, text};

/// The folder of the node's binaries, or why the test cannot run here.
fn prerequisites() -> Result<PathBuf, String> {
    let assets = std::env::var_os("KUBEBUILDER_ASSETS")
        .map(PathBuf::from)
        .ok_or("KUBEBUILDER_ASSETS is not set (the folder of the Kubernetes binaries)")?;
    let mut missing: Vec<String> = [
        "etcd",
        "kube-apiserver",
        "kube-controller-manager",
        "kube-scheduler",
        "kubelet",
        "kube-proxy",
        "kubectl",
        "pause",
    ]
    .iter()
    .filter(|b| !assets.join(b).is_file())
    .map(|b| format!("{} in KUBEBUILDER_ASSETS", b))
    .collect();
    for tool in [
        "/usr/bin/containerd",
        "/usr/bin/ctr",
        "/usr/sbin/runc",
        "/usr/lib/cni/bridge",
        "/usr/lib/cni/host-local",
        "/usr/lib/cni/portmap",
    ] {
        if !Path::new(tool).exists() {
            missing.push(tool.to_string());
        }
    }
    for tool in [
        "umoci", "skopeo", "nsenter", "ip", "iptables", "curl", "openssl",
    ] {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            missing.push(tool.to_string());
        }
    }
    // Root: the effective uid, as `id -u` prints it.
    let uid = Command::new("id")
        .arg("-u")
        .output()
        .map_or(String::new(), |o| {
            String::from_utf8_lossy(&o.stdout).trim().to_string()
        });
    if uid != "0" {
        missing.push("root (network namespaces, mounts, cgroups)".to_string());
    }
    if missing.is_empty() {
        Ok(assets)
    } else {
        Err(format!("missing: {}", missing.join(", ")))
    }
}

#[test]
fn installed_as_the_readme_says_on_a_real_node() {
    let assets = match prerequisites() {
        Ok(assets) => assets,
        Err(why) if std::env::var("REKON_NODE_E2E").as_deref() == Ok("require") => {
            panic!("REKON_NODE_E2E=require, and the real-node test cannot run: {why}")
        }
        Err(why) => {
            eprintln!("skipped: the real-node test needs a real node: {why}");
            return;
        }
    };
    let work = tempfile::tempdir().expect("a temporary directory");
    let started = Instant::now();
    let step = |what: &str| eprintln!("[{:>5.1} s] {what}", started.elapsed().as_secs_f64());

    // The image, as `make image` builds it, from this build's binary.
    step("building the image");
    let image = work.path().join("rekon.tar");
    let built = Command::new("bash")
        .arg(root().join("tools/image.sh"))
        .arg(&image)
        .arg(env!("CARGO_BIN_EXE_rekon"))
        .output()
        .expect("running tools/image.sh");
    assert!(
        built.status.success(),
        "tools/image.sh: {}{}",
        text(&built.stdout),
        text(&built.stderr)
    );

    step("starting the node");
    let node = Node {
        dir: work.path().join("node"),
        assets: assets.clone(),
    };
    let up = Command::new("bash")
        .arg(root().join("tests/node/node.sh"))
        .arg("up")
        .arg(&node.dir)
        .arg(&image)
        .env("KUBEBUILDER_ASSETS", &assets)
        .output()
        .expect("running node.sh");
    assert!(up.status.success(), "node.sh up: {}", text(&up.stderr));

    let deploy = install::as_the_readme_says(&node, work.path(), &step);
    updates::in_place(&node, work.path(), &deploy, &step);
    rollout::promoted(&node, work.path(), &step);
    churn::replicas_come_and_go(&node, &step);
    sharding::three_replicas(&node, work.path(), &step);
    uninstall::as_the_readme_says(&node, &deploy, &step);
    step("done");
}
