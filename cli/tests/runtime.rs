//! The runtime, end to end: the `rekon` binary's `check` and `reconcile`
//! commands, the compile cache, the sandbox limits (against the `misbehave`
//! guest) and permissions.

// Tests may unwrap (tokio tests too): a panic is a failed test with its message.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;
use std::time::Duration;

use rekon_host::contract::{Reason, Request};
use rekon_host::names::object_ref_of;
use rekon_host::runtime::{CompileSource, DispatchOptions, ReconcileError, Tier};
use rekon_host::{Engine, EngineConfig, Module};
use rekon_offline::MemoryCluster;
use serde_json::{Value, json};

fn rekon(args: &[&str], cache: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rekon"))
        .args(args)
        .env("REKON_CACHE_DIR", cache)
        .env_remove("RUST_LOG")
        .output()
        .expect("running rekon")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("writing a test file");
    path.to_string_lossy().into_owned()
}

mod check {
    use super::*;

    fn refused(name: &str, bytes: Vec<u8>, expected: &str) {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), name, bytes);
        let output = rekon(&["check", &path], dir.path());
        assert!(!output.status.success(), "{name}: accepted");
        let err = stderr(&output);
        assert!(
            err.contains(expected),
            "{name}: expected {expected:?} in the error, got: {err}"
        );
        assert!(stdout(&output).is_empty(), "{name}: printed a manifest");
    }

    #[test]
    fn garbage_bytes_are_refused() {
        refused(
            "garbage.wasm",
            b"this is not wasm at all".to_vec(),
            "not a WebAssembly component",
        );
    }

    #[test]
    fn truncated_component_is_refused() {
        let mut bytes = std::fs::read(rekon_test_artifacts::APP).unwrap();
        bytes.truncate(bytes.len() / 2);
        refused("truncated.wasm", bytes, "the component is invalid");
    }

    #[test]
    fn core_module_is_refused() {
        refused(
            "core.wasm",
            wat::parse_str("(module (func (export \"reconcile\")))").unwrap(),
            "core WebAssembly module, not a component",
        );
    }

    #[test]
    fn component_of_another_world_is_refused() {
        refused(
            "other-import.wasm",
            wat::parse_str(
                r#"(component (import "acme:thing/api@1.0.0" (instance (export "ping" (func)))))"#,
            )
            .unwrap(),
            "does not target the rekon:reconciler world",
        );
    }

    #[test]
    fn component_without_the_exports_is_refused() {
        refused(
            "empty.wasm",
            wat::parse_str("(component)").unwrap(),
            "does not export the rekon:reconciler world",
        );
    }

    #[test]
    fn app_manifest_is_printed() {
        let dir = tempfile::tempdir().unwrap();
        let output = rekon(&["check", rekon_test_artifacts::APP], dir.path());
        assert!(output.status.success(), "{}", stderr(&output));
        let manifest: Value = serde_json::from_str(&stdout(&output)).unwrap();
        assert_eq!(manifest["name"], "app");
        assert_eq!(manifest["primary"]["kind"], "App");
        assert_eq!(manifest["primary"]["apiVersion"], "demo.rekon.dev/v1");
        let owns: Vec<&str> = manifest["owns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k["kind"].as_str().unwrap())
            .collect();
        assert!(
            owns.contains(&"Deployment") && owns.contains(&"Service"),
            "{owns:?}"
        );
        assert!(manifest["finalizer"].is_string());
        assert_eq!(manifest["digest"].as_str().unwrap().len(), 64);
        assert_eq!(manifest["contract"], "rekon:reconciler@0.4.0");
        assert_eq!(manifest["world"], "operator");
        let webhooks = &manifest["webhooks"];
        assert_eq!(webhooks["mutating"][0]["name"], "default-apps");
        assert_eq!(webhooks["validating"][0]["name"], "validate-apps");
        assert_eq!(webhooks["validating"][0]["failurePolicy"], "Fail");
        assert_eq!(
            webhooks["validating"][0]["operations"],
            json!(["CREATE", "UPDATE"])
        );
        assert_eq!(webhooks["conversions"][0]["versions"], json!(["v1", "v2"]));
    }

    /// A component built for 0.3.0 is recognised as such (its exports are
    /// 0.4.0's but `crds`; its imports say 0.3.0): an operator with its
    /// webhooks, shipping no CRD.
    #[test]
    fn a_0_3_0_component_is_checked_as_built_for_0_3_0() {
        let dir = tempfile::tempdir().unwrap();
        let output = rekon(&["check", rekon_test_artifacts::APP_V0_3], dir.path());
        assert!(output.status.success(), "{}", stderr(&output));
        let manifest: Value = serde_json::from_str(&stdout(&output)).unwrap();
        assert_eq!(manifest["contract"], "rekon:reconciler@0.3.0");
        assert_eq!(manifest["world"], "operator");
        assert_eq!(
            manifest["webhooks"]["validating"][0]["name"],
            "validate-apps"
        );
        assert_eq!(manifest["crds"], json!([]));
    }

    /// A component built for 0.2.0 is recognised as such (its exports are
    /// those of 0.3.0's `reconciler`; its imports say 0.2.0).
    #[test]
    fn a_0_2_0_component_is_checked_as_built_for_0_2_0() {
        let dir = tempfile::tempdir().unwrap();
        let output = rekon(&["check", rekon_test_artifacts::APP_V0_2], dir.path());
        assert!(output.status.success(), "{}", stderr(&output));
        let manifest: Value = serde_json::from_str(&stdout(&output)).unwrap();
        assert_eq!(manifest["contract"], "rekon:reconciler@0.2.0");
        assert_eq!(manifest["world"], "reconciler");
        assert_eq!(manifest["primaryPredicates"], json!(["generationChanged"]));
        assert_eq!(manifest["webhooks"]["validating"], json!([]));
    }

    /// A component built for 0.1.0 is recognised as such, and its manifest
    /// reads as 0.1.0 behaved: every change passes, no selector, no resync.
    #[test]
    fn a_0_1_0_component_is_checked_as_built_for_0_1_0() {
        let dir = tempfile::tempdir().unwrap();
        let output = rekon(&["check", rekon_test_artifacts::APP_V0_1], dir.path());
        assert!(output.status.success(), "{}", stderr(&output));
        let manifest: Value = serde_json::from_str(&stdout(&output)).unwrap();
        assert_eq!(manifest["contract"], "rekon:reconciler@0.1.0");
        assert_eq!(manifest["name"], "app");
        assert_eq!(manifest["primaryPredicates"], json!([]));
        assert!(manifest["primarySelector"].is_null() && manifest["resyncPeriodMs"].is_null());
        assert_eq!(manifest["owns"][0]["predicates"], json!([]));
    }

    #[test]
    fn a_reader_that_goes_away_is_not_an_error() {
        // `rekon check app.wasm | head -0`: the pipe closes before the
        // manifest is written.
        let dir = tempfile::tempdir().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_rekon"))
            .args(["check", rekon_test_artifacts::APP])
            .env("REKON_CACHE_DIR", dir.path())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let output = child.wait_with_output().unwrap();
        assert!(
            output.status.success() && !stderr(&output).contains("panicked"),
            "{:?}: {}",
            output.status,
            stderr(&output)
        );
    }
}

mod cache {
    use super::*;

    /// Without tiers (a cold load compiles the optimised build at once),
    /// cached in `dir`.
    fn optimised_only(dir: &std::path::Path) -> EngineConfig {
        EngineConfig::default()
            .baseline(false)
            .cache_dir(Some(dir.to_path_buf()))
    }

    async fn load(config: EngineConfig, path: &str) -> Module {
        let engine = Engine::new(config).unwrap();
        Module::load(&engine, &std::fs::read(path).unwrap())
            .await
            .unwrap()
    }

    #[tokio::test]
    async fn compiled_once_reused_across_restarts_and_invalidated_by_engine_changes() {
        let dir = tempfile::tempdir().unwrap();
        let config = optimised_only(dir.path());

        let first = load(config.clone(), rekon_test_artifacts::APP).await;
        assert_eq!(first.compile_source(), CompileSource::Compiled);
        // A new engine (a restarted host) loads the same bytes from the cache.
        let second = load(config.clone(), rekon_test_artifacts::APP).await;
        assert_eq!(second.compile_source(), CompileSource::Cache);
        assert_eq!(second.manifest().name, "app");

        // An engine whose code generation differs must not use that entry.
        let other = load(config.clone().fast_compile(true), rekon_test_artifacts::APP).await;
        assert_eq!(other.compile_source(), CompileSource::Compiled);
        assert_eq!(
            entries(dir.path(), ".cwasm").len(),
            2,
            "one cache entry per engine configuration"
        );
    }

    /// The cache entries in `dir` whose names end with `suffix`.
    fn entries(dir: &std::path::Path, suffix: &str) -> Vec<std::path::PathBuf> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(suffix))
            .collect()
    }

    fn description(dir: &std::path::Path) -> std::path::PathBuf {
        let found = entries(dir, ".described.json");
        assert_eq!(found.len(), 1, "one description kept: {found:?}");
        found[0].clone()
    }

    /// A version loaded before is not run again to describe itself: its
    /// manifest and webhooks come from the cache, beside its code.
    #[tokio::test]
    async fn description_kept_beside_the_code_and_used_on_the_next_load() {
        let dir = tempfile::tempdir().unwrap();
        let config = optimised_only(dir.path());
        let first = load(config.clone(), rekon_test_artifacts::APP).await;
        let kept = description(dir.path());
        let text = std::fs::read_to_string(&kept).unwrap();
        let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["manifest"]["name"], "app");
        assert_eq!(value["manifest"]["permissions"][0]["verbs"][0], "get");

        // What the next load reads is the kept description, not a new call
        // to the module: an edited copy shows through.
        value["manifest"]["version"] = serde_json::json!("kept-description");
        std::fs::write(&kept, value.to_string()).unwrap();
        let second = load(config.clone(), rekon_test_artifacts::APP).await;
        assert_eq!(second.compile_source(), CompileSource::Cache);
        assert_eq!(second.manifest().version, "kept-description");
        let mut same = rekon_host::runtime::manifest_json(second.manifest());
        same["version"] = rekon_host::runtime::manifest_json(first.manifest())["version"].clone();
        assert_eq!(same, rekon_host::runtime::manifest_json(first.manifest()));
        assert_eq!(
            format!("{:?}", second.webhooks()),
            format!("{:?}", first.webhooks())
        );

        // An unreadable description: the module is asked again, and the
        // description rewritten.
        std::fs::write(&kept, "{ not json").unwrap();
        let third = load(config.clone(), rekon_test_artifacts::APP).await;
        assert_eq!(third.manifest().version, first.manifest().version);
        let rewritten: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&kept).unwrap()).unwrap();
        assert_eq!(rewritten["manifest"]["name"], "app");
    }

    /// Limits that the module no longer fits refuse it at load, as when it
    /// was first described: a kept description does not let it through.
    #[tokio::test]
    async fn description_does_not_outlive_the_limits_it_was_made_under() {
        let dir = tempfile::tempdir().unwrap();
        let config = optimised_only(dir.path());
        load(config.clone(), rekon_test_artifacts::APP).await;
        // The guests start with 4 MiB of linear memory.
        let engine = Engine::new(config.max_memory_bytes(1 << 20)).unwrap();
        let refused = Module::load(&engine, &std::fs::read(rekon_test_artifacts::APP).unwrap())
            .await
            .expect_err("a module that does not fit the memory cap is refused at load");
        assert!(format!("{refused:?}").contains("4194304"), "{refused:?}");
    }

    #[tokio::test]
    async fn corrupt_cache_entry_is_recompiled() {
        let dir = tempfile::tempdir().unwrap();
        let config = optimised_only(dir.path());
        let first = load(config.clone(), rekon_test_artifacts::APP).await;
        let engine = Engine::new(config.clone()).unwrap();
        let entry = engine.cache_path(first.digest()).unwrap();
        std::fs::write(&entry, b"not a compiled module").unwrap();

        let again = load(config, rekon_test_artifacts::APP).await;
        assert_eq!(again.compile_source(), CompileSource::Compiled);
        assert_eq!(again.manifest().name, "app");
        assert!(
            std::fs::read(&entry).unwrap().len() > 1000,
            "entry rewritten"
        );
    }
}

/// Tiered loading: a cold load serves on baseline code (Winch) while the
/// optimised build (Cranelift) compiles in the background.
mod tiers {
    use super::*;

    fn app_request() -> (MemoryCluster, Request) {
        cluster_with(&[json!({
            "apiVersion": "demo.rekon.dev/v1", "kind": "App",
            "metadata": { "name": "web", "namespace": "default", "uid": "u-web" },
            "spec": { "image": "nginx", "replicas": 2, "port": 80 },
        })])
    }

    async fn reconcile(module: &Module) -> rekon_host::runtime::Outcome {
        let (cluster, request) = app_request();
        module
            .reconcile(Arc::new(cluster), &request, DispatchOptions::default())
            .await
    }

    /// A cold load answers on baseline code, then the optimised build takes
    /// over the same module (and its narrowed copies) and is what the cache
    /// keeps: a restarted host loads it from there, optimised at once.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_cold_load_serves_on_baseline_code_then_optimised_code_takes_over() {
        let dir = tempfile::tempdir().unwrap();
        let config = EngineConfig::default().cache_dir(Some(dir.path().to_path_buf()));
        let engine = Engine::new(config.clone()).unwrap();
        assert!(engine.has_baseline());
        let bytes = std::fs::read(rekon_test_artifacts::APP).unwrap();
        let module = Module::load(&engine, &bytes).await.unwrap();
        assert_eq!(module.compile_source(), CompileSource::Baseline);
        let narrowed = module.narrowed(module.manifest().permissions.clone());
        assert!(reconcile(&module).await.result.is_ok());

        let deadline = std::time::Instant::now() + Duration::from_secs(120);
        while module.tier() == Tier::Baseline {
            assert!(
                std::time::Instant::now() < deadline,
                "the optimised build never took over"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(narrowed.tier(), Tier::Optimized, "copies share the code");
        let after = reconcile(&module).await;
        assert!(after.result.is_ok(), "{:?}", after.result);
        assert!(
            engine.cache_path(module.digest()).unwrap().exists(),
            "the optimised build is cached"
        );

        let restarted = Module::load(&Engine::new(config).unwrap(), &bytes)
            .await
            .unwrap();
        assert_eq!(restarted.compile_source(), CompileSource::Cache);
        assert_eq!(restarted.tier(), Tier::Optimized);
    }

    /// A component the baseline compiler refuses (here: it uses tail
    /// calls, which Winch does not compile) is compiled optimised at once,
    /// and goes on to the checks every component passes.
    #[tokio::test]
    async fn a_component_the_baseline_compiler_refuses_is_compiled_optimised() {
        let dir = tempfile::tempdir().unwrap();
        let engine =
            Engine::new(EngineConfig::default().cache_dir(Some(dir.path().to_path_buf()))).unwrap();
        let component = |body: &str| {
            wat::parse_str(format!(
                "(component (core module (func $f (result i32) {body}) (func (export \"g\") (result i32) call $f)))"
            ))
            .unwrap()
        };
        let plain = component("i32.const 1");
        let (_, source) = engine
            .compile_tiered(&plain, &rekon_host::runtime::digest(&plain))
            .unwrap();
        assert_eq!(source, CompileSource::Baseline);

        let tail_calls = component("return_call $f");
        let (_, source) = engine
            .compile_tiered(&tail_calls, &rekon_host::runtime::digest(&tail_calls))
            .unwrap();
        assert_eq!(source, CompileSource::Compiled, "the fallback compiled it");
        assert!(
            engine
                .cache_path(&rekon_host::runtime::digest(&tail_calls))
                .unwrap()
                .exists(),
            "and cached it"
        );
        // Loading it goes past compiling: it is refused for its exports.
        let error = Module::load(&engine, &tail_calls).await.unwrap_err();
        assert!(
            matches!(error, rekon_host::runtime::ModuleError::Exports(_)),
            "{error:?}"
        );
    }
}

/// Seeds `objects` and builds the request for the first one.
fn cluster_with(objects: &[Value]) -> (MemoryCluster, Request) {
    let cluster = MemoryCluster::default();
    let mut stored = Vec::new();
    for object in objects {
        stored.push(cluster.seed(object.clone()).expect("seeding"));
    }
    let target = object_ref_of(&stored[0]).unwrap();
    let request = Request {
        target,
        object: Some(stored[0].to_string()),
        reason: Reason::Manual,
        attempt: 0,
    };
    (cluster, request)
}

mod app {
    use super::*;

    fn app_object() -> Value {
        json!({
            "apiVersion": "demo.rekon.dev/v1",
            "kind": "App",
            "metadata": { "name": "web", "namespace": "default", "generation": 1 },
            "spec": { "image": "nginx:1.27", "replicas": 3, "port": 8080 },
        })
    }

    #[test]
    fn rekon_reconcile_prints_every_call_and_the_result() {
        let dir = tempfile::tempdir().unwrap();
        let object = write(
            dir.path(),
            "app.yaml",
            serde_yaml::to_string(&app_object()).unwrap(),
        );
        let output = rekon(
            &["reconcile", rekon_test_artifacts::APP, "--object", &object],
            dir.path(),
        );
        assert!(
            output.status.success(),
            "{}\n{}",
            stdout(&output),
            stderr(&output)
        );
        let lines: Vec<Value> = stdout(&output)
            .lines()
            .map(|l| serde_json::from_str(l).expect("every line is JSON"))
            .collect();
        let last = lines.last().unwrap();
        assert!(
            last["result"]["ok"].is_string() || last["result"]["ok"].is_object(),
            "{last}"
        );

        let applied = |kind: &str| {
            lines
                .iter()
                .find(|l| {
                    l["call"] == "patch"
                        && l["args"]["kind"] == kind
                        && l["args"]["patchType"]["apply"].is_object()
                })
                .unwrap_or_else(|| panic!("no server-side apply of a {kind}: {lines:#?}"))
        };
        let deployment = &applied("Deployment")["result"]["ok"];
        assert_eq!(deployment["spec"]["replicas"], 3);
        assert_eq!(
            deployment["spec"]["template"]["spec"]["containers"][0]["image"],
            "nginx:1.27"
        );
        let owner = &deployment["metadata"]["ownerReferences"][0];
        assert_eq!(owner["kind"], "App");
        assert_eq!(owner["name"], "web");
        assert_eq!(owner["controller"], true);
        let service = &applied("Service")["result"]["ok"];
        assert_eq!(service["spec"]["ports"][0]["port"], 8080);

        let status = lines
            .iter()
            .find(|l| l["call"] == "patch-status" || l["call"] == "replace-status")
            .expect("a status write");
        let status = &status["result"]["ok"]["status"];
        assert_eq!(status["observedGeneration"], 1);
        let ready = status["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == "Ready")
            .expect("a Ready condition");
        assert!(ready["status"].is_string());
    }

    /// An App given in v2 reaches the module in v1, the version its
    /// manifest reconciles, converted by the module's conversion webhook as
    /// `rekon dev` and a cluster convert it.
    #[test]
    fn rekon_reconcile_converts_an_object_of_another_version() {
        let dir = tempfile::tempdir().unwrap();
        let v2 = json!({
            "apiVersion": "demo.rekon.dev/v2",
            "kind": "App",
            "metadata": { "name": "web", "namespace": "default" },
            "spec": { "replicas": 3, "container": { "image": "nginx:1.28", "port": 8080 } },
        });
        let object = write(dir.path(), "app.yaml", serde_yaml::to_string(&v2).unwrap());
        let output = rekon(
            &["reconcile", rekon_test_artifacts::APP, "--object", &object],
            dir.path(),
        );
        assert!(
            output.status.success(),
            "{}\n{}",
            stdout(&output),
            stderr(&output)
        );
        let lines: Vec<Value> = stdout(&output)
            .lines()
            .map(|l| serde_json::from_str(l).expect("every line is JSON"))
            .collect();
        let deployment = lines
            .iter()
            .find(|l| l["call"] == "patch" && l["args"]["kind"] == "Deployment")
            .unwrap_or_else(|| panic!("no Deployment applied: {lines:#?}"));
        let deployment = &deployment["result"]["ok"];
        assert_eq!(deployment["spec"]["replicas"], 3);
        assert_eq!(
            deployment["spec"]["template"]["spec"]["containers"][0]["image"],
            "nginx:1.28"
        );
        assert!(
            lines.last().unwrap()["result"]["ok"].is_string()
                || lines.last().unwrap()["result"]["ok"].is_object()
        );
    }

    /// `rekon reconcile` runs the paths a live reconcile can: an object
    /// being deleted, with the module's finalizer, is reconciled as
    /// `finalizing`; timestamps given in the object are kept.
    #[test]
    fn rekon_reconcile_runs_a_finalizing_reconcile_and_keeps_given_timestamps() {
        let dir = tempfile::tempdir().unwrap();
        let mut app = app_object();
        app["metadata"]["creationTimestamp"] = json!("2020-01-01T00:00:00Z");
        app["metadata"]["deletionTimestamp"] = json!("2026-11-23T00:00:00Z");
        app["metadata"]["finalizers"] = json!([::app::FINALIZER]);
        let object = write(dir.path(), "app.yaml", serde_yaml::to_string(&app).unwrap());
        let output = rekon(
            &["reconcile", rekon_test_artifacts::APP, "--object", &object],
            dir.path(),
        );
        assert!(
            output.status.success(),
            "{}\n{}",
            stdout(&output),
            stderr(&output)
        );
        let lines: Vec<Value> = stdout(&output)
            .lines()
            .map(|l| serde_json::from_str(l).expect("every line is JSON"))
            .collect();
        // The cleanup ran: owned objects deleted, no apply of them.
        let deleted: Vec<&str> = lines
            .iter()
            .filter(|l| l["call"] == "delete")
            .filter_map(|l| l["args"]["kind"].as_str())
            .collect();
        assert_eq!(deleted, ["Deployment", "Service"], "{lines:#?}");
        assert!(
            !lines
                .iter()
                .any(|l| l["args"]["patchType"]["apply"].is_object())
        );
        // Then the finalizer went, from the object as given.
        let removal = lines
            .iter()
            .find(|l| l["call"] == "patch" && l["args"]["patchType"] == "json")
            .expect("the finalizer's removal");
        let removed = &removal["result"]["ok"];
        assert_eq!(
            removed["metadata"]["creationTimestamp"],
            "2020-01-01T00:00:00Z"
        );
        assert!(removed["metadata"]["finalizers"].is_null(), "{removed}");
    }

    #[tokio::test]
    async fn reconcile_in_process_writes_owned_objects_to_the_store() {
        let engine = Engine::new(EngineConfig::default()).unwrap();
        let module = Module::load(&engine, &std::fs::read(rekon_test_artifacts::APP).unwrap())
            .await
            .unwrap();
        let (cluster, request) = cluster_with(&[app_object()]);
        let outcome = module
            .reconcile(
                Arc::new(cluster.clone()),
                &request,
                DispatchOptions::default(),
            )
            .await;
        outcome.result.expect("reconcile succeeds");
        let store = cluster.store();
        let deployments = store.resource_for_kind("apps", "v1", "Deployment").unwrap();
        let deployment = store.get(&deployments, Some("default"), "web").unwrap();
        assert_eq!(deployment["spec"]["replicas"], 3);
        let services = store.resource_for_kind("", "v1", "Service").unwrap();
        store.get(&services, Some("default"), "web").unwrap();
    }
}

mod limits {
    use super::*;

    fn engine() -> Engine {
        Engine::new(
            EngineConfig::default()
                .max_memory_bytes(32 << 20)
                .max_reconcile_time(Duration::from_millis(300)),
        )
        .unwrap()
    }

    async fn misbehave(engine: &Engine) -> Module {
        Module::load(
            engine,
            &std::fs::read(rekon_test_artifacts::MISBEHAVE).unwrap(),
        )
        .await
        .unwrap()
    }

    async fn misbehave_on(engine: &Engine, tier: Tier) -> Module {
        let module = Module::load_on(
            engine,
            &std::fs::read(rekon_test_artifacts::MISBEHAVE).unwrap(),
            tier,
        )
        .await
        .unwrap();
        assert_eq!(module.tier(), tier);
        module
    }

    async fn run(module: &Module, mode: &str) -> (MemoryCluster, rekon_host::runtime::Outcome) {
        let (cluster, request) = cluster_with(&[
            json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": { "name": format!("cm-{mode}"), "namespace": "default",
                    "annotations": { "misbehave.rekon.dev/mode": mode } },
                "data": { "mode": mode },
            }),
            json!({
                "apiVersion": "v1", "kind": "Secret",
                "metadata": { "name": misbehave::VICTIM, "namespace": "default" },
                "data": { "key": "dmFsdWU=" },
            }),
        ]);
        let outcome = module
            .reconcile(
                Arc::new(cluster.clone()),
                &request,
                DispatchOptions {
                    record: true,
                    ..DispatchOptions::default()
                },
            )
            .await;
        (cluster, outcome)
    }

    /// On optimised code and on baseline code alike (a module serves on
    /// baseline code while its optimised build compiles): a loop is
    /// stopped at its deadline, memory is capped, a stack overflow is one.
    #[tokio::test]
    async fn every_failure_mode_is_a_typed_failure_and_the_module_keeps_working() {
        let engine = engine();
        for tier in [Tier::Optimized, Tier::Baseline] {
            failure_modes(&misbehave_on(&engine, tier).await, tier).await;
        }
    }

    async fn failure_modes(module: &Module, tier: Tier) {
        type Expected = fn(&ReconcileError) -> bool;
        let cases: &[(&str, Expected)] = &[
            ("trap", |e| matches!(e, ReconcileError::Trap { .. })),
            (
                "panic",
                |e| matches!(e, ReconcileError::Panic { message } if message.contains(misbehave::PANIC_MESSAGE)),
            ),
            ("loop", |e| matches!(e, ReconcileError::Timeout { .. })),
            ("alloc", |e| matches!(e, ReconcileError::OutOfMemory { .. })),
            ("recurse-small", |e| {
                matches!(e, ReconcileError::StackOverflow)
            }),
            // Frames in linear memory run off the guest's shadow stack: the
            // engine sees an out-of-bounds access, a trap.
            ("recurse", |e| matches!(e, ReconcileError::Trap { .. })),
            ("huge-error", |e| {
                matches!(e, ReconcileError::Guest { message, .. }
                    if message.len() < 10_000 && message.contains("truncated"))
            }),
        ];
        for (mode, expected) in cases {
            let (_, outcome) = run(module, mode).await;
            let error = outcome.result.expect_err(mode);
            assert!(
                expected(&error),
                "{tier:?} {mode}: unexpected failure {error:?}"
            );
            // The next reconcile of the same module works.
            let (_, good) = run(module, "ok").await;
            assert!(
                good.result.is_ok(),
                "{tier:?} after {mode}: {:?}",
                good.result
            );
        }
    }

    #[tokio::test]
    async fn calls_outside_the_manifest_are_denied() {
        let engine = engine();
        let module = misbehave(&engine).await;
        let (cluster, outcome) = run(&module, "forbidden").await;
        assert!(!outcome.denied.is_empty(), "nothing was denied");
        let secrets = cluster
            .store()
            .resource_for_kind("", "v1", "Secret")
            .unwrap();
        cluster
            .store()
            .get(&secrets, Some("default"), misbehave::VICTIM)
            .expect("the Secret is still there");
        let configmaps = cluster
            .store()
            .resource_for_kind("", "v1", "ConfigMap")
            .unwrap();
        let cm = cluster
            .store()
            .get(&configmaps, Some("default"), "cm-forbidden")
            .unwrap();
        assert_eq!(
            cm["data"]["forbidden"], "403 Forbidden",
            "what the guest saw"
        );
        let denied = outcome
            .calls
            .iter()
            .find(|c| c.result["error"]["code"] == 403)
            .expect("the guest saw a 403");
        assert_eq!(denied.result["error"]["reason"], "Forbidden");
        assert_eq!(denied.args["kind"], "Secret");
    }
}

mod dev {
    use super::*;
    use std::time::Instant;

    fn kubectl(kubeconfig: &Path, args: &[&str]) -> Output {
        Command::new("kubectl")
            .args(args)
            .env("KUBECONFIG", kubeconfig)
            .output()
            .expect("running kubectl")
    }

    fn sigterm_and_wait(child: &mut std::process::Child) {
        let status = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                assert!(status.success(), "exit status {status}");
                return;
            }
            assert!(Instant::now() < deadline, "still running after SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `rekon dev` with the example guests and only the example App: the
    /// app module ships its CRD, which `rekon dev` installs before
    /// applying the App, and the App is reconciled.
    #[test]
    fn dev_runs_the_example_guests_against_the_embedded_server() {
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = dir.path().join("kubeconfig");
        let manifests = concat!(env!("CARGO_MANIFEST_DIR"), "/../guests/app/manifests");
        let mut child = Command::new(env!("CARGO_BIN_EXE_rekon"))
            .env_remove("KUBEBUILDER_ASSETS") // the in-memory server
            .args([
                "dev",
                rekon_test_artifacts::APP,
                rekon_test_artifacts::CONFIGMAP_SYNC,
            ])
            // No CRD given: the app module ships it, and `rekon dev` installs it.
            .args(["-f", &format!("{manifests}/example.yaml")])
            .arg("--write-kubeconfig")
            .arg(&kubeconfig)
            .env("REKON_CACHE_DIR", dir.path().join("cache"))
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        // The example App gets its Deployment and a status, seen with kubectl.
        loop {
            if kubeconfig.exists() {
                let status = kubectl(
                    &kubeconfig,
                    &[
                        "get",
                        "app",
                        "web",
                        "-o",
                        "jsonpath={.status.observedGeneration}",
                    ],
                );
                let deployment = kubectl(&kubeconfig, &["get", "deployment", "web", "-o", "name"]);
                if stdout(&status) == "1" && stdout(&deployment).trim() == "deployment.apps/web" {
                    break;
                }
            }
            assert!(
                Instant::now() < deadline,
                "the example App was not reconciled"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        sigterm_and_wait(&mut child);
    }

    /// `rekon dev -f` applies its objects through the API server once the
    /// modules' webhooks serve, as `kubectl apply` would: an App the
    /// module's validating webhook denies is refused, and `rekon dev` says
    /// so and stops.
    #[test]
    fn dev_applies_its_objects_through_the_modules_webhooks() {
        let dir = tempfile::tempdir().unwrap();
        let app = write(
            dir.path(),
            "big.yaml",
            "apiVersion: demo.rekon.dev/v1\nkind: App\nmetadata: {name: big, namespace: default}\nspec: {image: \"nginx:1.27\", replicas: 500}\n",
        );
        let mut child = Command::new(env!("CARGO_BIN_EXE_rekon"))
            .env_remove("KUBEBUILDER_ASSETS") // the in-memory server
            .args(["dev", rekon_test_artifacts::APP, "-f", &app])
            .env("REKON_CACHE_DIR", dir.path().join("cache"))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() > deadline {
                child.kill().unwrap();
                panic!("rekon dev applied an App its webhook denies and kept running");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let mut err = String::new();
        std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
        assert!(!status.success(), "{err}");
        assert!(err.contains("big.yaml"), "{err}");
        assert!(err.contains("denied the request"), "{err}");
    }

    /// A module owning built-in kinds beyond Deployments (Namespace,
    /// ResourceQuota, RoleBinding, StatefulSet, Job) reconciles in
    /// `rekon dev`: it provisions, follows its owned objects' status, and
    /// its Tenant's deletion takes everything with it.
    #[test]
    fn dev_runs_a_tenant_operator_owning_quota_statefulset_and_job() {
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = dir.path().join("kubeconfig");
        let manifests = concat!(env!("CARGO_MANIFEST_DIR"), "/../guests/tenant/manifests");
        let mut child = Command::new(env!("CARGO_BIN_EXE_rekon"))
            .env_remove("KUBEBUILDER_ASSETS") // the in-memory server
            .args(["dev", rekon_test_artifacts::TENANT])
            .args(["-f", &format!("{manifests}/crd.yaml")])
            .args(["-f", &format!("{manifests}/example.yaml")])
            .arg("--write-kubeconfig")
            .arg(&kubeconfig)
            .env("REKON_CACHE_DIR", dir.path().join("cache"))
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let cache = dir.path().join("kubectl-cache");
        let run = |args: &[&str]| dev_kubectl(&kubeconfig, &cache, args);
        let until = |what: &str, done: &dyn Fn() -> bool| {
            let deadline = Instant::now() + Duration::from_secs(30);
            while !(kubeconfig.exists() && done()) {
                assert!(Instant::now() < deadline, "timed out waiting for {what}");
                std::thread::sleep(Duration::from_millis(100));
            }
        };
        let jsonpath = |args: &[&str], path: &str| {
            let mut all = args.to_vec();
            let path = format!("jsonpath={path}");
            all.extend(["-o", &path]);
            stdout(&run(&all))
        };
        until("the tenant's objects", &|| {
            let names = stdout(&run(&[
                "get",
                "resourcequota,rolebinding,statefulset,job",
                "-n",
                "tenant-acme",
                "-o",
                "name",
            ]));
            names.contains("resourcequota/tenant-quota")
                && names.contains("rolebinding.rbac.authorization.k8s.io/tenant-admins")
                && names.contains("statefulset.apps/db")
                && names.contains("job.batch/db-init")
        });
        let reason = || jsonpath(&["get", "tenant", "acme"], "{.status.conditions[0].reason}");
        until("the Provisioning status", &|| reason() == "Provisioning");
        // The workload controllers report: the module hears of its owned
        // objects' changes and reports the tenant ready.
        for (kind, status) in [
            (
                "statefulset/db",
                r#"{"status":{"replicas":1,"readyReplicas":1}}"#,
            ),
            ("job/db-init", r#"{"status":{"succeeded":1}}"#),
        ] {
            let out = run(&[
                "patch",
                kind,
                "-n",
                "tenant-acme",
                "--subresource=status",
                "--type=merge",
                "-p",
                status,
            ]);
            assert!(out.status.success(), "{}", stderr(&out));
        }
        until("the Provisioned status", &|| reason() == "Provisioned");
        assert_eq!(
            jsonpath(
                &["get", "tenant", "acme"],
                "{.status.databaseReady} {.status.initialized}"
            ),
            "1 true"
        );
        // Deleting the Tenant collects the namespace and its contents.
        let out = run(&["delete", "tenant", "acme", "--wait=false"]);
        assert!(out.status.success(), "{}", stderr(&out));
        until("the namespace's removal", &|| {
            stderr(&run(&["get", "namespace", "tenant-acme"])).contains("NotFound")
        });
        sigterm_and_wait(&mut child);
    }

    /// Every built-in resource of Kubernetes 1.36, driven through kubectl
    /// against `rekon dev --api-only` as its discovery document allows:
    /// created from a minimal manifest, read, listed by label, patched and
    /// deleted; a verb the resource does not serve is refused with 405.
    #[test]
    fn every_builtin_resource_through_kubectl() {
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = dir.path().join("kubeconfig");
        let mut child = Command::new(env!("CARGO_BIN_EXE_rekon"))
            .env_remove("KUBEBUILDER_ASSETS") // the in-memory server
            .args(["dev", "--api-only", "--write-kubeconfig"])
            .arg(&kubeconfig)
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while !kubeconfig.exists() {
            assert!(Instant::now() < deadline, "no kubeconfig written");
            std::thread::sleep(Duration::from_millis(20));
        }
        let cache = dir.path().join("kubectl-cache");
        let kubectl = |args: &[&str]| {
            let mut all = vec!["--cache-dir", cache.to_str().unwrap()];
            all.extend_from_slice(args);
            kubectl(&kubeconfig, &all)
        };
        let manifests = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/builtins.yaml"
        ))
        .unwrap();
        let manifests: Vec<Value> = serde_yaml::Deserializer::from_str(&manifests)
            .map(|d| serde::Deserialize::deserialize(d).unwrap())
            .collect();
        let resources = rekon_store::builtin_resources();
        assert_eq!(resources.len(), 68, "the resources of Kubernetes 1.36");
        let mut failures = Vec::new();
        for res in &resources {
            if let Err(failure) = drive(&kubectl, res, &manifests, dir.path()) {
                failures.push(format!("{}.{}: {failure}", res.plural, res.api_version()));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
        sigterm_and_wait(&mut child);
    }

    /// `rekon dev --api-resources` serves kinds without a CRD: an
    /// aggregated API (metrics.k8s.io, which `kubectl top` reads) and a
    /// kind of a version Kubernetes no longer serves (batch/v1beta1).
    #[test]
    fn dev_serves_further_resources_from_discovery_documents() {
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = dir.path().join("kubeconfig");
        let resources = write(
            dir.path(),
            "resources.yaml",
            r#"kind: APIResourceList
apiVersion: v1
groupVersion: metrics.k8s.io/v1beta1
resources:
- {name: nodes, singularName: "", namespaced: false, kind: NodeMetrics, verbs: [get, list]}
- {name: pods, singularName: "", namespaced: true, kind: PodMetrics, verbs: [get, list]}
---
kind: APIResourceList
apiVersion: v1
groupVersion: batch/v1beta1
resources:
- {name: cronjobs, singularName: cronjob, namespaced: true, kind: CronJob, shortNames: [cj]}
"#,
        );
        let metrics = write(
            dir.path(),
            "metrics.yaml",
            r#"apiVersion: metrics.k8s.io/v1beta1
kind: PodMetrics
metadata: {name: web-0, namespace: default}
timestamp: "2026-11-23T00:00:00Z"
window: 30s
containers: [{name: web, usage: {cpu: 250m, memory: 64Mi}}]
"#,
        );
        let mut child = Command::new(env!("CARGO_BIN_EXE_rekon"))
            .env_remove("KUBEBUILDER_ASSETS") // the in-memory server
            .args([
                "dev",
                "--api-only",
                "--api-resources",
                &resources,
                "-f",
                &metrics,
            ])
            .arg("--write-kubeconfig")
            .arg(&kubeconfig)
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while !kubeconfig.exists() {
            assert!(Instant::now() < deadline, "no kubeconfig written");
            std::thread::sleep(Duration::from_millis(20));
        }
        let cache = dir.path().join("kubectl-cache");
        let kubectl = |args: &[&str]| {
            let mut all = vec!["--cache-dir", cache.to_str().unwrap()];
            all.extend_from_slice(args);
            let out = kubectl(&kubeconfig, &all);
            assert!(out.status.success(), "kubectl {args:?}: {}", stderr(&out));
            stdout(&out)
        };
        // kubectl top finds the metrics API through discovery and reads it.
        let top = kubectl(&["top", "pod", "-n", "default"]);
        let row: Vec<&str> = top
            .lines()
            .nth(1)
            .unwrap_or_default()
            .split_whitespace()
            .collect();
        assert_eq!(row, ["web-0", "250m", "64Mi"], "{top}");
        let cronjob = write(
            dir.path(),
            "cronjob.yaml",
            r#"apiVersion: batch/v1beta1
kind: CronJob
metadata: {name: nightly, namespace: default}
spec:
  schedule: "0 3 * * *"
  jobTemplate: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}
"#,
        );
        kubectl(&["create", "-f", &cronjob]);
        let got = kubectl(&[
            "get",
            "cronjobs.v1beta1.batch",
            "nightly",
            "-o",
            "jsonpath={.apiVersion} {.spec.schedule}",
        ]);
        assert_eq!(got, "batch/v1beta1 0 3 * * *");
        // batch/v1 stays the preferred version.
        let batch: Value =
            serde_json::from_str(&kubectl(&["get", "--raw", "/apis/batch"])).unwrap();
        assert_eq!(batch["preferredVersion"]["version"], "v1", "{batch}");
        let versions = kubectl(&["api-versions"]);
        assert!(versions.lines().any(|l| l == "batch/v1beta1"), "{versions}");
        assert!(
            versions.lines().any(|l| l == "metrics.k8s.io/v1beta1"),
            "{versions}"
        );
        // The metrics API is read-only, as its document says.
        let out = dev_kubectl(&kubeconfig, &cache, &["delete", "podmetrics", "web-0"]);
        assert!(
            !out.status.success() && stderr(&out).contains("MethodNotAllowed"),
            "{}",
            stderr(&out)
        );
        sigterm_and_wait(&mut child);
    }

    fn dev_kubectl(kubeconfig: &Path, cache: &Path, args: &[&str]) -> Output {
        let mut all = vec!["--cache-dir", cache.to_str().unwrap()];
        all.extend_from_slice(args);
        kubectl(kubeconfig, &all)
    }

    /// Drives one resource through kubectl; `Err` says what went wrong.
    fn drive(
        kubectl: &dyn Fn(&[&str]) -> Output,
        res: &rekon_store::ResourceInfo,
        manifests: &[Value],
        dir: &Path,
    ) -> Result<(), String> {
        // `horizontalpodautoscalers.v1.autoscaling`: this very version (a
        // core resource by its plural alone: kubectl prefers the core group).
        let qualified = if res.group.is_empty() {
            res.plural.clone()
        } else {
            format!("{}.{}.{}", res.plural, res.version, res.group)
        };
        let manifest = manifests.iter().find(|m| {
            m["apiVersion"] == res.api_version().as_str() && m["kind"] == res.kind.as_str()
        });
        let name = manifest
            .and_then(|m| m["metadata"]["name"].as_str())
            .map_or_else(
                || format!("rekon-{}-{}", res.plural, res.version),
                str::to_string,
            );
        let label = format!("rekon-test={}", res.plural);
        let ns: &[&str] = if res.namespaced {
            &["-n", "default"]
        } else {
            &[]
        };
        let run = |args: &[&str]| -> Output {
            let mut all: Vec<&str> = args.to_vec();
            all.extend_from_slice(ns);
            kubectl(&all)
        };
        let ok = |what: &str, out: Output| -> Result<String, String> {
            if out.status.success() {
                Ok(stdout(&out))
            } else {
                Err(format!("{what}: {}", stderr(&out).trim()))
            }
        };
        if !res.serves("create") {
            // Read-only (ComponentStatus): listed, and writes refused.
            ok("list", run(&["get", &qualified, "-o", "name"]))?;
            let refused = run(&["delete", &qualified, "etcd-0"]);
            let says = stderr(&refused);
            return if !refused.status.success() && says.contains("MethodNotAllowed") {
                Ok(())
            } else {
                Err(format!("a delete was not refused with 405: {says}"))
            };
        }
        let mut object = manifest.cloned().ok_or("no manifest")?;
        object["metadata"] = json!({"name": name, "labels": {"rekon-test": res.plural}});
        let file = dir.join(format!("{name}.yaml"));
        std::fs::write(&file, serde_yaml::to_string(&object).unwrap()).unwrap();
        let created = ok(
            "create",
            run(&["create", "-f", file.to_str().unwrap(), "-o", "json"]),
        )?;
        if !res.is_stored() {
            // A review: answered, with a status, and not kept.
            let answer: Value = serde_json::from_str(&created).map_err(|e| e.to_string())?;
            return match (res.kind.as_str(), answer.get("status")) {
                ("Binding", _) | (_, Some(_)) => Ok(()),
                _ => Err(format!("no status in the answer: {answer}")),
            };
        }
        let got = ok(
            "get",
            run(&["get", &qualified, &name, "-o", "jsonpath={.metadata.name}"]),
        )?;
        if got != name {
            return Err(format!("get gave {got:?}"));
        }
        let listed = ok(
            "list",
            run(&["get", &qualified, "-l", &label, "-o", "name"]),
        )?;
        if !listed.contains(&name) {
            return Err(format!("not listed by its label: {listed:?}"));
        }
        ok(
            "patch",
            run(&[
                "patch",
                &qualified,
                &name,
                "--type=merge",
                "-p",
                r#"{"metadata":{"annotations":{"patched":"yes"}}}"#,
            ]),
        )?;
        let patched = ok(
            "get after patch",
            run(&[
                "get",
                &qualified,
                &name,
                "-o",
                "jsonpath={.metadata.annotations.patched}",
            ]),
        )?;
        if patched != "yes" {
            return Err(format!("the patch did not stick: {patched:?}"));
        }
        ok("table", run(&["get", &qualified, &name])).and_then(|table| {
            // NAME and a time column: AGE, or CREATED AT for the kinds the
            // real server prints so (CRDs, Roles, LimitRanges); Events
            // start with LAST SEEN.
            let timed = table.contains("AGE") || table.contains("CREATED AT");
            if table.starts_with("NAME") && timed || table.starts_with("LAST SEEN") {
                Ok(())
            } else {
                Err(format!("the table has no NAME and time columns: {table}"))
            }
        })?;
        ok(
            "delete",
            run(&["delete", &qualified, &name, "--wait=true", "--timeout=20s"]),
        )?;
        let gone = run(&["get", &qualified, &name]);
        if gone.status.success() || !stderr(&gone).contains("NotFound") {
            return Err(format!("still there after delete: {}", stderr(&gone)));
        }
        Ok(())
    }

    #[test]
    fn api_only_serves_kubectl_until_sigterm() {
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = dir.path().join("kubeconfig");
        let mut child = Command::new(env!("CARGO_BIN_EXE_rekon"))
            .env_remove("KUBEBUILDER_ASSETS") // the in-memory server
            .args(["dev", "--api-only", "--write-kubeconfig"])
            .arg(&kubeconfig)
            .arg("-f")
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../guests/app/manifests/crd.yaml"
            ))
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while !kubeconfig.exists() {
            assert!(Instant::now() < deadline, "no kubeconfig written");
            std::thread::sleep(Duration::from_millis(20));
        }
        let kubectl = |args: &[&str]| kubectl(&kubeconfig, args);
        let namespaces = kubectl(&["get", "namespaces", "-o", "name"]);
        assert!(namespaces.status.success(), "{}", stderr(&namespaces));
        assert!(stdout(&namespaces).contains("namespace/default"));
        // The CRD given with -f is served: its kind can be applied and listed.
        let example = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../guests/app/manifests/example.yaml"
        );
        let applied = kubectl(&["apply", "-f", example]);
        assert!(applied.status.success(), "{}", stderr(&applied));
        let apps = kubectl(&["get", "apps.demo.rekon.dev", "-o", "name"]);
        assert_eq!(stdout(&apps).trim(), "app.demo.rekon.dev/web");

        sigterm_and_wait(&mut child);
    }
}

mod logs {
    use super::*;

    #[test]
    fn json_log_format_writes_one_object_per_line_with_guest_fields() {
        let dir = tempfile::tempdir().unwrap();
        let object = write(
            dir.path(),
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: quiet, namespace: default}\n",
        );
        let output = Command::new(env!("CARGO_BIN_EXE_rekon"))
            .args([
                "--log-format",
                "json",
                "reconcile",
                rekon_test_artifacts::MISBEHAVE,
            ])
            .args(["--object", &object])
            .env("REKON_CACHE_DIR", dir.path())
            .env("RUST_LOG", "info")
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        let lines: Vec<Value> = stderr(&output)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
            .collect();
        let guest = lines
            .iter()
            .find(|l| l["target"] == "rekon::guest")
            .expect("the guest's log record");
        assert_eq!(guest["fields"]["module"], "misbehave");
        assert_eq!(guest["level"], "INFO");
    }
}
