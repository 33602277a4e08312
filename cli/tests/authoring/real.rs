//! `rekon test` and `rekon dev` in real mode: on a kube-apiserver and etcd
//! (and kube-controller-manager) that they start from the binaries in
//! `KUBEBUILDER_ASSETS`, as envtest does. Skipped, saying why, without the
//! binaries. One real cluster per test, one test at a time.

use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::support::path;

/// One real cluster at a time: CI machines have two cores.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// How long a real cluster may take to start and reach a state.
const DEADLINE: Duration = Duration::from_secs(90);

/// Whether the test runs: the binaries are there, else it says why not.
fn real_binaries(test: &str) -> bool {
    match rekon_envtest::assets() {
        Ok(_) => true,
        Err(why) => {
            eprintln!("skipped {test}: {why}");
            false
        }
    }
}

fn shown(output: &Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}--- stderr\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The API server URL a line of rekon's stderr names (`... on https://...`).
fn server_url(stderr: &str) -> Option<String> {
    let line = stderr.lines().find(|l| l.contains("real"))?;
    let url = line.split(" on ").last()?.trim();
    url.starts_with("https://").then(|| url.to_string())
}

/// Whether something still listens at `url`'s port.
fn answers(url: &str) -> bool {
    let port: u16 = url.rsplit(':').next().and_then(|p| p.parse().ok()).unwrap();
    std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
}

/// A copy of an example's cases file in `dir`, naming the built module.
fn cases_for(dir: &Path, cases: &str, module: &str, name: &str) -> String {
    let text = std::fs::read_to_string(path(cases)).unwrap();
    let mut file: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text).unwrap();
    file["module"] = serde_yaml_ng::Value::from(module);
    let copy = dir.join(name);
    std::fs::write(&copy, serde_yaml_ng::to_string(&file).unwrap()).unwrap();
    copy.to_str().unwrap().to_string()
}

/// Case names of a cases file.
fn case_names(file: &str) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let cases: serde_yaml_ng::Value = serde_yaml_ng::from_str(&text).unwrap();
    cases["cases"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect()
}

/// Two cases on one server: the second finds nothing of the first (its
/// namespace, its source, its copy).
const ISOLATION: &str = "
  - name: copies a source into team-a
    objects:
      - {apiVersion: v1, kind: Namespace, metadata: {name: team-a}}
    request:
      object:
        apiVersion: v1
        kind: ConfigMap
        metadata:
          name: shared
          namespace: default
          labels: {rekon.dev/sync: \"true\"}
          annotations: {rekon.dev/sync-to: team-a}
        data: {region: eu-west-1}
    expect:
      result: done
      present:
        - {apiVersion: v1, kind: ConfigMap, metadata: {name: shared, namespace: team-a}, data: {region: eu-west-1}}
  - name: the next case starts from a clean server
    request:
      object: {apiVersion: v1, kind: ConfigMap, metadata: {name: settings, namespace: default}}
    expect:
      result: done
      absent:
        - {apiVersion: v1, kind: Namespace, metadata: {name: team-a}}
        - {apiVersion: v1, kind: ConfigMap, metadata: {name: shared, namespace: default}}
        - {apiVersion: v1, kind: ConfigMap, metadata: {name: shared, namespace: team-a}}
";

/// `rekon test` on real binaries: the example guests' cases pass, one
/// server serves every case (each cleaned up after), and it is gone when
/// `rekon test` exits.
#[test]
fn rekon_test_runs_the_example_cases_on_a_real_api_server() {
    if !real_binaries("rekon_test_runs_the_example_cases_on_a_real_api_server") {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let isolation = dir.path().join("isolation.yaml");
    std::fs::write(
        &isolation,
        format!(
            "module: {}\ncases:{ISOLATION}",
            rekon_test_artifacts::CONFIGMAP_SYNC
        ),
    )
    .unwrap();
    let mut files = vec![
        cases_for(
            dir.path(),
            "guests/app/tests/cases.yaml",
            rekon_test_artifacts::APP,
            "app.yaml",
        ),
        cases_for(
            dir.path(),
            "guests/configmap-sync/tests/cases.yaml",
            rekon_test_artifacts::CONFIGMAP_SYNC,
            "configmap-sync.yaml",
        ),
        isolation.to_str().unwrap().to_string(),
    ];
    // The JavaScript and Python builds, when `make guests-other` made
    // them (the in-memory tests of this binary require them).
    for (cases, module, name) in [
        (
            "guests/configmap-sync-js/tests/cases.yaml",
            rekon_test_artifacts::CONFIGMAP_SYNC_JS,
            "configmap-sync-js.yaml",
        ),
        (
            "guests/configmap-sync-py/tests/cases.yaml",
            rekon_test_artifacts::CONFIGMAP_SYNC_PY,
            "configmap-sync-py.yaml",
        ),
    ] {
        if Path::new(module).is_file() {
            files.push(cases_for(dir.path(), cases, module, name));
        } else {
            eprintln!("{cases}: {module} is not built (make guests-other): left out");
        }
    }
    let started = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_rekon"))
        .arg("test")
        .args(&files)
        .env("REKON_CACHE_DIR", path("target/rekon-test-cache"))
        .output()
        .expect("running rekon test");
    eprintln!(
        "rekon test on a real API server took {:?}",
        started.elapsed()
    );
    let out = String::from_utf8_lossy(&output.stdout).into_owned();
    let err = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(0), "{}", shown(&output));
    assert!(
        err.contains("rekon test: on a real API server (kube-apiserver + etcd"),
        "{}",
        shown(&output)
    );
    let mut total = 0;
    for file in &files {
        for name in case_names(file) {
            total += 1;
            assert!(
                out.lines().any(|l| l == format!("ok   {name}")),
                "no `ok   {name}` line\n{}",
                shown(&output)
            );
        }
    }
    assert!(
        out.ends_with(&format!("{total} passed, 0 failed\n")),
        "{}",
        shown(&output)
    );
    let url = server_url(&err).unwrap_or_else(|| panic!("no server URL\n{}", shown(&output)));
    assert!(
        !answers(&url),
        "the API server at {url} outlived rekon test"
    );
}

fn kubectl(kubeconfig: &Path, args: &[&str]) -> Output {
    Command::new(super::support::kubectl_binary())
        .args(args)
        .env("KUBECONFIG", kubeconfig)
        .output()
        .expect("running kubectl")
}

fn kubectl_out(kubeconfig: &Path, args: &[&str]) -> String {
    String::from_utf8_lossy(&kubectl(kubeconfig, args).stdout)
        .trim()
        .to_string()
}

/// Waits until `done`, or fails saying `what` with rekon's log.
fn until(what: &str, log: &Path, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + DEADLINE;
    while !done() {
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}\n--- rekon dev's log\n{}",
            std::fs::read_to_string(log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// `rekon dev ARGS --write-kubeconfig KUBECONFIG` on the real binaries,
/// its log in `log`.
fn start_dev(args: &[&str], kubeconfig: &Path, log: &Path) -> Stopped {
    let child = Command::new(env!("CARGO_BIN_EXE_rekon"))
        .arg("dev")
        .args(args)
        .arg("--write-kubeconfig")
        .arg(kubeconfig)
        .env("REKON_CACHE_DIR", path("target/rekon-test-cache"))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap();
    Stopped(child)
}

/// `rekon dev` stopped, even when a test fails.
struct Stopped(Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            let _ = Command::new("kill")
                .args(["-INT", &self.0.id().to_string()])
                .status();
            let _ = self.0.wait();
        }
    }
}

/// `rekon dev` on real binaries: the app module reconciles the example
/// App, the real server calls its admission webhook and its conversion,
/// kube-controller-manager runs (Deployment controller, garbage
/// collector), and Ctrl-C stops the server.
#[test]
fn rekon_dev_runs_the_app_on_a_real_api_server() {
    if !real_binaries("rekon_dev_runs_the_app_on_a_real_api_server") {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let log = dir.path().join("rekon-dev.log");
    let started = Instant::now();
    let example = path("guests/app/manifests/example.yaml");
    let mut dev = start_dev(
        &[rekon_test_artifacts::APP, "-f", &example],
        &kubeconfig,
        &log,
    );
    until("the example App's Deployment and status", &log, || {
        kubeconfig.exists()
            && kubectl_out(
                &kubeconfig,
                &[
                    "get",
                    "app",
                    "web",
                    "-o",
                    "jsonpath={.status.observedGeneration}",
                ],
            ) == "1"
            && kubectl_out(&kubeconfig, &["get", "deployment", "web", "-o", "name"])
                == "deployment.apps/web"
    });
    eprintln!(
        "rekon dev on a real API server: the example App reconciled after {:?}",
        started.elapsed()
    );
    let banner = std::fs::read_to_string(&log).unwrap();
    assert!(
        banner.contains("Kubernetes API server (real: kube-apiserver + etcd")
            && banner.contains("ready in"),
        "{banner}"
    );
    let url = server_url(&banner).unwrap_or_else(|| panic!("no server URL\n{banner}"));

    // The real server calls the module's validating webhook.
    let big = dir.path().join("big.yaml");
    std::fs::write(
        &big,
        "apiVersion: demo.rekon.dev/v1\nkind: App\nmetadata: {name: big, namespace: default}\nspec: {image: \"nginx:1.27\", replicas: 500}\n",
    )
    .unwrap();
    let denied = kubectl(&kubeconfig, &["apply", "-f", big.to_str().unwrap()]);
    assert!(!denied.status.success(), "{}", shown(&denied));
    assert!(
        String::from_utf8_lossy(&denied.stderr).contains("denied the request"),
        "{}",
        shown(&denied)
    );

    // ... and its conversion: an App written in v2 reads back in v1.
    let v2 = dir.path().join("v2.yaml");
    std::fs::write(
        &v2,
        "apiVersion: demo.rekon.dev/v2\nkind: App\nmetadata: {name: two, namespace: default}\nspec: {replicas: 1, container: {image: \"nginx:1.28\", port: 9090}}\n",
    )
    .unwrap();
    let applied = kubectl(&kubeconfig, &["apply", "-f", v2.to_str().unwrap()]);
    assert!(applied.status.success(), "{}", shown(&applied));
    assert_eq!(
        kubectl_out(
            &kubeconfig,
            &[
                "get",
                "apps.v1.demo.rekon.dev",
                "two",
                "-o",
                "jsonpath={.spec.image}"
            ]
        ),
        "nginx:1.28"
    );

    // kube-controller-manager runs (when the assets have it): its
    // Deployment controller makes the web Deployment's ReplicaSet; deleting the App, the module deletes
    // the Deployment and lets go of the App, and the garbage collector
    // takes the ReplicaSet.
    let web_replica_sets = || {
        kubectl_out(&kubeconfig, &["get", "replicasets", "-o", "name"])
            .lines()
            .filter(|l| l.starts_with("replicaset.apps/web-"))
            .count()
    };
    let manager = rekon_envtest::assets()
        .is_ok_and(|assets| assets.join("kube-controller-manager").is_file());
    if manager {
        until("the Deployment controller's ReplicaSet", &log, || {
            web_replica_sets() > 0
        });
    }
    let deleted = kubectl(&kubeconfig, &["delete", "app", "web", "--wait=false"]);
    assert!(deleted.status.success(), "{}", shown(&deleted));
    until(
        "the App, its Deployment and its ReplicaSet to go",
        &log,
        || {
            let app = kubectl(&kubeconfig, &["get", "app", "web"]);
            let deployment = kubectl(&kubeconfig, &["get", "deployment", "web"]);
            String::from_utf8_lossy(&app.stderr).contains("NotFound")
                && String::from_utf8_lossy(&deployment.stderr).contains("NotFound")
                && web_replica_sets() == 0
        },
    );

    // Ctrl-C: rekon dev exits cleanly, and the API server with it.
    let status = Command::new("kill")
        .args(["-INT", &dev.0.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(30);
    let exit = loop {
        if let Some(exit) = dev.0.try_wait().unwrap() {
            break exit;
        }
        assert!(
            Instant::now() < deadline,
            "rekon dev did not stop on SIGINT"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(
        exit.success(),
        "{exit}\n{}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );
    assert!(!answers(&url), "the API server at {url} outlived rekon dev");
}

#[path = "real/audit.rs"]
mod audit;

#[path = "real/rollout.rs"]
mod rollout;

#[path = "real/durable.rs"]
mod durable;

#[path = "real/sharding.rs"]
mod sharding;

#[path = "real/migration.rs"]
mod migration;

#[path = "real/handover.rs"]
mod handover;
