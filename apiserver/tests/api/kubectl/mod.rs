//! Behaviour seen through the installed kubectl, by subject; the helpers
//! that run it.

mod create;
mod get;

use std::path::Path;

use tokio::process::Command;

use crate::common::TestServer;

/// Runs kubectl against the server: whether it succeeded, its output and its errors.
async fn kubectl(t: &TestServer, args: &[&str]) -> (bool, String, String) {
    let cache = t.dir.path().join("cache");
    let out = Command::new("kubectl")
        .args(args)
        .arg("--cache-dir")
        .arg(&cache)
        .env("KUBECONFIG", t.kubeconfig_path())
        .output()
        .await
        .expect("kubectl runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs kubectl, which must succeed without a warning: its output.
pub(crate) async fn ok(t: &TestServer, args: &[&str]) -> String {
    let (success, out, err) = kubectl(t, args).await;
    assert!(success, "kubectl {args:?} failed: {err}\n{out}");
    assert!(!err.contains("warning"), "kubectl {args:?} warned: {err}");
    out
}

/// Writes a manifest into `dir`: its path.
pub(crate) fn write(dir: &Path, name: &str, body: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, body).expect("write manifest");
    p.display().to_string()
}
