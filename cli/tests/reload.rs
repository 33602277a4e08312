//! Modules from a watched directory, loaded live: the real `rekon run`
//! binary against the in-memory API server.

// Tests may unwrap (tokio tests too): a panic is a failed test with its message.
#![allow(clippy::unwrap_used)]

mod support;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use support::Env;

/// The `misbehave` module with its build mark replaced: a second version
/// of the same module that writes another `data.behaved-by`.
fn version(mark: &str) -> Vec<u8> {
    support::misbehave_with(misbehave::BUILD_MARK, mark)
}

/// Writes a module the way editors and `cp --remove-destination` do: to a
/// temporary file, then renamed over the old one.
fn install(dir: &Path, name: &str, bytes: &[u8]) {
    let tmp = dir.join(format!(".{name}.tmp"));
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, dir.join(name)).unwrap();
}

fn configmap(name: &str) -> Value {
    json!({ "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": { "name": name, "namespace": "default" }, "data": {} })
}

async fn behaved_by(env: &Env, name: &str, mark: &str) {
    env.wait(&format!("{name} reconciled by {mark}"), || {
        env.get("", "v1", "ConfigMap", Some("default"), name)
            .filter(|c| c["data"]["behaved-by"] == mark)
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_versions_take_over_live_bad_ones_are_refused_and_removal_unloads() {
    let mut env = Env::new().await;
    let modules = env.dir.path().join("modules");
    std::fs::create_dir_all(&modules).unwrap();
    install(&modules, "misbehave.wasm", &version("misbehave-build-A"));
    env.run(&[], &["--modules", modules.to_str().unwrap()]);
    env.apply(configmap("one"));
    behaved_by(&env, "one", "misbehave-build-A").await;

    // A new version: every object is reconciled again by it, and an object
    // created during the swap is not lost.
    install(&modules, "misbehave.wasm", &version("misbehave-build-B"));
    env.apply(configmap("two"));
    behaved_by(&env, "one", "misbehave-build-B").await;
    behaved_by(&env, "two", "misbehave-build-B").await;
    env.wait("a reconcile with reason module-reloaded", || {
        env.log()
            .contains("reason=\"module-reloaded\"")
            .then_some(())
    })
    .await;
    assert_eq!(
        env.log().matches("informer started").count(),
        1,
        "the ConfigMap informer was kept across the swap"
    );

    // A corrupt version is refused; the last good one keeps serving.
    install(&modules, "misbehave.wasm", b"\0asm garbage");
    env.wait("the refusal", || {
        env.log().contains("module refused").then_some(())
    })
    .await;
    env.apply(configmap("three"));
    behaved_by(&env, "three", "misbehave-build-B").await;

    // Removing the file unloads the module.
    std::fs::remove_file(modules.join("misbehave.wasm")).unwrap();
    env.wait("the unload", || {
        env.log().contains("module unloaded").then_some(())
    })
    .await;
    env.apply(configmap("four"));
    tokio::time::sleep(Duration::from_millis(500)).await;
    let four = env
        .get("", "v1", "ConfigMap", Some("default"), "four")
        .unwrap();
    assert!(
        four["data"]["behaved-by"].is_null(),
        "reconciled after unload: {four}"
    );

    // It comes back when the file does.
    install(&modules, "misbehave.wasm", &version("misbehave-build-C"));
    behaved_by(&env, "four", "misbehave-build-C").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_with_a_warm_cache_loads_every_module_without_compiling() {
    let mut env = Env::new().await;
    let modules = env.dir.path().join("modules");
    std::fs::create_dir_all(&modules).unwrap();
    for (name, path) in [
        ("app.wasm", rekon_test_artifacts::APP),
        ("misbehave.wasm", rekon_test_artifacts::MISBEHAVE),
        ("configmap-sync.wasm", rekon_test_artifacts::CONFIGMAP_SYNC),
    ] {
        std::fs::copy(path, modules.join(name)).unwrap();
    }
    let dir = modules.to_str().unwrap().to_string();
    let first = env.run(&[], &["--modules", &dir]);
    env.wait("three modules loaded", || {
        (env.log_of(first).matches("module loaded").count() == 3).then_some(())
    })
    .await;
    // A cold start serves on baseline code; the optimised builds compile
    // in the background and are what the cache keeps.
    env.wait_long("three optimised builds", || {
        (env.log_of(first)
            .matches("module runs optimised code now")
            .count()
            == 3)
            .then_some(())
    })
    .await;
    env.signal(first, "TERM");
    env.wait("the first host stopped", || {
        env.log_of(first)
            .contains("controller stopped")
            .then_some(())
    })
    .await;
    let second = env.run(&[], &["--modules", &dir]);
    let log = env
        .wait("three modules loaded again", || {
            let log = env.log_of(second);
            (log.matches("module loaded").count() == 3).then_some(log)
        })
        .await;
    assert_eq!(log.matches("from=Cache").count(), 3, "{log}");
    assert_eq!(log.matches("from=Compiled").count(), 0, "{log}");
    assert_eq!(log.matches("from=Baseline").count(), 0, "{log}");
}

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
    serde_yaml::Deserializer::from_slice(&output.stdout)
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

/// Each module runs as soon as it has compiled: an App is reconciled while
/// the JavaScript guest beside it still compiles (no compile cache).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_compile_does_not_delay_another_modules_first_reconcile() {
    let mut env = Env::new().await;
    env.apply_file(&support::path("guests/app/manifests/crd.yaml"));
    env.apply(support::app("first", 1));
    env.run(
        &[
            rekon_test_artifacts::CONFIGMAP_SYNC_JS,
            rekon_test_artifacts::APP,
        ],
        &["--no-cache"],
    );
    env.wait("the App's Deployment", || {
        env.get("apps", "v1", "Deployment", Some("default"), "first")
    })
    .await;
    let js_loaded = |log: &str| {
        log.lines()
            .any(|l| l.contains("module loaded") && l.contains("module=configmap-sync-js"))
    };
    assert!(
        !js_loaded(&env.log()),
        "the JavaScript module loaded first: nothing shown\n{}",
        env.log()
    );
    env.wait_long("the JavaScript module loaded", || {
        js_loaded(&env.log()).then_some(())
    })
    .await;
}

/// Tiered loading, live: a module missing from the compile cache serves on
/// baseline code at once; its optimised build takes over while objects
/// keep arriving, and the swap is invisible to the controller: the same
/// informers, no second load, no reconcile-all, every object reconciled
/// once for its creation (none lost, none duplicated).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cold_module_serves_on_baseline_code_until_optimised_code_takes_over() {
    let mut env = Env::new().await;
    let modules = env.dir.path().join("modules");
    std::fs::create_dir_all(&modules).unwrap();
    let mark = "misbehave-build-T";
    install(&modules, "misbehave.wasm", &version(mark));
    env.run(&[], &["--modules", modules.to_str().unwrap()]);
    env.wait("the module loaded on baseline code", || {
        env.log()
            .lines()
            .any(|l| l.contains("module loaded") && l.contains("from=Baseline"))
            .then_some(())
    })
    .await;

    // Objects arrive before, during and after the swap.
    let mut names = Vec::new();
    let mut after_swap = 0;
    while after_swap < 10 {
        let name = format!("tiered-{}", names.len());
        env.apply(configmap(&name));
        names.push(name);
        if env.log().contains("module runs optimised code now") {
            after_swap += 1;
        }
        assert!(names.len() < 5_000, "the optimised build never took over");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    for name in &names {
        behaved_by(&env, name, mark).await;
    }
    env.settled().await;
    let log = env.log();
    assert_eq!(log.matches("module loaded").count(), 1, "one load:\n{log}");
    assert_eq!(
        log.matches("informer started").count(),
        1,
        "the ConfigMap informer is the same"
    );
    assert!(
        !log.contains("module-reloaded"),
        "no reconcile-all at the swap"
    );
    for name in &names {
        let reasons = env.reconcile_reasons(0, name);
        assert_eq!(
            reasons.iter().filter(|r| *r == "added").count(),
            1,
            "{name} reconciled once for its creation: {reasons:?}"
        );
    }
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
    for document in pack(&version("misbehave-build-A"), "misbehave", &[]) {
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
    let mut shadow = marked.clone();
    shadow.last_mut().unwrap()["metadata"]["annotations"]["rekon.dev/rollout"] = json!("shadow");
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
}
