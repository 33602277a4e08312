use super::*;

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
    assert!(
        out.contains("\"behaved-by\":\"misbehave-build-A\"")
            && out.contains("\"behaved-by\":\"misbehave-build-B\""),
        "the differing patch is shown: {out}"
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

/// A shadow that writes something else: every request the serving version
/// reconciles is reconciled by the shadow too; its writes are dry runs
/// (nothing it wrote is stored), the difference is shown per object as a
/// unified diff, counted, and announced by one Event per object.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shadow_that_differs_is_shown_and_writes_nothing() {
    let mut env = Env::new().await;
    env.apply(namespace("shop"));
    env.apply(configmap("shop", "one", json!({}), json!({})));
    let shadow = support::misbehave_with(misbehave::BUILD_MARK, "misbehave-build-B");
    let port = run_with_shadow(&mut env, shadow);
    env.wait("the ConfigMap reconciled", || {
        env.get("", "v1", "ConfigMap", Some("shop"), "one")
            .filter(|c| c["data"]["reconciled"] == "true")
    })
    .await;
    let status = env
        .wait("the shadow's difference", || {
            let (out, code) = rollout_status(port, "misbehave");
            (code == Some(1) && out.contains("differ  shop/one")).then_some(out)
        })
        .await;
    assert!(
        status.contains("shadow 0.1.0") && status.contains("misbehave-shadow.wasm"),
        "{status}"
    );
    assert!(
        status.contains("--- serving 0.1.0") && status.contains("+++ shadow 0.1.0"),
        "{status}"
    );
    assert!(
        status
            .lines()
            .any(|l| l.trim_start().starts_with('+') && l.contains("misbehave-build-B")),
        "the shadow's write is in the diff: {status}"
    );
    env.settled().await;
    // Dry runs: nothing the shadow wrote is stored.
    let stored = env.get("", "v1", "ConfigMap", Some("shop"), "one").unwrap();
    assert_eq!(stored["data"]["behaved-by"], "misbehave-build-A");
    // Counted, and announced once on the object.
    assert_counted(port, "rekon_shadow_differences_total");
    let events = env.resource("events.k8s.io", "v1", "Event");
    let announced = env
        .wait("the ShadowDiffers Event", || {
            let all = env
                .store()
                .list(&events, &Default::default())
                .unwrap()
                .items;
            let about_one: Vec<Value> = all
                .into_iter()
                .filter(|e| e["reason"] == "ShadowDiffers" && e["regarding"]["name"] == "one")
                .collect();
            (!about_one.is_empty()).then_some(about_one)
        })
        .await;
    assert_eq!(announced.len(), 1, "{announced:?}");
}

/// A shadow of the same logic agrees on every object; one that traps where
/// the serving version does not is an error, and the serving version goes
/// on unharmed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agreeing_shadow_and_a_trapping_one() {
    use misbehave::MODE_KEY;
    let mut env = Env::new().await;
    env.apply(namespace("shop"));
    env.apply(configmap("shop", "calm", json!({}), json!({})));
    // The shadow reads its mode from another annotation: `troubled` traps
    // in the shadow only.
    let shadow_key = MODE_KEY.replace("/mode", "/modx");
    env.apply(configmap(
        "shop",
        "troubled",
        json!({ shadow_key.clone(): "trap" }),
        json!({}),
    ));
    let port = run_with_shadow(&mut env, support::misbehave_with(MODE_KEY, &shadow_key));
    for name in ["calm", "troubled"] {
        env.wait("the serving version reconciled", || {
            env.get("", "v1", "ConfigMap", Some("shop"), name)
                .filter(|c| c["data"]["reconciled"] == "true")
        })
        .await;
    }
    let status = env
        .wait("both objects shadowed", || {
            let (out, code) = rollout_status(port, "misbehave");
            (out.contains("shop/calm") && out.contains("shop/troubled")).then_some((out, code))
        })
        .await;
    let (out, code) = status;
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("agree   shop/calm"), "{out}");
    assert!(out.contains("error   shop/troubled"), "{out}");
    assert_counted(port, "rekon_shadow_errors_total");
}

/// An API server that refuses the shadow's dry runs: that object's
/// comparison is an error carrying the server's answer, the serving
/// version's real writes go through, and the next dry run, answered,
/// compares again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_refusing_dry_runs_is_a_shadow_error_and_the_serving_version_goes_on() {
    let mut env = Env::new().await;
    env.apply(namespace("shop"));
    // Every dry-run patch of a ConfigMap is refused, for a while.
    env.server.faults().fail(rekon_apiserver::FailRule {
        verb: Some("patch".into()),
        resource: Some("configmaps".into()),
        code: 400,
        count: 1000,
        retry_after_seconds: None,
        dry_run: Some(true),
    });
    env.apply(configmap("shop", "one", json!({}), json!({})));
    let shadow = support::misbehave_with(misbehave::BUILD_MARK, "misbehave-build-B");
    let port = run_with_shadow(&mut env, shadow);
    let (status, code) = env
        .wait("the refused dry run", || {
            let (out, code) = rollout_status(port, "misbehave");
            out.contains("error   shop/one").then_some((out, code))
        })
        .await;
    assert_eq!(code, Some(1), "{status}");
    assert!(
        status.contains("400") && status.contains("bad request"),
        "{status}"
    );
    // The serving version's real patch was not refused.
    let stored = env.get("", "v1", "ConfigMap", Some("shop"), "one").unwrap();
    assert_eq!(
        stored["data"]["behaved-by"], "misbehave-build-A",
        "{stored}"
    );
    // Dry runs answered again: the next comparison is a difference, no error.
    env.server.faults().clear();
    env.apply(configmap(
        "shop",
        "one",
        json!({"touched": "yes"}),
        json!({}),
    ));
    let status = env
        .wait("a comparison after the refusals", || {
            let (out, _) = rollout_status(port, "misbehave");
            out.contains("differ  shop/one").then_some(out)
        })
        .await;
    assert!(status.contains("misbehave-build-B"), "{status}");
}

/// Promotion while objects keep arriving: `rekon rollout promote` makes the
/// shadow serve in one step; every object, those created during the swap
/// included, ends up reconciled by it, none is written by the old version
/// once the new one has written it (no reconcile of the old version runs
/// after the swap), and the shadow is gone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_promoted_shadow_serves_and_no_object_is_lost() {
    let mut env = Env::new().await;
    env.apply(namespace("shop"));
    let (_watch, writes) = config_map_writes(&env);
    for i in 0..5 {
        env.apply(configmap("shop", &format!("c{i}"), json!({}), json!({})));
    }
    let shadow = support::misbehave_with(misbehave::BUILD_MARK, "misbehave-build-B");
    let port = run_with_shadow(&mut env, shadow);
    let behaved = |env: &Env, name: &str, mark: &str| {
        env.get("", "v1", "ConfigMap", Some("shop"), name)
            .is_some_and(|c| c["data"]["behaved-by"] == mark)
    };
    env.wait("the serving version's reconciles", || {
        (0..5)
            .all(|i| behaved(&env, &format!("c{i}"), "misbehave-build-A"))
            .then_some(())
    })
    .await;
    env.wait("the shadow's comparisons", || {
        rollout_status(port, "misbehave")
            .0
            .contains("5 objects shadowed")
            .then_some(())
    })
    .await;
    // Objects arrive while the shadow is promoted.
    let arriving = configmaps_arriving(&env, "c", 5..25);
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let addr = format!("127.0.0.1:{port}");
    let (out, code) =
        rekon(&["rollout", "promote", "misbehave", "--addr", &addr].map(std::ffi::OsStr::new));
    assert_eq!(code, Some(0), "{out}");
    arriving.await.unwrap();
    env.wait_long("every object reconciled by the promoted version", || {
        (0..25)
            .all(|i| behaved(&env, &format!("c{i}"), "misbehave-build-B"))
            .then_some(())
    })
    .await;
    let (status, _) = rollout_status(port, "misbehave");
    assert!(status.contains("no shadow"), "{status}");
    // Each object's marks as written: A then B, or B alone; never A again
    // after B.
    let mut marks: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for event in writes.try_iter() {
        let object = &event.object;
        let name = object["metadata"]["name"].as_str().unwrap().to_string();
        let history = marks.entry(name).or_default();
        if let Some(mark) = object["data"]["behaved-by"].as_str()
            && history.last().map(String::as_str) != Some(mark)
        {
            history.push(mark.to_string());
        }
    }
    assert_eq!(marks.len(), 25, "{marks:?}");
    for (name, history) in &marks {
        assert!(
            history == &["misbehave-build-A", "misbehave-build-B"]
                || history == &["misbehave-build-B"],
            "{name} was written {history:?}"
        );
    }
    // A second promotion has nothing to promote.
    let (out, code) =
        rekon(&["rollout", "promote", "misbehave", "--addr", &addr].map(std::ffi::OsStr::new));
    assert_ne!(code, Some(0), "{out}");
    assert!(out.contains("has no shadow"), "{out}");
}

/// `rekon rollout abort` drops the shadow while objects keep arriving: the
/// serving version goes on alone without a restart (each new object
/// reconciled for its creation once), and nothing the shadow would have
/// written is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_aborted_shadow_is_gone_and_the_serving_version_goes_on() {
    let mut env = Env::new().await;
    env.apply(namespace("shop"));
    env.apply(configmap("shop", "one", json!({}), json!({})));
    let (_watch, writes) = config_map_writes(&env);
    let shadow = support::misbehave_with(misbehave::BUILD_MARK, "misbehave-build-B");
    let port = run_with_shadow(&mut env, shadow);
    env.wait("the shadow's comparison", || {
        rollout_status(port, "misbehave")
            .0
            .contains("differ  shop/one")
            .then_some(())
    })
    .await;
    // Objects arrive while the shadow is dropped.
    let mark = env.log().len();
    let arriving = configmaps_arriving(&env, "a", 0..20);
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    let addr = format!("127.0.0.1:{port}");
    let (out, code) =
        rekon(&["rollout", "abort", "misbehave", "--addr", &addr].map(std::ffi::OsStr::new));
    assert_eq!(code, Some(0), "{out}");
    arriving.await.unwrap();
    env.wait("the shadow gone", || {
        rollout_status(port, "misbehave")
            .0
            .contains("no shadow")
            .then_some(())
    })
    .await;
    let names: Vec<String> = (0..20).map(|i| format!("a{i}")).collect();
    for name in names.iter().map(String::as_str).chain(["one"]) {
        env.wait("the serving version's reconcile", || {
            env.get("", "v1", "ConfigMap", Some("shop"), name)
                .filter(|c| c["data"]["behaved-by"] == "misbehave-build-A")
        })
        .await;
    }
    env.settled().await;
    // The serving version never stopped: each arriving object was
    // reconciled for its creation once, and nothing was reloaded.
    for name in &names {
        let reasons = env.reconcile_reasons(mark, name);
        assert_eq!(
            reasons.iter().filter(|r| *r == "added").count(),
            1,
            "{name}: {reasons:?}"
        );
        assert!(
            !reasons.iter().any(|r| r == "module-reloaded"),
            "{name}: {reasons:?}"
        );
    }
    // Nothing the shadow would have written was ever stored.
    let marks: Vec<String> = writes
        .try_iter()
        .filter_map(|e| e.object["data"]["behaved-by"].as_str().map(str::to_string))
        .collect();
    assert!(!marks.is_empty());
    assert!(marks.iter().all(|m| m == "misbehave-build-A"), "{marks:?}");
}

/// A canary: the shadow serves a share of the objects live (the same ones
/// every time, by a stable hash of their namespace and name), the serving
/// version the others.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_canary_share_is_served_live_by_the_new_version() {
    let mut env = Env::new().await;
    env.apply(namespace("shop"));
    let names: Vec<String> = (0..20).map(|i| format!("c{i}")).collect();
    for name in &names {
        env.apply(configmap("shop", name, json!({}), json!({})));
    }
    let shadow = support::misbehave_with(misbehave::BUILD_MARK, "misbehave-build-B");
    let port = run_with_shadow_settings(&mut env, shadow, "    canary: 50\n");
    let marks = |env: &Env| -> Option<Vec<String>> {
        names
            .iter()
            .map(|name| {
                let c = env.get("", "v1", "ConfigMap", Some("shop"), name)?;
                c["data"]["behaved-by"].as_str().map(str::to_string)
            })
            .collect()
    };
    let first = env.wait("every object reconciled", || marks(&env)).await;
    let by_b = first.iter().filter(|m| *m == "misbehave-build-B").count();
    assert!(
        by_b > 0 && by_b < names.len(),
        "both versions serve a share: {first:?}"
    );
    env.settled().await;
    // The same objects each time: relabelled, each is reconciled again by
    // the version that served it.
    for name in &names {
        let mut object = configmap("shop", name, json!({}), json!({}));
        object["metadata"]["labels"] = json!({"touched": "yes"});
        env.apply(object);
    }
    env.settled().await;
    assert_eq!(marks(&env).unwrap(), first);
    let (status, _) = rollout_status(port, "misbehave");
    assert!(
        status.contains("canary: the shadow serves 50% of the objects live"),
        "{status}"
    );
    assert_counted(port, "rekon_canary_reconciles_total");
}

/// A policy decides without a command: a shadow that agrees on three
/// reconciles in a row is promoted; one that differs, with
/// `abortOnDifference`, is dropped and the serving version goes on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rollout_policy_promotes_an_agreeing_shadow_and_aborts_a_differing_one() {
    let mut env = Env::new().await;
    env.apply(namespace("shop"));
    for i in 0..4 {
        env.apply(configmap("shop", &format!("c{i}"), json!({}), json!({})));
    }
    // The same logic, another build (the mark is never written: every
    // object is behaved already when the shadow sees it).
    let same = support::misbehave_with("misbehave: behaved", "misbehave: behavex");
    let port = run_with_shadow_settings(&mut env, same, "    policy:\n      promoteAfter: 3\n");
    env.wait("the policy's promotion", || {
        env.log().contains("shadow promoted").then_some(())
    })
    .await;
    let (status, _) = rollout_status(port, "misbehave");
    assert!(status.contains("no shadow"), "{status}");
    assert!(
        env.log().contains("command=Promote"),
        "the policy promoted it, not a command: {}",
        env.log()
    );

    let mut env = Env::new().await;
    env.apply(namespace("shop"));
    env.apply(configmap("shop", "one", json!({}), json!({})));
    let other = support::misbehave_with(misbehave::BUILD_MARK, "misbehave-build-B");
    let port = run_with_shadow_settings(
        &mut env,
        other,
        "    policy:\n      abortOnDifference: true\n",
    );
    env.wait("the policy's abort", || {
        let decided = env.log().contains("command=Abort");
        let (out, _) = rollout_status(port, "misbehave");
        (decided && out.contains("serving 0.1.0") && out.contains("no shadow")).then_some(())
    })
    .await;
    env.apply(configmap("shop", "two", json!({}), json!({})));
    env.wait("the serving version goes on", || {
        env.get("", "v1", "ConfigMap", Some("shop"), "two")
            .filter(|c| c["data"]["behaved-by"] == "misbehave-build-A")
    })
    .await;
    assert!(!env.log().contains("shadow promoted"));
}
