//! Storage version migration by the host itself on a real kube-apiserver +
//! etcd: two `rekon run --leader-elect` replicas of the app module serve
//! its webhooks behind one address (as a Service would), the CRD then
//! stores v2, the leader migrates and is killed (`kill -9`) part-way; the
//! other replica takes the lead, resumes from the saved progress and
//! finishes: every App stored as v2 in etcd, `storedVersions` `[v2]`, v1
//! removable, and the edits users made meanwhile kept and reconciled.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::migration::{
    CRD, count, create_v1_apps, edit_apps, migrated_and_v1_removable, progress, stopped_part_way,
    store_v2, wait,
};
use super::{ONE_AT_A_TIME, kubectl, kubectl_out, real_binaries, shown};
use crate::support::{free_port, path};

/// A TCP front on `port` for the replicas' webhook servers, as a Service
/// is: each connection goes to the first backend that takes it.
fn front(port: u16, backends: Vec<u16>) {
    let listener = TcpListener::bind(("127.0.0.1", port)).unwrap();
    std::thread::spawn(move || {
        for incoming in listener.incoming() {
            let Ok(client) = incoming else { continue };
            let Some(backend) = backends
                .iter()
                .find_map(|port| TcpStream::connect(("127.0.0.1", *port)).ok())
            else {
                continue;
            };
            let pipe = |mut from: TcpStream, mut to: TcpStream| {
                std::thread::spawn(move || {
                    let mut buffer = [0u8; 16 * 1024];
                    while let Ok(n) = from.read(&mut buffer) {
                        if n == 0 || to.write_all(&buffer[..n]).is_err() {
                            break;
                        }
                    }
                    let _ = to.shutdown(std::net::Shutdown::Write);
                });
            };
            // Small TLS records go on at once (Nagle would hold each one
            // for the peer's delayed ACK).
            let _ = client.set_nodelay(true);
            let _ = backend.set_nodelay(true);
            pipe(client.try_clone().unwrap(), backend.try_clone().unwrap());
            pipe(backend, client);
        }
    });
}

/// A replica, killed when the test ends.
struct Replica(Child, PathBuf);

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn replica(dir: &Path, kubeconfig: &Path, identity: &str, webhook: u16, front: u16) -> Replica {
    let log = dir.join(format!("{identity}.log"));
    let child = Command::new(env!("CARGO_BIN_EXE_rekon"))
        .arg("run")
        .arg(rekon_test_artifacts::APP)
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .args(["--leader-elect", "--identity", identity])
        .args(super::sharding::LEASE)
        .args(["--webhook-addr", &format!("127.0.0.1:{webhook}")])
        .args(["--webhook-url", &format!("https://127.0.0.1:{front}")])
        .env("REKON_CACHE_DIR", path("target/rekon-test-cache"))
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    Replica(child, log)
}

fn holder(kubeconfig: &Path) -> String {
    kubectl_out(
        kubeconfig,
        &[
            "get",
            "lease",
            "rekon-leader",
            "-o",
            "jsonpath={.spec.holderIdentity}",
        ],
    )
}

/// The objects already written back when `log`'s replica began migrating.
fn resumed_at(log: &Path) -> Option<u64> {
    let text = std::fs::read_to_string(log).ok()?;
    let line = text
        .lines()
        .find(|l| l.contains("migration: objects to write back"))?;
    let value = line.split("migrated=").nth(1)?;
    value
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()
}

#[test]
fn the_leading_replica_migrates_a_crd_and_the_next_leader_finishes_after_a_kill() {
    if !real_binaries("the_leading_replica_migrates_a_crd_and_the_next_leader_finishes") {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let count = count(2000);
    let started = std::time::Instant::now();
    let stage = |what: &str| eprintln!("[{:>6.1}s] {what}", started.elapsed().as_secs_f64());
    let dir = tempfile::tempdir().unwrap();
    let assets = rekon_envtest::assets().unwrap();
    let cluster = rekon_envtest::RealCluster::start(
        &assets,
        &rekon_envtest::Options {
            controller_manager: false,
            // Room for a Service per App.
            apiserver_args: vec!["--service-cluster-ip-range=10.96.0.0/16".to_string()],
            ..rekon_envtest::Options::default()
        },
    )
    .unwrap();
    let etcd = cluster.etcd_url();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(&kubeconfig, cluster.kubeconfig()).unwrap();
    let applied = kubectl(
        &kubeconfig,
        &["apply", "-f", &path("guests/app/manifests/crd.yaml")],
    );
    assert!(applied.status.success(), "{}", shown(&applied));

    // Apps written in v1, before the operator runs.
    create_v1_apps(dir.path(), &kubeconfig, count);
    stage("Apps created");
    // Two replicas behind one webhook address; `a` leads.
    let (front_port, port_a, port_b) = (free_port(), free_port(), free_port());
    front(front_port, vec![port_a, port_b]);
    let mut a = replica(dir.path(), &kubeconfig, "a", port_a, front_port);
    wait("a to lead", &a.1, Duration::from_secs(60), || {
        holder(&kubeconfig) == "a"
    });
    stage("a leads");
    let b = replica(dir.path(), &kubeconfig, "b", port_b, front_port);
    wait(
        "the conversion published",
        &a.1,
        Duration::from_secs(60),
        || {
            kubectl_out(
                &kubeconfig,
                &[
                    "get",
                    "crd",
                    CRD,
                    "-o",
                    "jsonpath={.spec.conversion.strategy}",
                ],
            ) == "Webhook"
        },
    );

    stage("conversion published");
    // The upgrade: v2 stores; the leader sees the CRD change and migrates.
    store_v2(&kubeconfig);
    let edited = edit_apps(&kubeconfig, count);
    stage("edits made");
    wait(
        "a quarter written back by a",
        &a.1,
        Duration::from_secs(600),
        || progress(&kubeconfig).1 >= count as u64 / 4,
    );
    stage("a quarter migrated: killing a");
    a.0.kill().unwrap();
    a.0.wait().unwrap();
    let migrated = stopped_part_way(&kubeconfig, &etcd, count);

    // `b` takes the lead and finishes from where `a` saved its progress.
    wait("b to finish", &b.1, Duration::from_secs(600), || {
        progress(&kubeconfig).0 == "done"
    });
    stage("b finished");
    assert_eq!(holder(&kubeconfig), "b");
    let resumed = resumed_at(&b.1).unwrap_or(0);
    assert!(
        resumed >= count as u64 / 4,
        "b started at {resumed} of {count}, not where a stopped ({migrated})"
    );
    migrated_and_v1_removable(&kubeconfig, &etcd, count, &edited, &b.1);
    stage("edits reconciled; v1 removed");
}
