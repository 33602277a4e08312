//! Commands the tests run and what they print: the real `rekon` binary
//! with a cache of its own, kubectl against a kubeconfig, and a process
//! stopped with SIGTERM.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// Runs the `rekon` binary with `args`, its compile cache in `cache`.
pub fn rekon(args: &[&str], cache: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rekon"))
        .args(args)
        .env("REKON_CACHE_DIR", cache)
        .env_remove("RUST_LOG")
        .output()
        .expect("running rekon")
}

/// What a command printed on its standard output.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// What a command printed on its standard error.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Writes `bytes` to `dir/name` and returns the path.
pub fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("writing a test file");
    path.to_string_lossy().into_owned()
}

/// The kubectl to run: the one beside the real binaries
/// (`$KUBEBUILDER_ASSETS/kubectl`, of the server's version) when there is
/// one, else the one on `PATH`.
pub fn kubectl_binary() -> std::path::PathBuf {
    std::env::var_os("KUBEBUILDER_ASSETS")
        .map(|assets| Path::new(&assets).join("kubectl"))
        .filter(|k| k.is_file())
        .unwrap_or_else(|| "kubectl".into())
}

/// Runs kubectl with `args` against the cluster of `kubeconfig`.
pub fn kubectl(kubeconfig: &Path, args: &[&str]) -> Output {
    Command::new(kubectl_binary())
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .output()
        .expect("running kubectl")
}

/// Sends SIGTERM to `child` and waits (10 s at most) for a clean exit.
pub fn sigterm_and_wait(child: &mut std::process::Child) {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "exit status {status}");
            return;
        }
        assert!(Instant::now() < deadline, "still running after SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// kubectl with its discovery cache in `cache`.
pub fn dev_kubectl(kubeconfig: &Path, cache: &Path, args: &[&str]) -> Output {
    let mut all = vec!["--cache-dir", cache.to_str().unwrap()];
    all.extend_from_slice(args);
    kubectl(kubeconfig, &all)
}
