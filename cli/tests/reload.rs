//! Modules from a watched directory, loaded live: the real `rekon run`
//! binary against the in-memory API server. Modules shipped as ConfigMaps
//! are in `reload/configmaps.rs`.

// Tests may unwrap (tokio tests too): a panic is a failed test with its message.
#![allow(clippy::unwrap_used)]

mod support;

#[path = "reload/configmaps.rs"]
mod configmaps;

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
        env.log().matches("informer started kind=ConfigMap").count(),
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
        log.matches("informer started kind=ConfigMap").count(),
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
