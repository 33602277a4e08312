//! Modules shipped as ConfigMaps (`--watch-configmaps`): packed whole or
//! in parts by `rekon pack`, checked by `rekon check`, bad versions
//! refused, and a version marked `rekon.dev/rollout: shadow` shadowing the
//! serving one.

use serde_json::{Value, json};

use super::{behaved_by, configmap, version};
use crate::support::{self, Env};

/// `rekon pack` of these bytes, as objects.
fn pack(bytes: &[u8], name: &str, extra: &[&str]) -> Vec<Value> {
    let file = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(file.path(), bytes).unwrap();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_rekon"))
        .args(["pack", file.path().to_str().unwrap(), "--name", name])
        .args(extra)
        .env(
            "REKON_CACHE_DIR",
            std::env::temp_dir().join("rekon-test-pack-cache"),
        )
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_yaml_ng::Deserializer::from_slice(&output.stdout)
        .map(|d| <Value as serde::Deserialize>::deserialize(d).unwrap())
        .filter(|v| !v.is_null())
        .collect()
}

/// The component with `size` bytes of incompressible noise in a custom
/// section: a big module, as JavaScript and Python components are.
fn padded(mut bytes: Vec<u8>, size: usize) -> Vec<u8> {
    let name = b"rekon-test-padding";
    let mut payload = vec![name.len() as u8];
    payload.extend_from_slice(name);
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    payload.extend((0..size).map(|_| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x as u8
    }));
    bytes.push(0); // custom section
    let mut len = payload.len();
    loop {
        let byte = (len & 0x7f) as u8;
        len >>= 7;
        bytes.push(if len == 0 { byte } else { byte | 0x80 });
        if len == 0 {
            break;
        }
    }
    bytes.extend(payload);
    bytes
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modules_ship_as_configmaps_whole_or_in_parts_and_bad_versions_are_refused() {
    let mut env = Env::new().await;
    env.run(&[], &["--watch-configmaps"]);
    for document in pack(&version("misbehave-build-A"), "misbehave", &[]) {
        env.apply(document);
    }
    env.apply(configmap("one"));
    behaved_by(&env, "one", "misbehave-build-A").await;

    // A 3 MB version, split across several ConfigMaps: `rekon pack`
    // writes the parts first and the manifest last, and `kubectl apply -f`
    // applies them in that order. The host says nothing until the version
    // is complete: no ERROR in its log.
    let big = padded(version("misbehave-build-B"), 3 << 20);
    let documents = pack(&big, "misbehave", &["--compress", "gzip"]);
    assert!(documents.len() >= 5, "{} ConfigMaps", documents.len());
    assert!(
        documents.last().unwrap()["metadata"]["annotations"]["rekon.dev/parts"].is_string(),
        "the manifest comes last"
    );
    for document in &documents {
        env.apply(document.clone());
    }
    behaved_by(&env, "one", "misbehave-build-B").await;
    // Even in the wrong order (the manifest first), the host waits quietly
    // for the parts.
    let reordered = pack(
        &padded(version("misbehave-build-D"), 3 << 20),
        "misbehave",
        &["--compress", "gzip"],
    );
    for document in reordered.iter().rev() {
        env.apply(document.clone());
        tokio::time::sleep(std::time::Duration::from_millis(150)).await;
    }
    behaved_by(&env, "one", "misbehave-build-D").await;
    let log = env.log();
    assert!(
        !log.lines().any(|l| l.contains(" ERROR ")),
        "a rollout logs no ERROR:\n{log}"
    );
    let documents = pack(&big, "misbehave", &["--compress", "gzip"]);
    for document in &documents {
        env.apply(document.clone());
    }
    behaved_by(&env, "one", "misbehave-build-B").await;

    // A version with a part of another version is refused, and said so on
    // the ConfigMap; B keeps serving.
    let other = pack(
        &padded(version("misbehave-build-C"), 3 << 20),
        "misbehave",
        &["--compress", "gzip"],
    );
    let mut mixed = other.clone();
    mixed[2] = documents[2].clone();
    for document in &mixed {
        env.apply(document.clone());
    }
    let event = env
        .event("the ModuleRejected event", |e| {
            e["reason"] == "ModuleRejected"
        })
        .await;
    assert_eq!(event["type"], "Warning");
    assert_eq!(event["regarding"]["kind"], "ConfigMap");
    assert_eq!(event["regarding"]["name"], "misbehave");
    assert!(
        event["note"].as_str().unwrap().contains("another version"),
        "{event}"
    );
    env.apply(configmap("two"));
    behaved_by(&env, "two", "misbehave-build-B").await;

    // The missing part arrives: C loads.
    env.apply(other[2].clone());
    behaved_by(&env, "two", "misbehave-build-C").await;

    // A small version in one ConfigMap over the big one: the parts C
    // left behind are deleted once it has served a while.
    for document in pack(&version("misbehave-build-E"), "misbehave", &[]) {
        env.apply(document);
    }
    env.apply(configmap("three"));
    behaved_by(&env, "three", "misbehave-build-E").await;
    let configmaps = env.resource("", "v1", "ConfigMap");
    let parts = || {
        env.store()
            .list(&configmaps, &Default::default())
            .unwrap()
            .items
            .iter()
            .filter(|c| c["metadata"]["annotations"]["rekon.dev/part-of"] == "misbehave")
            .count()
    };
    assert!(parts() >= 4, "the big version's parts are there");
    env.wait_long("the stale parts deleted", || (parts() == 0).then_some(()))
        .await;
    assert!(
        env.log()
            .contains("deleted a part an earlier version of the module left behind"),
        "{}",
        env.log()
    );

    // Deleting the ConfigMap unloads the module.
    let configmaps = env.resource("", "v1", "ConfigMap");
    env.store()
        .delete(&configmaps, Some("default"), "misbehave", None)
        .unwrap();
    env.wait("the unload", || {
        env.log().contains("module unloaded").then_some(())
    })
    .await;
}

#[test]
fn check_accepts_what_pack_writes_and_refuses_a_tampered_copy() {
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_rekon"))
            .args(args)
            .env("REKON_CACHE_DIR", dir.path())
            .output()
            .unwrap()
    };
    let packed = run(&[
        "pack",
        rekon_test_artifacts::APP,
        "--name",
        "app",
        "--part-size",
        "20000",
    ]);
    assert!(packed.status.success());
    let yaml = dir.path().join("app.yaml");
    std::fs::write(&yaml, &packed.stdout).unwrap();
    let checked = run(&["check", yaml.to_str().unwrap()]);
    assert!(
        checked.status.success(),
        "{}",
        String::from_utf8_lossy(&checked.stderr)
    );
    let manifest: Value = serde_json::from_slice(&checked.stdout).unwrap();
    assert_eq!(manifest["name"], "app");

    let text = String::from_utf8(packed.stdout).unwrap();
    let tampered = text.replacen("part-1", "part-9", 1);
    std::fs::write(&yaml, tampered).unwrap();
    let refused = run(&["check", yaml.to_str().unwrap()]);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("missing"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
}

/// A version shipped in a ConfigMap annotated `rekon.dev/rollout: shadow`
/// shadows the serving version of its module instead of replacing it (its
/// writes dry runs, the difference shown at `/rollout/<module>`); deleting
/// it ends the shadow, and the serving version never stopped; taking the
/// annotation off promotes it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configmap_marked_shadow_shadows_the_serving_version() {
    let mut env = Env::new().await;
    let port = support::free_port();
    let metrics_addr = format!("127.0.0.1:{port}");
    env.run(
        &[],
        &["--watch-configmaps", "--metrics-addr", &metrics_addr],
    );
    // The serving version records its reconciles (its ConfigMap says so).
    for document in pack(
        &version("misbehave-build-A"),
        "misbehave",
        &["--record", "50"],
    ) {
        env.apply(document);
    }
    env.apply(configmap("one"));
    behaved_by(&env, "one", "misbehave-build-A").await;

    let mut shadow = pack(&version("misbehave-build-B"), "misbehave-next", &[]);
    let head = shadow.last_mut().unwrap();
    head["metadata"]["annotations"]["rekon.dev/rollout"] = json!("shadow");
    for document in shadow {
        env.apply(document);
    }
    let status = env
        .wait("the shadow's comparison", || {
            support::http_get(port, "/rollout/misbehave")
                .filter(|s| s.contains("differ  default/one"))
        })
        .await;
    assert!(
        status.contains("from configmap:default/misbehave-next"),
        "{status}"
    );
    assert!(status.contains("misbehave-build-B"), "{status}");
    // The serving version serves; the shadow's writes were dry runs.
    env.apply(configmap("two"));
    behaved_by(&env, "two", "misbehave-build-A").await;
    behaved_by(&env, "one", "misbehave-build-A").await;

    // Deleting the shadow's ConfigMap ends the shadow.
    let configmaps = env.resource("", "v1", "ConfigMap");
    env.store()
        .delete(&configmaps, Some("default"), "misbehave-next", None)
        .unwrap();
    env.wait("the shadow gone", || {
        support::http_get(port, "/rollout/misbehave").filter(|s| s.contains("no shadow"))
    })
    .await;

    // Shadowing again, then the annotation taken off: promoted, it serves.
    let marked = pack(&version("misbehave-build-B"), "misbehave-next", &[]);
    // `rekon pack --rollout shadow` writes the annotation.
    let shadow = pack(
        &version("misbehave-build-B"),
        "misbehave-next",
        &["--rollout", "shadow"],
    );
    assert_eq!(
        shadow.last().unwrap()["metadata"]["annotations"]["rekon.dev/rollout"],
        "shadow"
    );
    for document in shadow {
        env.apply(document);
    }
    env.wait("the shadow back", || {
        support::http_get(port, "/rollout/misbehave")
            .filter(|s| s.contains("from configmap:default/misbehave-next"))
    })
    .await;
    for document in marked {
        env.apply(document);
    }
    behaved_by(&env, "one", "misbehave-build-B").await;
    env.apply(configmap("three"));
    behaved_by(&env, "three", "misbehave-build-B").await;
    let status = support::http_get(port, "/rollout/misbehave").unwrap();
    assert!(status.contains("no shadow"), "{status}");
    // The recording follows the module: the promoted version's reconciles
    // are recorded though its ConfigMap does not ask for it.
    let recorded = support::http_get(port, "/recordings/misbehave").unwrap();
    assert!(
        recorded.contains("misbehave-build-B"),
        "the promoted version's reconciles are recorded: {recorded}"
    );
}
