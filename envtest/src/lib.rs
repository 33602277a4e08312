//! rekon-envtest: a real Kubernetes API server for tests and for `rekon`'s
//! real mode, the way controller-runtime's envtest provides one: etcd and
//! kube-apiserver (and kube-controller-manager when its binary is there:
//! garbage collection, namespace deletion) started on loopback from the
//! binaries in the folder `KUBEBUILDER_ASSETS` names, with certificates
//! and a token made for the run, stopped when the handle is dropped (and,
//! should the process die without dropping it, by a watchdog shell within
//! a second).
//!
//! Where to start: [`assets`] (the folder, or why there is none),
//! [`RealCluster::start`], then [`RealCluster::client`] — an HTTP client
//! ([`http::Client`]) that also speaks to rekon's in-memory API server, so
//! one request can be sent to both and the answers compared.
#![deny(missing_docs)]

mod certs;
pub mod http;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;

/// Why a real cluster could not start.
#[derive(Debug, thiserror::Error)]
pub enum EnvtestError {
    /// A binary is missing from the assets folder.
    #[error("{0} is missing from the assets folder {1}")]
    Missing(&'static str, String),
    /// A file could not be written, or a process started.
    #[error("{what}")]
    Io {
        /// What was being done.
        what: String,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
    /// Certificates could not be made.
    #[error("cannot make the certificates")]
    Certificates(#[from] rcgen::Error),
    /// A process exited, or the API server never became ready.
    #[error("{what}; its log ends with:\n{log}")]
    NotReady {
        /// What went wrong.
        what: String,
        /// The end of the process's log.
        log: String,
    },
}

pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> EnvtestError {
    let what = what.into();
    move |source| EnvtestError::Io { what, source }
}

/// The folder of the Kubernetes binaries (`KUBEBUILDER_ASSETS`, as envtest
/// names it), or why there is none: unset, or without `kube-apiserver` and
/// `etcd`.
pub fn assets() -> Result<PathBuf, String> {
    let folder = std::env::var_os("KUBEBUILDER_ASSETS")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| {
            "KUBEBUILDER_ASSETS is not set (the folder of kube-apiserver and etcd, as setup-envtest prints it)"
                .to_string()
        })?;
    for binary in ["kube-apiserver", "etcd"] {
        if !folder.join(binary).is_file() {
            return Err(format!(
                "KUBEBUILDER_ASSETS={} has no {binary}",
                folder.display()
            ));
        }
    }
    Ok(folder)
}

/// How to start a cluster.
#[derive(Clone, Debug)]
pub struct Options {
    /// Start kube-controller-manager too, when its binary is in the
    /// assets (garbage collection, namespace deletion, ServiceAccounts).
    pub controller_manager: bool,
    /// The controllers it runs (its `--controllers`): `*` for all,
    /// `-name` to leave one out.
    pub controllers: Vec<String>,
    /// More flags for kube-apiserver (later flags win).
    pub apiserver_args: Vec<String>,
    /// How long to wait for `/readyz`.
    pub ready_timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            controller_manager: true,
            controllers: vec!["*".to_string()],
            apiserver_args: Vec::new(),
            ready_timeout: Duration::from_secs(90),
        }
    }
}

/// A running etcd + kube-apiserver (+ kube-controller-manager) on
/// loopback. Dropping it stops them and removes their data.
pub struct RealCluster {
    dir: tempfile::TempDir,
    children: Vec<(&'static str, Child)>,
    /// Stops the processes and removes their data if this process dies
    /// without dropping the handle (SIGKILL, a test harness's timeout).
    watchdog: Option<Child>,
    port: u16,
    etcd_port: u16,
    token: String,
    ca_pem: String,
}

impl std::fmt::Debug for RealCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RealCluster")
            .field("url", &self.url())
            .field("dir", &self.dir.path())
            .finish_non_exhaustive()
    }
}

impl Drop for RealCluster {
    fn drop(&mut self) {
        if let Some(watchdog) = &mut self.watchdog {
            let _ = watchdog.kill();
            let _ = watchdog.wait();
        }
        for (_, child) in self.children.iter_mut().rev() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A port on 127.0.0.1 that is free now, below the ephemeral range (a port
/// an outgoing connection takes there would keep etcd from starting).
fn free_port(taken: &[u16]) -> u16 {
    let seed = std::process::id() as u64
        ^ Instant::now().elapsed().as_nanos() as u64
        ^ std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
    let mut x = seed | 1;
    loop {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let port = 20000 + (x % 12000) as u16;
        if !taken.contains(&port) && std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// A shell that waits for `owner` to exit, then kills the processes
/// listed in `dir/pids` and removes `dir`: what [`Drop`] does, for when it
/// cannot run. Killed by [`Drop`] first. `None` without `sh`: the cluster
/// then only stops when dropped.
fn watchdog(owner: u32, dir: &Path) -> Option<Child> {
    let dir = dir.display().to_string().replace('\'', "'\\''");
    let script = format!(
        "while kill -0 {owner} 2>/dev/null; do sleep 1; done; \
         kill -9 $(cat '{dir}/pids' 2>/dev/null) 2>/dev/null; rm -rf '{dir}'"
    );
    Command::new("sh")
        .args(["-c", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .ok()
}

/// The last lines of a log file.
fn tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(25)..].join("\n")
}

impl RealCluster {
    /// Starts etcd and kube-apiserver from `assets` (and
    /// kube-controller-manager, when asked and present), and waits until
    /// the API server is ready (5 to 10 s on two cores).
    pub fn start(assets: &Path, options: &Options) -> Result<RealCluster, EnvtestError> {
        for binary in ["kube-apiserver", "etcd"] {
            if !assets.join(binary).is_file() {
                return Err(EnvtestError::Missing(binary, assets.display().to_string()));
            }
        }
        let dir = tempfile::Builder::new()
            .prefix("rekon-envtest")
            .tempdir()
            .map_err(io("cannot make a folder for the cluster"))?;
        let d = dir.path();
        let write = |name: &str, text: &str| {
            std::fs::write(d.join(name), text).map_err(io(format!("cannot write {name}")))
        };
        let ca_pem = certs::write(d)?;
        let token = format!("{:032x}", {
            let mut x = Instant::now().elapsed().as_nanos() ^ u128::from(std::process::id());
            x ^= std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            x.wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835)
        });
        write(
            "tokens.csv",
            &format!(
                "{token},admin,admin,\"system:masters\"\n{token}kcm,system:kube-controller-manager,kcm,\"system:masters\"\n"
            ),
        )?;

        let etcd_client = free_port(&[]);
        let etcd_peer = free_port(&[etcd_client]);
        let port = free_port(&[etcd_client, etcd_peer]);
        let mut cluster = RealCluster {
            children: Vec::new(),
            watchdog: watchdog(std::process::id(), dir.path()),
            port,
            etcd_port: etcd_client,
            token: token.clone(),
            ca_pem,
            dir,
        };
        let d = cluster.dir.path().to_path_buf();
        cluster.spawn(
            "etcd",
            Command::new(assets.join("etcd")).args([
                format!("--data-dir={}", d.join("etcd").display()),
                "--name=envtest".to_string(),
                format!("--listen-client-urls=http://127.0.0.1:{etcd_client}"),
                format!("--advertise-client-urls=http://127.0.0.1:{etcd_client}"),
                format!("--listen-peer-urls=http://127.0.0.1:{etcd_peer}"),
                format!("--initial-advertise-peer-urls=http://127.0.0.1:{etcd_peer}"),
                format!("--initial-cluster=envtest=http://127.0.0.1:{etcd_peer}"),
                "--log-level=warn".to_string(),
                "--unsafe-no-fsync=true".to_string(),
            ]),
        )?;
        let mut apiserver_args = vec![
            format!("--etcd-servers=http://127.0.0.1:{etcd_client}"),
            "--bind-address=127.0.0.1".to_string(),
            "--advertise-address=127.0.0.1".to_string(),
            format!("--secure-port={port}"),
            format!("--tls-cert-file={}", d.join("apiserver.crt").display()),
            format!(
                "--tls-private-key-file={}",
                d.join("apiserver.key").display()
            ),
            format!("--token-auth-file={}", d.join("tokens.csv").display()),
            "--authorization-mode=RBAC".to_string(),
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local".to_string(),
            format!("--service-account-key-file={}", d.join("sa.pub").display()),
            format!(
                "--service-account-signing-key-file={}",
                d.join("sa.key").display()
            ),
            "--service-cluster-ip-range=10.0.0.0/24".to_string(),
            "--endpoint-reconciler-type=none".to_string(),
            "--allow-privileged=true".to_string(),
            "--profiling=false".to_string(),
        ];
        apiserver_args.extend(options.apiserver_args.iter().cloned());
        cluster.spawn(
            "kube-apiserver",
            Command::new(assets.join("kube-apiserver")).args(&apiserver_args),
        )?;
        cluster.wait_ready(options.ready_timeout)?;
        let manager = assets.join("kube-controller-manager");
        if options.controller_manager && manager.is_file() {
            let kubeconfig = d.join("kcm.kubeconfig");
            std::fs::write(&kubeconfig, cluster.kubeconfig_for(&format!("{token}kcm")))
                .map_err(io("cannot write the controller manager's kubeconfig"))?;
            let kcm_port = free_port(&[etcd_client, etcd_peer, port]);
            let kubeconfig = kubeconfig.display().to_string();
            cluster.spawn(
                "kube-controller-manager",
                Command::new(manager).args([
                    format!("--kubeconfig={kubeconfig}"),
                    format!("--authentication-kubeconfig={kubeconfig}"),
                    format!("--authorization-kubeconfig={kubeconfig}"),
                    "--bind-address=127.0.0.1".to_string(),
                    format!("--secure-port={kcm_port}"),
                    "--leader-elect=false".to_string(),
                    format!("--controllers={}", options.controllers.join(",")),
                    format!("--root-ca-file={}", d.join("ca.crt").display()),
                    format!(
                        "--service-account-private-key-file={}",
                        d.join("sa.key").display()
                    ),
                    format!("--cluster-signing-cert-file={}", d.join("ca.crt").display()),
                    format!("--cluster-signing-key-file={}", d.join("ca.key").display()),
                    "--profiling=false".to_string(),
                ]),
            )?;
        }
        Ok(cluster)
    }

    fn spawn(&mut self, name: &'static str, command: &mut Command) -> Result<(), EnvtestError> {
        let log = self.dir.path().join(format!("{name}.log"));
        let file = std::fs::File::create(&log).map_err(io(format!("cannot write {name}.log")))?;
        let child = command
            .stdin(Stdio::null())
            .stdout(file.try_clone().map_err(io("cannot share a log file"))?)
            .stderr(file)
            .spawn()
            .map_err(io(format!("cannot start {name}")))?;
        // The watchdog reads the processes to stop from this file.
        let pids = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.path().join("pids"))
            .and_then(|mut f| {
                std::io::Write::write_all(&mut f, format!("{}\n", child.id()).as_bytes())
            });
        self.children.push((name, child));
        pids.map_err(io("cannot write the pids file"))
    }

    fn wait_ready(&mut self, timeout: Duration) -> Result<(), EnvtestError> {
        let started = Instant::now();
        let client = self.client();
        loop {
            if let Ok(answer) = client.request("GET", "/readyz", None, None)
                && answer.status == 200
            {
                return Ok(());
            }
            for (name, child) in &mut self.children {
                if let Ok(Some(status)) = child.try_wait() {
                    return Err(EnvtestError::NotReady {
                        what: format!("{name} exited ({status})"),
                        log: tail(&self.dir.path().join(format!("{name}.log"))),
                    });
                }
            }
            if started.elapsed() > timeout {
                return Err(EnvtestError::NotReady {
                    what: format!("kube-apiserver is not ready after {timeout:?}"),
                    log: tail(&self.dir.path().join("kube-apiserver.log")),
                });
            }
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// `https://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("https://127.0.0.1:{}", self.port)
    }

    /// etcd's client URL, `http://127.0.0.1:<port>` (its JSON gateway,
    /// `POST /v3/kv/range`, shows objects as stored).
    pub fn etcd_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.etcd_port)
    }

    /// The bearer token of a user in `system:masters`.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// The CA (PEM) the serving certificate is signed by.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// A client of the API server, as that user.
    pub fn client(&self) -> http::Client {
        http::Client::new(&self.url(), Some(&self.token), Some(&self.ca_pem))
    }

    fn kubeconfig_for(&self, token: &str) -> String {
        let ca = base64::engine::general_purpose::STANDARD.encode(self.ca_pem.as_bytes());
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: envtest\n  cluster:\n    server: {url}\n    \
             certificate-authority-data: {ca}\nusers:\n- name: envtest\n  user:\n    token: {token}\n\
             contexts:\n- name: envtest\n  context:\n    cluster: envtest\n    user: envtest\n    namespace: default\n\
             current-context: envtest\n",
            url = self.url()
        )
    }

    /// A kubeconfig for the API server, as the `system:masters` user.
    pub fn kubeconfig(&self) -> String {
        self.kubeconfig_for(&self.token)
    }

    /// The end of one process's log (`etcd`, `kube-apiserver`,
    /// `kube-controller-manager`), for a failure's message.
    pub fn log_tail(&self, name: &str) -> String {
        tail(&self.dir.path().join(format!("{name}.log")))
    }
}

/// Standard base64 with padding (no dependency for one use).
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_real_cluster_starts_answers_and_stops() {
        let assets = match assets() {
            Ok(assets) => assets,
            Err(why) => {
                eprintln!("skipped: {why}");
                return;
            }
        };
        let cluster = RealCluster::start(
            &assets,
            &Options {
                controller_manager: false,
                ..Options::default()
            },
        )
        .expect("the cluster starts");
        let answer = cluster
            .client()
            .request("GET", "/version", None, None)
            .expect("GET /version");
        assert_eq!(answer.status, 200);
        let version: serde_json::Value = serde_json::from_slice(&answer.body).expect("JSON");
        assert_eq!(version["major"], "1");
        let dir = cluster.dir.path().to_path_buf();
        drop(cluster);
        assert!(!dir.exists(), "its data goes with it");
    }
}
