//! The peer's process: `rekon-peer-kubers` (`peers/kubers`), the same App
//! operator as a kube-rs `Controller`, built by a cargo of its own.
//!
//! Built within this bench's build, the peer would share its dependencies'
//! features with the host and the API server, among them serde_json's
//! `preserve_order`: every JSON object of kube's `DynamicObject` would then
//! be an `IndexMap` hashed with SipHash, which a kube-rs operator built on
//! its own does not pay. Built alone, it gets what a kube-rs user gets.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// Builds the peer (`cargo build --profile bench -p rekon-peer-kubers`,
/// alone, in this workspace's target directory) and returns its path.
pub fn build() -> String {
    build_binary(
        &["--profile", "bench", "-p", "rekon-peer-kubers"],
        "rekon-peer-kubers",
    )
}

/// Builds the `rekon` executable as users build it (`cargo build --release
/// -p rekon-host --bin rekon`: the default features, none of the bench's,
/// so its functions carry the names `host/rekon.order.gz` lays out) and
/// returns its path.
pub fn build_rekon() -> String {
    build_binary(&["--release", "-p", "rekon", "--bin", "rekon"], "rekon")
}

/// Runs `cargo build ARGS` alone in this workspace and returns the path of
/// the executable `target` it names.
fn build_binary(args: &[&str], target: &str) -> String {
    // Under `cargo bench`, the cargo running it; run directly, rustup's
    // `cargo`, which takes the toolchain of the workspace's
    // `rust-toolchain.toml` (a toolchain's own cargo, run by its path,
    // would build with rustup's default toolchain).
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let manifest = workspace.join("Cargo.toml");
    let output = Command::new(cargo)
        .current_dir(&workspace)
        .arg("build")
        .args(args)
        .args([
            "--message-format",
            "json-render-diagnostics",
            "--manifest-path",
        ])
        .arg(manifest)
        .stderr(Stdio::inherit())
        .output()
        .expect("running cargo to build a program of the bench");
    assert!(output.status.success(), "building {target} failed");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter(|message| message["target"]["name"] == target)
        .find_map(|message| message["executable"].as_str().map(str::to_owned))
        .unwrap_or_else(|| panic!("cargo names the executable of {target}"))
}

/// A running peer: it answers each line on its stdin with its reconciles.
pub struct Peer {
    child: Child,
    stdin: ChildStdin,
    lines: BufReader<ChildStdout>,
}

impl Peer {
    /// Starts the peer at `path` on the cluster of `kubeconfig`.
    pub fn start(path: &str, kubeconfig: &Path, concurrency: usize) -> Peer {
        let mut child = Command::new(path)
            .env("KUBECONFIG", kubeconfig)
            .arg(concurrency.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("starting the peer");
        let stdin = child.stdin.take().expect("the peer's stdin");
        let mut lines = BufReader::new(child.stdout.take().expect("the peer's stdout"));
        let mut line = String::new();
        lines.read_line(&mut line).expect("reading the peer");
        assert_eq!(line.trim(), "started", "the peer did not start");
        Peer {
            child,
            stdin,
            lines,
        }
    }

    /// The peer's process id, for its CPU time and resident memory.
    pub fn pid(&self) -> String {
        self.child.id().to_string()
    }

    /// The reconciles the peer has run.
    pub fn reconciles(&mut self) -> u64 {
        writeln!(self.stdin, "count").expect("asking the peer");
        let mut line = String::new();
        self.lines.read_line(&mut line).expect("reading the peer");
        line.trim().parse().expect("a count of reconciles")
    }

    /// Stops the peer: it exits when its stdin closes.
    pub fn stop(self) {
        let Peer {
            mut child, stdin, ..
        } = self;
        drop(stdin);
        let _ = child.wait();
    }
}
