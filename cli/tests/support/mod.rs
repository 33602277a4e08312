//! What the end-to-end tests share: an in-memory API server, a kubeconfig
//! for it, and `rekon` processes running against it.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rekon_apiserver::{ApiServer, ResourceInfo, RunningServer, Store};
use serde_json::Value;

mod command;
mod dev;
mod http;
mod objects;
mod offline;
mod replicas;

// Each test binary uses a part of these, as of the rest of this module.
#[allow(unused_imports)]
pub use command::{
    dev_kubectl, kubectl, kubectl_binary, rekon, sigterm_and_wait, stderr, stdout, write,
};
#[allow(unused_imports)]
pub use dev::{Dev, fresh};
#[allow(unused_imports)]
pub use http::{http_get, http_status, post_tls};
#[allow(unused_imports)]
pub use objects::{app_yaml, configmap, namespace};
#[allow(unused_imports)]
pub use offline::cluster_with;
#[allow(unused_imports)]
pub use replicas::{holder, identity, reconciled, replica, shard_claims, shard_owner, writes};

/// Short election timings for tests (the defaults stay 15 s / 10 s / 2 s).
pub const LEASE: &[&str] = &[
    "--leader-elect",
    "--lease-duration",
    "2s",
    "--renew-deadline",
    "1500ms",
    "--retry-period",
    "200ms",
];

/// How long a test waits for the cluster to reach a state.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// A server, a kubeconfig, and the `rekon` processes started against it.
pub struct Env {
    pub server: RunningServer,
    pub dir: tempfile::TempDir,
    pub kubeconfig: PathBuf,
    pub hosts: Vec<Child>,
    pub logs: Vec<PathBuf>,
    /// The compile cache the `rekon` processes use.
    pub cache: PathBuf,
}

impl Drop for Env {
    fn drop(&mut self) {
        for host in &mut self.hosts {
            let _ = host.kill();
            let _ = host.wait();
        }
    }
}

impl Env {
    pub async fn new() -> Env {
        Env::with_gate("ShardedListAndWatch", false).await
    }

    /// An environment whose API server has feature gate `gate` on or off.
    pub async fn with_gate(gate: &str, on: bool) -> Env {
        let server = ApiServer::builder()
            .feature_gate(gate, on)
            .expect("a known gate")
            .start()
            .await
            .expect("the API server starts");
        let dir = tempfile::tempdir().expect("a temporary directory");
        let kubeconfig = dir.path().join("kubeconfig");
        server
            .write_kubeconfig(&kubeconfig)
            .expect("writing the kubeconfig");
        let cache = dir.path().join("cache");
        Env {
            server,
            dir,
            kubeconfig,
            hosts: Vec::new(),
            logs: Vec::new(),
            cache,
        }
    }

    /// Uses the compile cache shared by the tests of this run
    /// (`target/rekon-test-cache`) instead of this test's own: big
    /// components (JavaScript, Python) then compile once per run.
    pub fn use_shared_cache(&mut self) {
        self.cache = PathBuf::from(path("target/rekon-test-cache"));
    }

    /// Compiles `module` into the cache with `rekon check --no-baseline`
    /// (the optimised build, as `rekon run` caches it), so the host's
    /// start is a cached load.
    pub fn warm_cache(&self, module: &str) {
        let output = Command::new(env!("CARGO_BIN_EXE_rekon"))
            .args(["check", "--no-baseline"])
            .arg(module)
            .env("REKON_CACHE_DIR", &self.cache)
            .output()
            .expect("starting rekon check");
        assert!(
            output.status.success(),
            "rekon check {module}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }

    pub fn store(&self) -> Store {
        self.server.store()
    }

    /// Starts `rekon run` with these modules and extra arguments; returns
    /// its index in `hosts` and `logs`.
    pub fn run(&mut self, modules: &[&str], extra: &[&str]) -> usize {
        let index = self.hosts.len();
        let log = self.dir.path().join(format!("rekon-{index}.log"));
        let child = Command::new(env!("CARGO_BIN_EXE_rekon"))
            .arg("run")
            .args(modules)
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(extra)
            .env("REKON_CACHE_DIR", &self.cache)
            .env("RUST_LOG", "info")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("a log file"))
            .spawn()
            .expect("starting rekon run");
        self.hosts.push(child);
        self.logs.push(log);
        index
    }

    /// Every host's log.
    pub fn log(&self) -> String {
        self.logs
            .iter()
            .map(|l| std::fs::read_to_string(l).unwrap_or_default())
            .collect()
    }

    /// One host's log.
    pub fn log_of(&self, index: usize) -> String {
        std::fs::read_to_string(&self.logs[index]).unwrap_or_default()
    }

    /// Sends a signal to one host.
    pub fn signal(&self, index: usize, signal: &str) {
        let status = Command::new("kill")
            .args([&format!("-{signal}"), &self.hosts[index].id().to_string()])
            .status()
            .expect("running kill");
        assert!(status.success(), "kill -{signal} failed");
    }

    /// Sends SIGTERM to one host and waits ([`DEADLINE`] at most) until it
    /// has ended; how it ended.
    pub async fn terminate(&mut self, index: usize) -> std::process::ExitStatus {
        self.signal(index, "TERM");
        let started = Instant::now();
        loop {
            if let Some(status) = self.hosts[index].try_wait().expect("the host's status") {
                return status;
            }
            assert!(
                started.elapsed() < DEADLINE,
                "host {index} still runs {DEADLINE:?} after SIGTERM\n{}",
                self.log_of(index)
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    pub fn apply(&self, object: Value) -> Value {
        self.store().apply_object(object).expect("applying")
    }

    pub fn apply_file(&self, path: &str) {
        let text = std::fs::read_to_string(path).expect("reading a manifest");
        for document in serde_yaml_ng::Deserializer::from_str(&text) {
            let value: Value = serde::Deserialize::deserialize(document).expect("YAML");
            if !value.is_null() {
                self.apply(value);
            }
        }
    }

    pub fn resource(&self, group: &str, version: &str, kind: &str) -> ResourceInfo {
        self.store()
            .resource_for_kind(group, version, kind)
            .unwrap_or_else(|| panic!("{kind} is served"))
    }

    pub fn get(
        &self,
        group: &str,
        version: &str,
        kind: &str,
        ns: Option<&str>,
        name: &str,
    ) -> Option<Value> {
        let resource = self.resource(group, version, kind);
        self.store().get(&resource, ns, name).ok()
    }

    /// The holder of the Lease `name` in `default`.
    pub fn lease_holder(&self, name: &str) -> Option<String> {
        self.get("coordination.k8s.io", "v1", "Lease", Some("default"), name)?["spec"]
            ["holderIdentity"]
            .as_str()
            .map(str::to_string)
    }

    /// The webhook configuration (`Validating...` or `Mutating...`) the
    /// host publishes for `module`, once it is there.
    pub async fn webhook_configuration(&self, kind: &str, module: &str) -> Value {
        let name = format!("rekon-{module}");
        self.wait_long(&format!("the {kind} {name}"), || {
            self.get("admissionregistration.k8s.io", "v1", kind, None, &name)
        })
        .await
    }

    /// Polls until `check` gives `Some`, or fails with the hosts' logs.
    pub async fn wait<T>(&self, what: &str, check: impl FnMut() -> Option<T>) -> T {
        self.wait_for(DEADLINE, what, check).await
    }

    /// [`wait`](Self::wait) for what takes long: compiling a big module.
    pub async fn wait_long<T>(&self, what: &str, check: impl FnMut() -> Option<T>) -> T {
        self.wait_for(DEADLINE * 4, what, check).await
    }

    async fn wait_for<T>(
        &self,
        deadline: Duration,
        what: &str,
        mut check: impl FnMut() -> Option<T>,
    ) -> T {
        let started = Instant::now();
        loop {
            if let Some(value) = check() {
                return value;
            }
            if started.elapsed() > deadline {
                panic!(
                    "timed out waiting for {what}\n--- rekon log ---\n{}",
                    self.log()
                );
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }
}

impl Env {
    /// Stops the API server (clients see refused connections), runs
    /// `while_down` on its store, and serves the same store again on the
    /// same port. Returns when it serves again.
    pub async fn restart_server(&mut self, down: Duration, while_down: impl FnOnce(&Store)) {
        let port = self.server.addr().port();
        let store = self.server.store();
        self.server.stop().await;
        while_down(&store);
        tokio::time::sleep(down).await;
        self.server = ApiServer::builder()
            .port(port)
            .store(store)
            .start()
            .await
            .expect("the API server starts again on its port");
    }

    /// The reasons of the reconciles of the primary object `name` logged
    /// after byte `from` of the log, in order (`added`, `updated`...).
    pub fn reconcile_reasons(&self, from: usize, name: &str) -> Vec<String> {
        let log = self.log();
        let object = format!("object={name} ");
        log.get(from..)
            .unwrap_or_default()
            .lines()
            .filter(|l| {
                l.contains("reconcile{")
                    && l.contains(&object)
                    && (l.ends_with(": reconciled")
                        || l.contains(": reconciled ")
                        || l.contains(": reconcile failed"))
            })
            .filter_map(|l| {
                let reason = l.split("reason=").nth(1)?;
                let reason = reason.split([' ', '}']).next()?;
                Some(reason.trim_matches('"').to_string())
            })
            .collect()
    }

    /// Waits until no reconcile has been logged for a second; returns the
    /// log's length then (a mark for [`reconcile_reasons`](Self::reconcile_reasons)).
    pub async fn settled(&self) -> usize {
        let count = || self.log().matches("reconcile{").count();
        let started = Instant::now();
        let mut seen = count();
        loop {
            tokio::time::sleep(Duration::from_secs(1)).await;
            let now = count();
            if now == seen {
                return self.log().len();
            }
            assert!(
                started.elapsed() < DEADLINE,
                "reconciles never settled\n--- rekon log ---\n{}",
                self.log()
            );
            seen = now;
        }
    }

    /// Waits for an events.k8s.io Event that `matches`, and returns it.
    pub async fn event(&self, what: &str, matches: impl Fn(&Value) -> bool) -> Value {
        let events = self.resource("events.k8s.io", "v1", "Event");
        self.wait(what, || {
            self.store()
                .list(&events, &Default::default())
                .ok()?
                .items
                .into_iter()
                .find(|e| matches(e))
        })
        .await
    }
}

/// A path in the repository.
pub fn path(relative: &str) -> String {
    format!("{}/../{relative}", env!("CARGO_MANIFEST_DIR"))
}

/// An App of the example guest.
pub fn app(name: &str, replicas: i64) -> Value {
    serde_json::json!({
        "apiVersion": "demo.rekon.dev/v1", "kind": "App",
        "metadata": { "name": name, "namespace": "default" },
        "spec": { "image": "nginx:1.27", "replicas": replicas, "port": 8080 },
    })
}

/// A free TCP port on 127.0.0.1.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("binding a port")
        .local_addr()
        .expect("its address")
        .port()
}

/// The `misbehave` component with every `from` replaced by `to` (of the
/// same length): tests make new versions (the build mark) and differently
/// named copies (the name) of the module this way.
pub fn misbehave_with(from: &str, to: &str) -> Vec<u8> {
    let (from, to) = (from.as_bytes(), to.as_bytes());
    assert_eq!(from.len(), to.len(), "a replacement of the same length");
    let mut bytes = std::fs::read(rekon_test_artifacts::MISBEHAVE).expect("misbehave is built");
    let mut at = 0;
    let mut replaced = 0;
    while let Some(found) = bytes[at..].windows(from.len()).position(|w| w == from) {
        let start = at + found;
        bytes[start..start + from.len()].copy_from_slice(to);
        at = start + from.len();
        replaced += 1;
    }
    assert!(
        replaced > 0,
        "{:?} is in the component",
        String::from_utf8_lossy(from)
    );
    bytes
}

/// A copy of the `misbehave` module named `name` (9 bytes, like
/// `misbehave`): every `misbehave` in the component is replaced, so the copy
/// also reads its mode from the annotation `<name>.rekon.dev/mode`.
pub fn misbehave_named(name: &str) -> Vec<u8> {
    misbehave_with(misbehave::NAME, name)
}
