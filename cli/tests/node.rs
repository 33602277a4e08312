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
//! garbage module refused with an Event, a rollback; then a rolling
//! restart, a scale from 2 to 1 and back, a graceful leader kill and a
//! crash, while a write the validating webhook must refuse is sent every
//! 100 ms (refused at every moment, and by the webhook itself outside the
//! crash) and Apps are edited (every edit reconciled afterwards); finally
//! `kubectl delete -k deploy/` leaves no webhook configuration, conversion,
//! Lease or namespace behind, and `rekon uninstall` finds nothing left.
//!
//! It needs root, `KUBEBUILDER_ASSETS` with the node's binaries (CI: from
//! `../shared/kube/unpack.sh`), and containerd, runc, the CNI plugins,
//! umoci, skopeo, iptables and curl (Debian packages); without them it is
//! skipped, saying why — unless `REKON_NODE_E2E=require` (CI), where a
//! missing piece fails it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

const NETNS: &str = "rekon-e2e";
const APP_IMAGE: &str = "registry.k8s.io/pause:3.10.2";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_path_buf()
}

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

/// A running node; stopped when dropped.
struct Node {
    dir: PathBuf,
    assets: PathBuf,
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

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

impl Node {
    fn kubectl(&self, args: &[&str]) -> Output {
        Command::new(self.dir.join("kubectl"))
            .args(args)
            .output()
            .expect("running kubectl")
    }

    /// kubectl, which must succeed; its stdout.
    fn k(&self, args: &[&str]) -> String {
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

    fn json(&self, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.extend(["-o", "json"]);
        serde_json::from_str(&self.k(&all)).expect("kubectl's JSON")
    }

    /// Runs a program inside the node's network namespace.
    fn inside(&self, program: &str, args: &[&str]) -> Output {
        Command::new("nsenter")
            .arg(format!("--net=/run/netns/{NETNS}"))
            .arg(program)
            .args(args)
            .output()
            .expect("running nsenter")
    }

    fn rekon_pods(&self) -> Vec<Value> {
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
    fn metrics(&self) -> Vec<(String, String)> {
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
    fn in_rekon(&self, args: &[&str]) -> String {
        let mut all = vec!["-n", "rekon-system"];
        all.extend(args);
        self.k(&all)
    }

    /// Waits until the Deployment's rollout is done.
    fn rolled_out(&self) {
        self.in_rekon(&["rollout", "status", "deploy/rekon", "--timeout=180s"]);
    }

    /// How many rekon pods are Ready.
    fn ready(&self) -> usize {
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

    fn leader(&self) -> String {
        self.json(&["-n", "rekon-system", "get", "lease", "rekon-leader"])["spec"]["holderIdentity"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }
}

/// Waits until `check` gives a value.
fn wait<T>(what: &str, timeout: Duration, mut check: impl FnMut() -> Option<T>) -> T {
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

/// One write the validating webhook must refuse, and its answer.
#[derive(Debug, Clone)]
struct Probe {
    phase: String,
    code: u16,
    message: String,
}

/// Sends a write the webhook must refuse every 100 ms, from inside the
/// node, and records each answer under the phase it was sent in.
struct Prober {
    phase: Arc<Mutex<String>>,
    probes: Arc<Mutex<Vec<Probe>>>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Prober {
    fn start(node: &Node) -> Prober {
        let phase = Arc::new(Mutex::new("idle".to_string()));
        let probes = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let token = std::fs::read_to_string(node.dir.join("admin.token")).expect("the admin token");
        let ca = node.dir.join("pki/ca.crt");
        let thread = {
            let (phase, probes, stop) = (phase.clone(), probes.clone(), stop.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let started = Instant::now();
                    let now = phase.lock().expect("phase").clone();
                    let output = Command::new("nsenter")
                        .arg(format!("--net=/run/netns/{NETNS}"))
                        .args(["curl", "-s", "-m", "12", "--cacert"])
                        .arg(&ca)
                        .args(["-H", &format!("Authorization: Bearer {}", token.trim())])
                        .args(["-H", "Content-Type: application/merge-patch+json", "-X", "PATCH"])
                        .arg("https://127.0.0.1:6443/apis/demo.rekon.dev/v1/namespaces/probe/apps/probe")
                        .args(["-d", r#"{"spec":{"replicas":500}}"#, "-w", "\n%{http_code}"])
                        .stderr(Stdio::null())
                        .output();
                    let out = output.map(|o| text(&o.stdout)).unwrap_or_default();
                    let (body, code) = out.rsplit_once('\n').unwrap_or(("", &out));
                    let message = serde_json::from_str::<Value>(body)
                        .ok()
                        .and_then(|v| v["message"].as_str().map(str::to_string))
                        .unwrap_or_else(|| body.chars().take(200).collect());
                    probes.lock().expect("probes").push(Probe {
                        phase: now,
                        code: code.trim().parse().unwrap_or(0),
                        message,
                    });
                    std::thread::sleep(
                        Duration::from_millis(100).saturating_sub(started.elapsed()),
                    );
                }
            })
        };
        Prober {
            phase,
            probes,
            stop,
            thread: Some(thread),
        }
    }

    fn phase(&self, name: &str) {
        // Let the probe in flight finish under the previous phase's name.
        *self.phase.lock().expect("phase") = name.to_string();
    }

    fn finish(mut self) -> Vec<Probe> {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            thread.join().expect("the prober");
        }
        self.probes.lock().expect("probes").clone()
    }
}

/// `bytes` with one more custom section: the same code, another digest (a
/// new version of the module, as a rebuild makes).
fn with_custom_section(bytes: &[u8], payload: &str) -> Vec<u8> {
    fn leb(mut n: usize, out: &mut Vec<u8>) {
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }
    let name = b"rekon-e2e";
    let mut body = Vec::new();
    leb(name.len(), &mut body);
    body.extend_from_slice(name);
    body.extend_from_slice(payload.as_bytes());
    let mut out = bytes.to_vec();
    out.push(0);
    leb(body.len(), &mut out);
    out.extend(body);
    out
}

/// `rekon pack MODULE --name app` into `file` (as `make deploy-modules` does).
fn pack(module: &Path, file: &Path) {
    let output = Command::new(env!("CARGO_BIN_EXE_rekon"))
        .arg("pack")
        .arg(module)
        .args(["--name", "app"])
        .output()
        .expect("running rekon pack");
    assert!(
        output.status.success(),
        "rekon pack: {}",
        text(&output.stderr)
    );
    std::fs::write(file, &output.stdout).expect("writing the pack");
}

fn app(name: &str, namespace: &str, replicas: u32) -> String {
    format!(
        "apiVersion: demo.rekon.dev/v1\nkind: App\nmetadata: {{name: {name}, namespace: {namespace}}}\n\
         spec: {{image: {APP_IMAGE}, replicas: {replicas}, port: 8080}}\n"
    )
}

/// `kubectl patch` of the App web to 500 replicas: the webhook must refuse it.
fn too_many_replicas(node: &Node) -> Output {
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

fn apply_text(node: &Node, yaml: &str) {
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
fn all_reconciled(node: &Node, namespace: &str) -> Option<()> {
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

    // ---- install, as the README says (in a copy of deploy/).
    step("installing");
    let deploy = work.path().join("deploy");
    copy_dir(&root().join("deploy"), &deploy);
    let app_wasm = PathBuf::from(rekon_test_artifacts::APP);
    pack(&app_wasm, &deploy.join("modules/app.yaml"));
    let crd = root().join("guests/app/manifests/crd.yaml");
    node.k(&["apply", "-f", crd.to_str().expect("a path")]);
    node.k(&["apply", "-k", deploy.to_str().expect("a path")]);
    node.rolled_out();
    // Server-side apply over the client-side install works too.
    node.k(&[
        "apply",
        "--server-side",
        "-k",
        deploy.to_str().expect("a path"),
    ]);

    step("two replicas Ready, one leader");
    wait("two Ready rekon pods", Duration::from_secs(120), || {
        (node.ready() == 2).then_some(())
    });
    let pods = node.rekon_pods();
    let names: Vec<String> = pods
        .iter()
        .map(|p| {
            p["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    let leader = wait("a leader", Duration::from_secs(60), || {
        Some(node.leader()).filter(|l| !l.is_empty())
    });
    assert!(
        names.contains(&leader),
        "the leader {leader} is one of {names:?}"
    );
    wait(
        "exactly one replica leading",
        Duration::from_secs(30),
        || {
            let leading = node
                .metrics()
                .iter()
                .filter(|(_, m)| m.lines().any(|l| l == "rekon_leader 1"))
                .count();
            (leading == 1).then_some(())
        },
    );
    let validating = node.json(&["get", "validatingwebhookconfiguration", "rekon-app"]);
    assert_eq!(
        validating["webhooks"][0]["namespaceSelector"],
        json!({"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn",
            "values": ["kube-node-lease", "kube-public", "kube-system", "rekon-system"]}]}),
        "published webhooks leave the system namespaces and rekon's own alone"
    );

    step("an App reconciled into Ready pods");
    node.k(&["create", "namespace", "team-a"]);
    node.k(&["create", "namespace", "probe"]);
    apply_text(&node, &app("web", "team-a", 2));
    apply_text(&node, &app("probe", "probe", 0));
    wait(
        "the App web Ready with 2 replicas",
        Duration::from_secs(120),
        || all_reconciled(&node, "team-a"),
    );

    step("a denial and a conversion through the webhook Service");
    let denied = too_many_replicas(&node);
    assert!(!denied.status.success());
    assert!(
        text(&denied.stderr).contains(
            "admission webhook \"validate-apps.app.rekon.dev\" denied the request: spec.replicas must be between 0 and 100, not 500"
        ),
        "{}",
        text(&denied.stderr)
    );
    let v2 = node.json(&["-n", "team-a", "get", "apps.v2.demo.rekon.dev", "web"]);
    assert_eq!(v2["apiVersion"], "demo.rekon.dev/v2");
    assert_eq!(v2["spec"]["container"]["image"], APP_IMAGE, "{v2}");

    // ---- module updates, in place.
    let digest_of = |bytes: &[u8]| rekon_host::runtime::digest(bytes);
    let v1_bytes = std::fs::read(&app_wasm).expect("app.wasm");
    let serving = |digest: &str| {
        let line =
            format!("rekon_module_info{{module=\"app\",version=\"0.1.0\",digest=\"{digest}\"}} 1");
        let metrics = node.metrics();
        (metrics.len() == 2 && metrics.iter().all(|(_, m)| m.contains(&line))).then_some(())
    };
    let restarts = |pods: &[Value]| -> Vec<(String, i64)> {
        pods.iter()
            .map(|p| {
                (
                    p["metadata"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                    p["status"]["containerStatuses"][0]["restartCount"]
                        .as_i64()
                        .unwrap_or(-1),
                )
            })
            .collect()
    };
    let before = restarts(&node.rekon_pods());
    step("a module updated in place");
    let v1_pack = work.path().join("app-v1.yaml");
    std::fs::copy(deploy.join("modules/app.yaml"), &v1_pack).expect("keeping the first pack");
    let v2_wasm = work.path().join("app-v2.wasm");
    let v2_bytes = with_custom_section(&v1_bytes, "v2: same code, another digest");
    std::fs::write(&v2_wasm, &v2_bytes).expect("writing app-v2.wasm");
    pack(&v2_wasm, &deploy.join("modules/app.yaml"));
    let modules = deploy.join("modules");
    node.k(&["apply", "-k", modules.to_str().expect("a path")]);
    wait(
        "both replicas serving the new version",
        Duration::from_secs(60),
        || serving(&digest_of(&v2_bytes)),
    );
    assert_eq!(restarts(&node.rekon_pods()), before, "no pod restarted");
    let module_configmaps =
        node.in_rekon(&["get", "configmaps", "-l", "rekon.dev/module", "-o", "name"]);
    assert_eq!(
        module_configmaps.trim(),
        "configmap/app",
        "no ConfigMap left behind"
    );

    step("a garbage module refused with an Event");
    let garbage = b"this is not a wasm component\n".repeat(10);
    let documents = rekon_host::pack::pack(
        &garbage,
        "app",
        "rekon-system",
        rekon_host::pack::Encoding::None,
        rekon_host::pack::DEFAULT_PART_SIZE,
    )
    .expect("packing");
    let yaml: String = documents
        .iter()
        .map(|d| format!("---\n{}", serde_yaml::to_string(d).expect("YAML")))
        .collect();
    apply_text(&node, &yaml);
    let event = wait("the ModuleRejected Event", Duration::from_secs(60), || {
        let events = node.json(&[
            "-n",
            "rekon-system",
            "get",
            "events",
            "--field-selector",
            "reason=ModuleRejected",
        ]);
        events["items"].as_array()?.first().cloned()
    });
    assert_eq!(event["involvedObject"]["name"], "app");
    assert!(
        event["message"]
            .as_str()
            .unwrap_or_default()
            .contains("not a WebAssembly component"),
        "{event}"
    );
    assert!(
        serving(&digest_of(&v2_bytes)).is_some(),
        "the last good version keeps serving"
    );
    let still = too_many_replicas(&node);
    assert!(
        text(&still.stderr).contains("denied the request"),
        "{}",
        text(&still.stderr)
    );

    step("a rollback");
    std::fs::copy(&v1_pack, deploy.join("modules/app.yaml")).expect("restoring the first pack");
    node.k(&["apply", "-k", modules.to_str().expect("a path")]);
    wait(
        "both replicas serving the first version again",
        Duration::from_secs(60),
        || serving(&digest_of(&v1_bytes)),
    );
    assert_eq!(restarts(&node.rekon_pods()), before, "no pod restarted");

    // ---- replicas come and go; the webhooks never do.
    step("churn, rolling restart, scale, leader kill, crash");
    node.k(&["create", "namespace", "team-b"]);
    for i in 0..4 {
        apply_text(&node, &app(&format!("churn-{i}"), "team-b", 1));
    }
    let prober = Prober::start(&node);
    let churning = Arc::new(AtomicBool::new(true));
    let churn = {
        let (dir, churning) = (node.dir.clone(), churning.clone());
        std::thread::spawn(move || {
            let mut edits = 0u32;
            while churning.load(Ordering::Relaxed) {
                let replicas = edits / 4 % 3 + 1;
                let _ = Command::new(dir.join("kubectl"))
                    .args([
                        "-n",
                        "team-b",
                        "patch",
                        "app.v1.demo.rekon.dev",
                        &format!("churn-{}", edits % 4),
                    ])
                    .args([
                        "--type",
                        "merge",
                        "-p",
                        &format!("{{\"spec\":{{\"replicas\":{replicas}}}}}"),
                    ])
                    .args(["--request-timeout=5s"])
                    .output();
                edits += 1;
                std::thread::sleep(Duration::from_millis(300));
            }
            edits
        })
    };
    std::thread::sleep(Duration::from_secs(2));
    prober.phase("rolling restart");
    node.in_rekon(&["rollout", "restart", "deploy/rekon"]);
    node.rolled_out();
    std::thread::sleep(Duration::from_secs(6));
    prober.phase("scale to 1");
    node.in_rekon(&["scale", "deploy/rekon", "--replicas=1"]);
    wait("one rekon pod", Duration::from_secs(90), || {
        (node.rekon_pods().len() == 1).then_some(())
    });
    std::thread::sleep(Duration::from_secs(3));
    prober.phase("scale to 2");
    node.in_rekon(&["scale", "deploy/rekon", "--replicas=2"]);
    node.rolled_out();
    std::thread::sleep(Duration::from_secs(3));
    prober.phase("leader deleted");
    let leader = node.leader();
    node.in_rekon(&["delete", "pod", &leader, "--wait=false"]);
    wait("another leader", Duration::from_secs(60), || {
        let now = node.leader();
        (!now.is_empty() && now != leader).then_some(())
    });
    node.rolled_out();
    std::thread::sleep(Duration::from_secs(3));
    prober.phase("leader crashed");
    let leader = node.leader();
    let pod = node.json(&["-n", "rekon-system", "get", "pod", &leader]);
    let container = pod["status"]["containerStatuses"][0]["containerID"]
        .as_str()
        .unwrap_or_default()
        .trim_start_matches("containerd://")
        .to_string();
    let killed = Command::new(node.dir.join("ctr"))
        .args(["tasks", "kill", "-s", "SIGKILL", &container])
        .output()
        .expect("running ctr");
    assert!(
        killed.status.success(),
        "ctr tasks kill: {}",
        text(&killed.stderr)
    );
    wait(
        "the crashed replica back and Ready",
        Duration::from_secs(120),
        || (node.ready() == 2).then_some(()),
    );
    std::thread::sleep(Duration::from_secs(3));
    churning.store(false, Ordering::Relaxed);
    let edits = churn.join().expect("the churn");
    let probes = prober.finish();

    let accepted: Vec<&Probe> = probes
        .iter()
        .filter(|p| (200..300).contains(&p.code))
        .collect();
    assert!(
        accepted.is_empty(),
        "writes the webhook must refuse were accepted: {accepted:?}"
    );
    let strict: Vec<&Probe> = probes
        .iter()
        .filter(|p| p.phase != "leader crashed")
        .filter(|p| {
            !(p.code == 422
                && p.message
                    .contains("validate-apps.app.rekon.dev\" denied the request"))
        })
        .collect();
    assert!(
        strict.is_empty(),
        "refused other than by the webhook itself: {strict:?}"
    );
    for phase in [
        "rolling restart",
        "scale to 1",
        "scale to 2",
        "leader deleted",
        "leader crashed",
    ] {
        let count = probes.iter().filter(|p| p.phase == phase).count();
        assert!(count >= 10, "only {count} probes during {phase}");
    }
    step(&format!(
        "{} probes refused, {edits} edits made",
        probes.len()
    ));
    wait(
        "every App edit reconciled",
        Duration::from_secs(180),
        || all_reconciled(&node, "team-b"),
    );

    // ---- uninstall, as the README says.
    step("uninstalling");
    let deleted = node.kubectl(&[
        "delete",
        "-k",
        deploy.to_str().expect("a path"),
        "--timeout=180s",
    ]);
    assert!(
        deleted.status.success(),
        "kubectl delete -k: {}",
        text(&deleted.stderr)
    );
    assert!(
        text(&deleted.stderr).contains("rekon is uninstalled"),
        "kubectl shows what rekon took back: {}",
        text(&deleted.stderr)
    );
    wait("the namespace gone", Duration::from_secs(120), || {
        (!node
            .kubectl(&["get", "namespace", "rekon-system"])
            .status
            .success())
        .then_some(())
    });
    let left = node.k(&[
        "get",
        "validatingwebhookconfigurations,mutatingwebhookconfigurations",
        "-o",
        "name",
    ]);
    assert_eq!(left.trim(), "", "no webhook configuration left");
    let crd = node.json(&["get", "crd", "apps.demo.rekon.dev"]);
    assert_eq!(
        crd["spec"]["conversion"],
        json!({"strategy": "None"}),
        "the conversion is off again"
    );
    assert!(
        crd["metadata"]["labels"]["rekon.dev/converted-by"].is_null(),
        "{crd}"
    );
    let leases = node.k(&[
        "get",
        "leases",
        "-A",
        "-l",
        "app.kubernetes.io/managed-by=rekon",
        "-o",
        "name",
    ]);
    assert_eq!(leases.trim(), "", "no Lease left");
    for kind in ["clusterrole", "clusterrolebinding"] {
        let out = node.k(&["get", kind, "-o", "name"]);
        assert!(!out.contains("rekon"), "no {kind} of rekon's left: {out}");
    }
    // Writes and reads of Apps work without rekon.
    node.k(&[
        "-n",
        "team-a",
        "patch",
        "app.v1.demo.rekon.dev",
        "web",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"replicas":1}}"#,
    ]);
    node.k(&["get", "apps", "-A"]);
    let again = node.inside(
        env!("CARGO_BIN_EXE_rekon"),
        &[
            "uninstall",
            "--kubeconfig",
            node.dir.join("admin.kubeconfig").to_str().expect("a path"),
        ],
    );
    assert!(
        again.status.success(),
        "rekon uninstall: {}",
        text(&again.stderr)
    );
    assert_eq!(
        text(&again.stdout).trim(),
        "nothing of rekon's left for service rekon-system/rekon-webhooks:443"
    );
    step("done");
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("a folder");
    for entry in std::fs::read_dir(from).expect("reading a folder") {
        let entry = entry.expect("an entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("a type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).expect("copying");
        }
    }
}
