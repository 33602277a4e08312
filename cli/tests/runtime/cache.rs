//! The compile cache: code compiled once and reused across restarts,
//! invalidated by engine changes, the description kept beside it, and a
//! corrupt entry recompiled.

use rekon_host::runtime::CompileSource;
use rekon_host::{Engine, EngineConfig, Module};

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
