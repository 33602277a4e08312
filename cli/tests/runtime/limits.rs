//! The sandbox limits against the `misbehave` guest: every failure mode a
//! typed failure after which the module keeps working, and calls outside
//! the manifest denied.

use std::sync::Arc;
use std::time::Duration;

use rekon_host::runtime::{DispatchOptions, ReconcileError, Tier};
use rekon_host::{Engine, EngineConfig, Module};
use rekon_offline::MemoryCluster;
use serde_json::json;

use crate::support::cluster_with;

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
