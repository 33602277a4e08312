//! `rekon dev` as a user runs it: the process with its own kubeconfig,
//! kubectl against it, and names for objects not applied before.

use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// `rekon dev` with its arguments, until dropped.
pub struct Dev {
    pub child: Child,
    pub dir: tempfile::TempDir,
    pub kubeconfig: PathBuf,
}

impl Dev {
    /// Starts `rekon dev` with `args` and waits for its API server.
    pub fn start(args: &[&str]) -> Dev {
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = dir.path().join("kubeconfig");
        let child = Command::new(env!("CARGO_BIN_EXE_rekon"))
            .env_remove("KUBEBUILDER_ASSETS") // the in-memory server
            .arg("dev")
            .args(args)
            .arg("--write-kubeconfig")
            .arg(&kubeconfig)
            .env("REKON_CACHE_DIR", dir.path().join("cache"))
            .stderr(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let dev = Dev {
            child,
            dir,
            kubeconfig,
        };
        dev.until("the API server", || dev.kubeconfig.exists());
        dev
    }

    /// kubectl with `args` against its API server.
    pub fn kubectl(&self, args: &[&str]) -> Output {
        Command::new(super::kubectl_binary())
            .arg("--cache-dir")
            .arg(self.dir.path().join("kubectl-cache"))
            .args(args)
            .env("KUBECONFIG", &self.kubeconfig)
            .output()
            .expect("running kubectl")
    }

    /// `kubectl apply -f -` of `manifest` (YAML or JSON).
    pub fn apply(&self, manifest: &str, extra: &[&str]) -> Output {
        let path = self.dir.path().join(format!(
            "manifest-{}.yaml",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        std::fs::write(&path, manifest).unwrap();
        let mut args = vec!["apply", "-f", path.to_str().unwrap()];
        args.extend_from_slice(extra);
        self.kubectl(&args)
    }

    /// Waits (30 s at most) until `done`, or fails saying `what`.
    pub fn until(&self, what: &str, mut done: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !done() {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Dev {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A name not used before (an unchanged `kubectl apply` sends nothing,
/// so a probe repeated until a webhook answers needs a new object).
pub fn fresh(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!("{prefix}-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}
