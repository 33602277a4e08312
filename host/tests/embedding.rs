//! The library embedded as a program embeds it: `examples/embed.rs` (which
//! uses rekon-host alone) runs a host against a cluster — here rekon's
//! in-memory API server, reached through the kubeconfig it writes — and
//! its module reconciles.

use std::path::PathBuf;

/// The example binary `cargo test` built beside the tests.
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>/deps");
    profile.join("examples").join(name)
}

#[tokio::test]
async fn the_embed_example_runs_a_host_that_reconciles() {
    let path = example("embed");
    assert!(
        path.exists(),
        "{} is missing: `cargo test` builds the examples with the tests (or `cargo build --examples`)",
        path.display()
    );
    let server = rekon_apiserver::ApiServer::builder().start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    let output = tokio::process::Command::new(path)
        .arg(rekon_test_artifacts::APP)
        .env("KUBECONFIG", &kubeconfig)
        .env_remove("RUST_LOG")
        .output()
        .await
        .expect("running examples/embed");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("running module app"), "{stdout}");
    assert!(
        stdout.contains("reconciled: Deployment default/web with 2 replicas"),
        "{stdout}"
    );
    server.shutdown().await;
}
