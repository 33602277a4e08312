//! `rekon new`: a project written for each language into a folder outside
//! the repository builds and passes its tests with the documented command
//! (`make test`), and runs in `rekon dev` until its example is reconciled
//! (and, with `--webhook`, refuses what its webhook refuses).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use super::support::path;

fn shown(output: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}--- stderr\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// `rekon new` in `parent`; returns the project's folder.
fn rekon_new(parent: &Path, name: &str, args: &[&str]) -> PathBuf {
    let output = Command::new(env!("CARGO_BIN_EXE_rekon"))
        .current_dir(parent)
        .args(["new", name])
        .args(args)
        .output()
        .expect("running rekon new");
    assert!(output.status.success(), "{}", shown(&output));
    let dir = parent.join(name);
    for file in [
        "README.md",
        "Makefile",
        "manifests/example.yaml",
        "tests/cases.yaml",
    ] {
        assert!(dir.join(file).exists(), "rekon new wrote no {file}");
    }
    dir
}

/// `make test` in the project, as its README says (with `REKON` naming
/// this build of rekon); returns what it printed.
fn make_test(dir: &Path) -> String {
    let output = Command::new("make")
        .current_dir(dir)
        .arg("test")
        .arg(format!("REKON={}", env!("CARGO_BIN_EXE_rekon")))
        // Rust projects share one target folder across runs (the SDK and
        // its dependencies build once), outside the repository's own.
        .env("CARGO_TARGET_DIR", path("target/new-projects"))
        .env("REKON_CACHE_DIR", path("target/rekon-test-cache"))
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        // `rekon test` on the in-memory server.
        .env_remove("KUBEBUILDER_ASSETS")
        .output()
        .expect("running make");
    let out = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "make test failed:\n{out}");
    out
}

/// `make pack` writes the ConfigMaps that ship the module, which
/// `rekon check` loads back as the same module.
fn packs(dir: &Path, name: &str) {
    let output = Command::new("make")
        .current_dir(dir)
        .arg("pack")
        .arg(format!("REKON={}", env!("CARGO_BIN_EXE_rekon")))
        .env("CARGO_TARGET_DIR", path("target/new-projects"))
        .output()
        .expect("running make pack");
    assert!(output.status.success(), "{}", shown(&output));
    let packed = dir.join(format!("build/{name}.configmaps.yaml"));
    let output = Command::new(env!("CARGO_BIN_EXE_rekon"))
        .arg("check")
        .arg(&packed)
        .env("REKON_CACHE_DIR", path("target/rekon-test-cache"))
        .output()
        .expect("running rekon check");
    assert!(output.status.success(), "{}", shown(&output));
    let checked: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(checked["name"], name);
}

/// `rekon dev` on the project's module and example, until dropped.
struct Dev {
    child: Child,
    kubeconfig: PathBuf,
    dir: PathBuf,
}

impl Dev {
    fn start(dir: &Path, name: &str) -> Dev {
        let kubeconfig = dir.join("build/test.kubeconfig");
        let child = Command::new(env!("CARGO_BIN_EXE_rekon"))
            .current_dir(dir)
            .arg("dev")
            .arg(format!("build/{name}.wasm"))
            .args(["-f", "manifests/example.yaml", "--write-kubeconfig"])
            .arg(&kubeconfig)
            .env("REKON_CACHE_DIR", path("target/rekon-test-cache"))
            .env_remove("KUBEBUILDER_ASSETS")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting rekon dev");
        Dev {
            child,
            kubeconfig,
            dir: dir.to_path_buf(),
        }
    }

    fn kubectl(&self, args: &[&str]) -> Output {
        Command::new(crate::support::kubectl_binary())
            .arg("--cache-dir")
            .arg(self.dir.join("build/kubectl-cache"))
            .args(args)
            .env("KUBECONFIG", &self.kubeconfig)
            .output()
            .expect("running kubectl")
    }

    /// Waits until `kubectl args` prints `expected`.
    fn until_prints(&self, args: &[&str], expected: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut last = String::new();
        loop {
            if self.kubeconfig.exists() {
                let output = self.kubectl(args);
                last = shown(&output);
                if String::from_utf8_lossy(&output.stdout).trim() == expected {
                    return;
                }
            }
            assert!(
                Instant::now() < deadline,
                "kubectl {args:?} never printed {expected:?}; last:\n{last}"
            );
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

/// What every generated project does: `make test` passes (its cases pass),
/// and `rekon dev` installs the CRD the module ships and reconciles the
/// example object to `Ready`.
fn builds_tests_and_reconciles(lang: &str, extra: &[&str], resource: &str, namespaced: bool) {
    let parent = tempfile::tempdir().unwrap();
    let name = format!("greeter-{lang}");
    let mut args = vec!["--lang", lang, "--kind"];
    args.extend_from_slice(extra);
    let dir = rekon_new(parent.path(), &name, &args);
    let repository = std::fs::canonicalize(path("")).unwrap();
    assert!(
        !std::fs::canonicalize(&dir).unwrap().starts_with(repository),
        "the project must live outside the repository"
    );
    let out = make_test(&dir);
    assert!(
        out.contains("3 passed, 0 failed"),
        "the project's cases did not all run:\n{out}"
    );
    assert!(
        dir.join(format!("build/{name}.wasm")).exists(),
        "make built no component"
    );
    let crd = std::fs::read_to_string(dir.join("manifests/crd.yaml")).unwrap();
    assert!(
        crd.contains("kind: CustomResourceDefinition") && crd.contains(resource),
        "the build wrote no CRD:\n{crd}"
    );

    packs(&dir, &name);
    let dev = Dev::start(&dir, &name);
    let mut get = vec!["get", resource, "example"];
    if namespaced {
        get.extend(["-n", "default"]);
    }
    get.extend([
        "-o",
        "jsonpath={.status.conditions[0].type}={.status.conditions[0].status}",
    ]);
    dev.until_prints(&get, "Ready=True");
    drop(dev);
}

/// Rust: namespaced, owns a ConfigMap, with webhooks; its native tests
/// run too.
#[test]
fn a_new_rust_project_builds_tests_and_reconciles_in_dev() {
    let parent = tempfile::tempdir().unwrap();
    let dir = rekon_new(
        parent.path(),
        "greeter-rust",
        &[
            "--lang",
            "rust",
            "--kind",
            "demo.example.com/v1/Greeting",
            "--owns",
            "v1/ConfigMap",
            "--webhook",
        ],
    );
    let out = make_test(&dir);
    assert!(
        out.contains("test the_example_is_reconciled_and_ready ... ok"),
        "the native tests did not run:\n{out}"
    );
    assert!(out.contains("3 passed, 0 failed"), "{out}");

    let dev = Dev::start(&dir, "greeter-rust");
    dev.until_prints(
        &[
            "get",
            "greetings",
            "example",
            "-n",
            "default",
            "-o",
            "jsonpath={.status.conditions[0].type}={.status.conditions[0].status}",
        ],
        "Ready=True",
    );
    // The owned ConfigMap, and the webhooks: a default filled in, a
    // message too long refused.
    dev.until_prints(
        &[
            "get",
            "configmap",
            "example",
            "-o",
            "jsonpath={.data.message}",
        ],
        "hello from greeter-rust",
    );
    let manifest = dir.join("build/long.yaml");
    std::fs::write(
        &manifest,
        format!(
            "apiVersion: demo.example.com/v1\nkind: Greeting\nmetadata: {{name: long, namespace: default}}\nspec: {{message: {}}}\n",
            "x".repeat(101)
        ),
    )
    .unwrap();
    let refused = dev.kubectl(&["apply", "-f", manifest.to_str().unwrap()]);
    assert!(!refused.status.success(), "{}", shown(&refused));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("spec.message: at most 100 characters"),
        "{}",
        shown(&refused)
    );
}

/// JavaScript: cluster-scoped, owns a ConfigMap; `make test` type-checks
/// it against the contract's TypeScript declarations.
#[test]
fn a_new_javascript_project_builds_tests_and_reconciles_in_dev() {
    builds_tests_and_reconciles(
        "javascript",
        &[
            "demo.example.com/v1alpha1/Greeting",
            "--cluster-scoped",
            "--owns",
            "v1/ConfigMap",
        ],
        "greetings",
        false,
    );
}

/// Python: namespaced, with webhooks.
#[test]
fn a_new_python_project_builds_tests_and_reconciles_in_dev() {
    builds_tests_and_reconciles(
        "python",
        &["demo.example.com/v1/Greeting", "--webhook"],
        "greetings",
        true,
    );
}

/// Bad arguments are refused with a clear message, and nothing is written.
#[test]
fn bad_arguments_are_refused_before_anything_is_written() {
    let parent = tempfile::tempdir().unwrap();
    for (args, says) in [
        (
            vec![
                "Bad_Name",
                "--lang",
                "rust",
                "--kind",
                "demo.example.com/v1/Greeting",
            ],
            "must be a DNS label",
        ),
        (
            vec!["ok", "--lang", "rust", "--kind", "example/v1/Greeting"],
            "a domain with a dot",
        ),
        (
            vec![
                "ok",
                "--lang",
                "python",
                "--kind",
                "demo.example.com/Greeting",
            ],
            "GROUP/VERSION/KIND",
        ),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_rekon"))
            .current_dir(parent.path())
            .arg("new")
            .args(&args)
            .output()
            .unwrap();
        assert!(!output.status.success(), "{args:?} was accepted");
        assert!(
            String::from_utf8_lossy(&output.stderr).contains(says),
            "{args:?}: {}",
            shown(&output)
        );
    }
    assert_eq!(
        std::fs::read_dir(parent.path()).unwrap().count(),
        0,
        "a refused rekon new wrote files"
    );
}
