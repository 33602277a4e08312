//! Recording live reconciles and replaying them against other versions.

use serde_json::{Value, json};

use crate::support::{self, Env, configmap, namespace};

/// What the `rekon` command printed with `args`, and how it exited.
fn rekon(args: &[&std::ffi::OsStr]) -> (String, Option<i32>) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_rekon"))
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (text, output.status.code())
}

/// What `rekon replay` printed, and how it exited.
fn replay(traces: &std::path::Path, module: &std::path::Path) -> (String, Option<i32>) {
    rekon(&[
        "replay".as_ref(),
        traces.as_os_str(),
        "--module".as_ref(),
        module.as_os_str(),
    ])
}

/// A module's live reconciles are recorded (to a file, and the last ones
/// on the metrics port); replayed offline against the same build they
/// agree, against a build that writes something else the difference is
/// shown, and a recording of another module is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_reconciles_are_recorded_and_replayed_against_other_versions() {
    let mut env = Env::new().await;
    env.apply(namespace("shop"));
    env.apply(configmap("shop", "one", json!({}), json!({})));
    let traces = env.dir.path().join("misbehave.jsonl");
    let config = env.dir.path().join("rekon.yaml");
    std::fs::write(
        &config,
        format!(
            "modules:\n  misbehave:\n    record:\n      last: 5\n      file: {}\n",
            traces.display()
        ),
    )
    .unwrap();
    let port = support::free_port();
    let metrics_addr = format!("127.0.0.1:{port}");
    env.run(
        &[rekon_test_artifacts::MISBEHAVE],
        &[
            "--config",
            config.to_str().unwrap(),
            "--metrics-addr",
            &metrics_addr,
        ],
    );
    env.wait("the ConfigMap reconciled", || {
        env.get("", "v1", "ConfigMap", Some("shop"), "one")
            .filter(|c| c["data"]["reconciled"] == "true")
    })
    .await;
    env.apply(configmap("shop", "two", json!({}), json!({})));
    env.wait("the second ConfigMap reconciled", || {
        env.get("", "v1", "ConfigMap", Some("shop"), "two")
            .filter(|c| c["data"]["reconciled"] == "true")
    })
    .await;
    env.settled().await;

    // The file has each reconcile: what was asked, every call, the result.
    let text = std::fs::read_to_string(&traces).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let patched = lines.iter().any(|l| {
        l["call"] == "patch"
            && l["args"]["name"] == "one"
            && l["args"]["patch"]["data"]["reconciled"] == "true"
    });
    assert!(patched, "the patch of `one` is recorded: {text}");
    let requests = lines
        .iter()
        .filter(|l| l["reconcile"]["module"] == "misbehave")
        .count();
    let results = lines
        .iter()
        .filter(|l| l.get("call").is_none() && l.get("result").is_some())
        .count();
    assert_eq!(requests, results, "each reconcile ends with its result");
    // The metrics port serves the latest five.
    let served = support::http_get(port, "/recordings/misbehave").unwrap();
    assert!(served.starts_with("HTTP/1.0 200") || served.starts_with("HTTP/1.1 200"));
    let served_requests = served.matches("{\"reconcile\":").count();
    assert_eq!(served_requests, requests.min(5), "{served}");
    let missing = support::http_get(port, "/recordings/other").unwrap();
    assert!(missing.contains("404") && missing.contains("not recorded"));

    // The same build does what was recorded.
    let (out, code) = replay(
        &traces,
        std::path::Path::new(rekon_test_artifacts::MISBEHAVE),
    );
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains(&format!("{requests}/{requests} recorded reconciles agree")),
        "{out}"
    );
    // A build that stamps another mark writes something else: shown.
    let other = env.dir.path().join("misbehave-b.wasm");
    std::fs::write(
        &other,
        support::misbehave_with(misbehave::BUILD_MARK, "misbehave-build-B"),
    )
    .unwrap();
    let (out, code) = replay(&traces, &other);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("differ  shop/one"), "{out}");
    // As a unified diff of the call's arguments, the differing line alone.
    assert!(out.contains(": patch with other arguments"), "{out}");
    let minus = out.lines().any(|l| {
        l.trim_start().starts_with('-') && l.contains("\"behaved-by\": \"misbehave-build-A\"")
    });
    let plus = out.lines().any(|l| {
        l.trim_start().starts_with('+') && l.contains("\"behaved-by\": \"misbehave-build-B\"")
    });
    assert!(
        minus && plus,
        "the differing line is shown as a diff: {out}"
    );
    // A recording made with another contract replays, saying so.
    let older = env.dir.path().join("older.jsonl");
    let text = std::fs::read_to_string(&traces).unwrap();
    std::fs::write(
        &older,
        text.replace("\"contract\":\"0.4.0\"", "\"contract\":\"0.3.0\""),
    )
    .unwrap();
    let (out, code) = replay(
        &older,
        std::path::Path::new(rekon_test_artifacts::MISBEHAVE),
    );
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains(&format!(
            "note: {requests} of the reconciles were recorded with contract 0.3.0"
        )) && out.contains("is built for 0.4.0"),
        "{out}"
    );
    // A recording of another module is refused.
    let (out, code) = replay(&traces, std::path::Path::new(rekon_test_artifacts::APP));
    assert_ne!(code, Some(0), "{out}");
    assert!(
        out.contains("a reconcile of module \"misbehave\", not of \"app\""),
        "{out}"
    );
}

#[path = "record/shadow.rs"]
mod shadow;

#[path = "record/rollout.rs"]
mod rollout;

#[path = "record/durable.rs"]
mod durable;

/// Every write of the ConfigMaps in `shop` from now on, in order.
fn config_map_writes(
    env: &Env,
) -> (
    rekon_apiserver::WatchId,
    std::sync::mpsc::Receiver<rekon_apiserver::WatchEvent>,
) {
    env.store()
        .watch_channel(
            &env.resource("", "v1", "ConfigMap"),
            &rekon_apiserver::ListOptions {
                namespace: Some("shop".into()),
                ..Default::default()
            },
            None,
        )
        .unwrap()
}

/// The `behaved-by` marks written so far, in order, by the writes `writes`
/// received ([`config_map_writes`]), to the test's objects (the
/// namespace's own `kube-root-ca.crt` is reconciled too, on its time).
fn marks_written(writes: &std::sync::mpsc::Receiver<rekon_apiserver::WatchEvent>) -> Vec<String> {
    writes
        .try_iter()
        .filter(|e| {
            e.object["metadata"]["name"]
                .as_str()
                .is_some_and(|n| n != "kube-root-ca.crt")
        })
        .filter_map(|e| e.object["data"]["behaved-by"].as_str().map(str::to_string))
        .collect()
}

/// ConfigMaps `{prefix}{i}` in `shop` for each `i` of `numbers`, one every
/// 20 ms, from a task of their own.
fn configmaps_arriving(
    env: &Env,
    prefix: &'static str,
    numbers: std::ops::Range<usize>,
) -> tokio::task::JoinHandle<()> {
    let store = env.store();
    tokio::spawn(async move {
        for i in numbers {
            let object = configmap("shop", &format!("{prefix}{i}"), json!({}), json!({}));
            store.apply_object(object).unwrap();
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
}

/// Asserts that the host on metrics port `port` serves the counter `name`
/// of module misbehave.
fn assert_counted(port: u16, name: &str) {
    let metrics = support::http_get(port, "/metrics").unwrap();
    let series = format!("{name}{{module=\"misbehave\"}}");
    assert!(
        metrics.lines().any(|l| l.starts_with(&series)),
        "{series} is not served:\n{metrics}"
    );
}

/// What `rekon rollout status` printed, and how it exited.
fn rollout_status(port: u16, module: &str) -> (String, Option<i32>) {
    let addr = format!("127.0.0.1:{port}");
    let args = ["rollout", "status", module, "--addr", &addr];
    rekon(&args.map(std::ffi::OsStr::new))
}

/// Runs misbehave (build A) with `shadow` (bytes) as its shadow, named in
/// the operator configuration; returns the metrics port.
fn run_with_shadow(env: &mut Env, shadow: Vec<u8>) -> u16 {
    run_with_shadow_settings(env, shadow, "")
}

/// [`run_with_shadow`] with more settings of the module (YAML lines).
fn run_with_shadow_settings(env: &mut Env, shadow: Vec<u8>, settings: &str) -> u16 {
    let path = env.dir.path().join("misbehave-shadow.wasm");
    std::fs::write(&path, shadow).unwrap();
    let config = env.dir.path().join("rekon.yaml");
    std::fs::write(
        &config,
        format!(
            "modules:\n  misbehave:\n    shadow: {}\n{settings}",
            path.display()
        ),
    )
    .unwrap();
    let port = support::free_port();
    let metrics_addr = format!("127.0.0.1:{port}");
    env.run(
        &[rekon_test_artifacts::MISBEHAVE, path.to_str().unwrap()],
        &[
            "--config",
            config.to_str().unwrap(),
            "--metrics-addr",
            &metrics_addr,
        ],
    );
    port
}
