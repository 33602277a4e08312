//! The node under test and the ways to talk to it: kubectl (and curl from
//! inside its network namespace), waiting for a state, Apps written and
//! checked.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub const NETNS: &str = "rekon-e2e";
pub const APP_IMAGE: &str = "registry.k8s.io/pause:3.10.2";

/// The workspace the tests run in.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_path_buf()
}

/// A running node; stopped when dropped.
pub struct Node {
    pub dir: PathBuf,
    pub assets: PathBuf,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(root().join("tests/node/node.sh"))
            .arg("down")
            .arg(&self.dir)
            .env("KUBEBUILDER_ASSETS", &self.assets)
            .status();
    }
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

impl Node {
    pub fn kubectl(&self, args: &[&str]) -> Output {
        Command::new(self.dir.join("kubectl"))
            .args(args)
            .output()
            .expect("running kubectl")
    }

    /// kubectl, which must succeed; its stdout.
    pub fn k(&self, args: &[&str]) -> String {
        let output = self.kubectl(args);
        assert!(
            output.status.success(),
            "kubectl {}: {}{}",
            args.join(" "),
            text(&output.stdout),
            text(&output.stderr)
        );
        text(&output.stdout)
    }

    pub fn json(&self, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.extend(["-o", "json"]);
        serde_json::from_str(&self.k(&all)).expect("kubectl's JSON")
    }

    /// Runs a program inside the node's network namespace.
    pub fn inside(&self, program: &str, args: &[&str]) -> Output {
        Command::new("nsenter")
            .arg(format!("--net=/run/netns/{NETNS}"))
            .arg(program)
            .args(args)
            .output()
            .expect("running nsenter")
    }

    pub fn rekon_pods(&self) -> Vec<Value> {
        self.json(&[
            "-n",
            "rekon-system",
            "get",
            "pods",
            "-l",
            "app.kubernetes.io/name=rekon",
        ])["items"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// Each running rekon pod's `/metrics`.
    pub fn metrics(&self) -> Vec<(String, String)> {
        self.rekon_pods()
            .iter()
            .filter(|p| p["metadata"]["deletionTimestamp"].is_null())
            .filter_map(|p| {
                let ip = p["status"]["podIP"].as_str()?;
                let out = self.inside(
                    "curl",
                    &["-s", "-m", "5", &format!("http://{ip}:8080/metrics")],
                );
                Some((
                    p["metadata"]["name"].as_str()?.to_string(),
                    text(&out.stdout),
                ))
            })
            .collect()
    }

    /// kubectl in rekon's namespace, which must succeed.
    pub fn in_rekon(&self, args: &[&str]) -> String {
        let mut all = vec!["-n", "rekon-system"];
        all.extend(args);
        self.k(&all)
    }

    /// Waits until the Deployment's rollout is done.
    pub fn rolled_out(&self) {
        self.in_rekon(&["rollout", "status", "deploy/rekon", "--timeout=180s"]);
    }

    /// How many rekon pods are Ready.
    pub fn ready(&self) -> usize {
        self.rekon_pods()
            .iter()
            .filter(|p| {
                p["status"]["conditions"].as_array().is_some_and(|c| {
                    c.iter()
                        .any(|c| c["type"] == "Ready" && c["status"] == "True")
                })
            })
            .count()
    }

    /// [`wait`], with the rekon pods' latest log lines in the failure.
    pub fn wait<T>(
        &self,
        what: &str,
        timeout: Duration,
        mut check: impl FnMut() -> Option<T>,
    ) -> T {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(value) = check() {
                return value;
            }
            if Instant::now() > deadline {
                let logs = self.kubectl(&[
                    "-n",
                    "rekon-system",
                    "logs",
                    "-l",
                    "app.kubernetes.io/name=rekon",
                    "--tail=40",
                    "--prefix",
                ]);
                let modules: Vec<String> = self
                    .metrics()
                    .into_iter()
                    .flat_map(|(pod, metrics)| {
                        metrics
                            .lines()
                            .filter(|l| {
                                l.starts_with("rekon_module") || l.starts_with("rekon_leader")
                            })
                            .map(|l| format!("{pod}: {l}"))
                            .collect::<Vec<_>>()
                    })
                    .collect();
                let pods = self.kubectl(&["-n", "rekon-system", "get", "pods", "-o", "wide"]);
                let why = self.kubectl(&[
                    "-n",
                    "rekon-system",
                    "get",
                    "pods",
                    "-o",
                    "jsonpath={range .items[*]}{.metadata.name}: {.status.phase} {.status.reason} {.status.message}{\"\\n\"}{end}",
                ]);
                let node = self.kubectl(&[
                    "get",
                    "nodes",
                    "-o",
                    "jsonpath={range .items[*].status.conditions[*]}{.type}={.status} {.message}{\"\\n\"}{end}",
                ]);
                panic!(
                    "timed out after {timeout:?} waiting for {what}\n--- the rekon pods ---\n{}{}{}\n--- the node ---\n{}\n--- their modules ---\n{}\n--- their logs ---\n{}{}",
                    text(&pods.stdout),
                    text(&pods.stderr),
                    text(&why.stdout),
                    text(&node.stdout),
                    modules.join("\n"),
                    text(&logs.stdout),
                    text(&logs.stderr)
                );
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    pub fn leader(&self) -> String {
        self.json(&["-n", "rekon-system", "get", "lease", "rekon-leader"])["spec"]["holderIdentity"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }
}

/// Waits until `check` gives a value.
pub fn wait<T>(what: &str, timeout: Duration, mut check: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(value) = check() {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// An App `namespace/name` of the example guest as YAML.
pub fn app(name: &str, namespace: &str, replicas: u32) -> String {
    format!(
        "apiVersion: demo.rekon.dev/v1\nkind: App\nmetadata: {{name: {name}, namespace: {namespace}}}\n\
         spec: {{image: {APP_IMAGE}, replicas: {replicas}, port: 8080}}\n"
    )
}

/// `kubectl patch` of the App web to 500 replicas: the webhook must refuse it.
pub fn too_many_replicas(node: &Node) -> Output {
    node.kubectl(&[
        "-n",
        "team-a",
        "patch",
        "app",
        "web",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"replicas":500}}"#,
    ])
}

/// `kubectl apply -f -` of `yaml`, which must succeed.
pub fn apply_text(node: &Node, yaml: &str) {
    let mut child = Command::new(node.dir.join("kubectl"))
        .args(["apply", "-f", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("running kubectl apply");
    std::io::Write::write_all(child.stdin.as_mut().expect("stdin"), yaml.as_bytes())
        .expect("writing");
    let output = child.wait_with_output().expect("kubectl apply");
    assert!(
        output.status.success(),
        "kubectl apply: {}",
        text(&output.stderr)
    );
}

/// Every App in `namespace` reconciled as it stands: observedGeneration,
/// replicas of the App, of its Deployment and ready.
pub fn all_reconciled(node: &Node, namespace: &str) -> Option<()> {
    let apps = node.json(&["-n", namespace, "get", "apps.v1.demo.rekon.dev"]);
    let deployments = node.json(&["-n", namespace, "get", "deployments"]);
    let items = apps["items"].as_array()?;
    for app in items {
        let name = &app["metadata"]["name"];
        let want = &app["spec"]["replicas"];
        let status = &app["status"];
        let deployment = deployments["items"]
            .as_array()?
            .iter()
            .find(|d| &d["metadata"]["name"] == name)?;
        let ok = status["observedGeneration"] == app["metadata"]["generation"]
            && &status["replicas"] == want
            && &status["readyReplicas"] == want
            && &deployment["spec"]["replicas"] == want;
        if !ok {
            return None;
        }
    }
    Some(())
}
