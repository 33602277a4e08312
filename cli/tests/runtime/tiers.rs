//! Tiered loading: a cold load serves on baseline code (Winch) while the
//! optimised build (Cranelift) compiles in the background.

use std::sync::Arc;
use std::time::Duration;

use rekon_host::contract::Request;
use rekon_host::runtime::{CompileSource, DispatchOptions, Tier};
use rekon_host::{Engine, EngineConfig, Module};
use rekon_offline::MemoryCluster;
use serde_json::json;

use crate::support::cluster_with;

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
