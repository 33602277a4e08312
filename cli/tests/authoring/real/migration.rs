//! Storage version migration on a real kube-apiserver + etcd (`rekon dev`
//! in real mode serves the app module's conversion): Apps written in v1,
//! the CRD then storing v2; `rekon migrate` — the leader's migration run by
//! hand — killed part-way and run again resumes and finishes (the host's
//! own migration over a leader change is `handover.rs`, with 2,000 Apps); every App is
//! then stored as v2 (read straight from etcd), `storedVersions` is
//! `[v2]`, v1 can be removed, and the edits users made meanwhile were all
//! kept and reconciled.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

use super::{ONE_AT_A_TIME, kubectl, kubectl_out, real_binaries, shown, start_dev};
use crate::support::path;

pub(super) const CRD: &str = "apps.demo.rekon.dev";

/// How many Apps (`REKON_MIGRATE_APPS`, default `default`).
pub(super) fn count(default: usize) -> usize {
    std::env::var("REKON_MIGRATE_APPS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

/// Each App's stored apiVersion, by name, as etcd holds it.
pub(super) fn stored_versions(etcd: &str) -> Vec<(String, String)> {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let body = json!({
        "key": b64("/registry/demo.rekon.dev/apps/"),
        "range_end": b64("/registry/demo.rekon.dev/apps0"),
    });
    let out = Command::new("curl")
        .args(["-s", "-X", "POST", &format!("{etcd}/v3/kv/range"), "-d"])
        .arg(body.to_string())
        .output()
        .expect("curl (the etcd JSON gateway is read with it)");
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    answer["kvs"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|kv| {
            let decode = |v: &Value| {
                base64::engine::general_purpose::STANDARD
                    .decode(v.as_str().unwrap_or_default())
                    .unwrap_or_default()
            };
            let key = String::from_utf8_lossy(&decode(&kv["key"])).to_string();
            let object: Value = serde_json::from_slice(&decode(&kv["value"])).unwrap_or_default();
            let name = key.rsplit('/').next().unwrap_or_default().to_string();
            (
                name,
                object["apiVersion"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        })
        .collect()
}

/// Waits until `done`, or fails saying `what` with the end of `log`. The
/// pause between looks grows to 2 s: each look runs kubectl, whose start
/// weighs on the two cores the server and replicas under test share.
pub(super) fn wait(what: &str, log: &Path, limit: Duration, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    let mut pause = Duration::from_millis(250);
    while !done() {
        if started.elapsed() > limit {
            let text = std::fs::read_to_string(log).unwrap_or_default();
            let tail: Vec<&str> = text.lines().rev().take(80).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            panic!(
                "timed out waiting for {what}\n--- rekon dev's log (end)\n{}",
                tail.join("\n")
            );
        }
        std::thread::sleep(pause);
        pause = (pause * 3 / 2).min(Duration::from_secs(2));
    }
}

/// A JSON patch of the App CRD, which must be taken.
pub(super) fn patch_crd(kubeconfig: &Path, patch: &str) {
    let patched = kubectl(
        kubeconfig,
        &["patch", "crd", CRD, "--type=json", "-p", patch],
    );
    assert!(patched.status.success(), "{}", shown(&patched));
}

fn migrate(kubeconfig: &Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_rekon"));
    command
        .args(["migrate", CRD, "--module", rekon_test_artifacts::APP])
        .args(["--writes-per-second", "60", "--kubeconfig"])
        .arg(kubeconfig)
        .env("REKON_CACHE_DIR", path("target/rekon-test-cache"));
    command
}

pub(super) fn progress(kubeconfig: &Path) -> (String, u64) {
    // Whatever its name prefix (the leader Lease's name with election).
    let leases = kubectl_out(
        kubeconfig,
        &[
            "get",
            "lease",
            "-l",
            &format!("rekon.dev/migration={CRD}"),
            "-o",
            "json",
        ],
    );
    let leases: Value = serde_json::from_str(&leases).unwrap_or_default();
    let annotations = &leases["items"][0]["metadata"]["annotations"];
    (
        annotations["rekon.dev/migration-state"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        annotations["rekon.dev/migration-migrated"]
            .as_str()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0),
    )
}

/// `count` Apps written in v1 (`app-00000`...).
pub(super) fn create_v1_apps(dir: &Path, kubeconfig: &Path, count: usize) {
    let apps: String = (0..count)
        .map(|i| format!("---\napiVersion: demo.rekon.dev/v1\nkind: App\nmetadata: {{name: app-{i:05}, namespace: default}}\nspec: {{image: \"nginx:1.27\", replicas: 1, port: 80}}\n"))
        .collect();
    let manifest = dir.join("apps.yaml");
    std::fs::write(&manifest, apps).unwrap();
    let created = kubectl(kubeconfig, &["create", "-f", manifest.to_str().unwrap()]);
    assert!(created.status.success(), "{}", shown(&created));
}

/// The upgrade: the App CRD stores v2.
pub(super) fn store_v2(kubeconfig: &Path) {
    patch_crd(
        kubeconfig,
        r#"[{"op":"replace","path":"/spec/versions/0/storage","value":false},{"op":"replace","path":"/spec/versions/1/storage","value":true}]"#,
    );
}

/// A user's edits of about 40 of `count` Apps (`spec.replicas: 2`): their
/// names.
pub(super) fn edit_apps(kubeconfig: &Path, count: usize) -> Vec<String> {
    let edited: Vec<String> = (0..count)
        .step_by(count.div_ceil(40).max(1))
        .map(|i| format!("app-{i:05}"))
        .collect();
    for name in &edited {
        let patched = kubectl(
            kubeconfig,
            &[
                "patch",
                "app",
                name,
                "--type=merge",
                "-p",
                r#"{"spec":{"replicas":2}}"#,
            ],
        );
        assert!(patched.status.success(), "{}", shown(&patched));
    }
    edited
}

/// After a kill: the progress says `migrating`, short of `count`, and
/// etcd still holds Apps in v1. The objects written back by then.
pub(super) fn stopped_part_way(kubeconfig: &Path, etcd: &str, count: usize) -> u64 {
    let (state, migrated) = progress(kubeconfig);
    assert_eq!(state, "migrating");
    assert!(
        migrated < count as u64,
        "{migrated} of {count}: killed too late to resume"
    );
    let moved = stored_versions(etcd)
        .iter()
        .filter(|(_, v)| v == "demo.rekon.dev/v2")
        .count();
    assert!(moved < count, "all moved before the kill");
    migrated
}

/// Asserts that every one of `count` Apps, read in v1, still has the
/// image it was created with: nothing lost on the way through v2.
fn images_kept(kubeconfig: &Path, count: usize) {
    let apps: Value = serde_json::from_str(&kubectl_out(
        kubeconfig,
        &["get", "apps.v1.demo.rekon.dev", "-o", "json"],
    ))
    .unwrap_or_default();
    let items = apps["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(items.len(), count);
    let lost: Vec<_> = items
        .iter()
        .filter(|app| app["spec"]["image"] != "nginx:1.27")
        .map(|app| app["metadata"]["name"].clone())
        .collect();
    assert!(lost.is_empty(), "Apps that lost their image: {lost:?}");
}

/// The migration's end as a user checks it: every App stored as v2 in
/// etcd, storedVersions `[v2]`, no image lost; then the edits kept and
/// reconciled (waited for, `log` shown if not), and v1 unserved and
/// removed.
pub(super) fn migrated_and_v1_removable(
    kubeconfig: &Path,
    etcd: &str,
    count: usize,
    edited: &[String],
    log: &Path,
) {
    let after = stored_versions(etcd);
    assert_eq!(after.len(), count);
    let old: Vec<_> = after
        .iter()
        .filter(|(_, v)| v != "demo.rekon.dev/v2")
        .collect();
    assert!(old.is_empty(), "still stored in an old version: {old:?}");
    assert_eq!(
        kubectl_out(
            kubeconfig,
            &["get", "crd", CRD, "-o", "jsonpath={.status.storedVersions}"]
        ),
        r#"["v2"]"#
    );
    images_kept(kubeconfig, count);
    wait(
        "the edited Apps reconciled",
        log,
        Duration::from_secs(300),
        || {
            edited.iter().all(|name| {
                let app: Value = serde_json::from_str(&kubectl_out(
                    kubeconfig,
                    &["get", "app", name, "-o", "json"],
                ))
                .unwrap_or_default();
                app["spec"]["replicas"] == 2
                    && app["status"]["observedGeneration"] == app["metadata"]["generation"]
            })
        },
    );
    // v1 can go now (no longer served, then removed).
    patch_crd(
        kubeconfig,
        r#"[{"op":"replace","path":"/spec/versions/0/served","value":false}]"#,
    );
    patch_crd(kubeconfig, r#"[{"op":"remove","path":"/spec/versions/0"}]"#);
}

#[test]
fn a_crd_migrated_on_a_real_server_resumes_after_a_kill_and_loses_no_write() {
    if !real_binaries("a_crd_migrated_on_a_real_server_resumes_after_a_kill_and_loses_no_write") {
        return;
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let count = count(500);
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let log = dir.path().join("rekon-dev.log");
    // The host serves the module's conversion; the migration is the test's.
    let _dev = start_dev(
        &[rekon_test_artifacts::APP, "--no-migrate"],
        &kubeconfig,
        &log,
    );
    wait(
        "rekon dev and the App CRD",
        &log,
        Duration::from_secs(120),
        || kubeconfig.exists() && kubectl(&kubeconfig, &["get", "crd", CRD]).status.success(),
    );
    let banner = std::fs::read_to_string(&log).unwrap();
    let etcd = banner
        .lines()
        .find_map(|l| l.strip_prefix("etcd: "))
        .and_then(|l| l.split(' ').next())
        .unwrap_or_else(|| panic!("no etcd URL in the banner\n{banner}"))
        .to_string();

    // Apps written in v1.
    create_v1_apps(dir.path(), &kubeconfig, count);
    let before = stored_versions(&etcd);
    assert_eq!(before.len(), count);
    assert!(
        before.iter().all(|(_, v)| v == "demo.rekon.dev/v1"),
        "{before:?}"
    );

    // The upgrade: v2 stores; both are in storedVersions, v1 cannot go.
    store_v2(&kubeconfig);
    assert_eq!(
        kubectl_out(
            &kubeconfig,
            &["get", "crd", CRD, "-o", "jsonpath={.status.storedVersions}"]
        ),
        r#"["v1","v2"]"#
    );

    // The migration, killed part-way, while users edit Apps.
    let mut first = migrate(&kubeconfig)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let edited = edit_apps(&kubeconfig, count);
    wait(
        "a quarter written back",
        &log,
        Duration::from_secs(300),
        || progress(&kubeconfig).1 >= count as u64 / 4,
    );
    first.kill().unwrap();
    first.wait().unwrap();
    stopped_part_way(&kubeconfig, &etcd, count);

    // The next run resumes and finishes.
    let second = migrate(&kubeconfig).output().unwrap();
    assert!(second.status.success(), "{}", shown(&second));
    assert!(
        String::from_utf8_lossy(&second.stdout)
            .contains("storedVersions is the storage version alone"),
        "{}",
        shown(&second)
    );
    let (state, _) = progress(&kubeconfig);
    assert_eq!(state, "done");
    migrated_and_v1_removable(&kubeconfig, &etcd, count, &edited, &log);
}
