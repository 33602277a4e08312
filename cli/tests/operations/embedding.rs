//! Embedding the host: the `embed` example runs a host that reconciles.

/// The example binary `cargo test` built beside the tests.
fn example(name: &str) -> std::path::PathBuf {
    let exe = std::env::current_exe().expect("the test binary's path");
    let profile = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>/deps");
    profile.join("examples").join(name)
}

#[test]
fn the_embed_example_runs_a_host_that_reconciles() {
    let path = example("embed");
    assert!(
        path.exists(),
        "{} is missing: `cargo test` builds the examples with the tests (or `cargo build --examples`)",
        path.display()
    );
    let output = std::process::Command::new(path)
        .arg(rekon_test_artifacts::APP)
        .output()
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
}
