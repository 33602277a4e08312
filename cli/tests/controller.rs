//! The controller machinery end to end: the real `rekon run` binary against
//! the in-memory API server over HTTP, with the example guests.

// Tests may unwrap (tokio tests too): a panic is a failed test with its message.
#![allow(clippy::unwrap_used)]

mod support;

use std::time::Duration;

use rekon_apiserver::RunningServer;
use serde_json::{Value, json};
use support::{Env, app, path};

mod app {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn app_lifecycle_owned_objects_status_repair_and_finalizer() {
        lifecycle(rekon_test_artifacts::APP).await;
    }

    /// The same App operator built for `rekon:reconciler@0.1.0` (kept in
    /// the test artifacts, never rebuilt): a newer host runs it exactly as
    /// it ran before.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_component_built_for_contract_0_1_0_behaves_as_before() {
        lifecycle(rekon_test_artifacts::APP_V0_1).await;
    }

    /// Built for `rekon:reconciler@0.2.0` (kept, as the 0.1.0 build).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_component_built_for_contract_0_2_0_behaves_as_before() {
        lifecycle(rekon_test_artifacts::APP_V0_2).await;
    }

    /// Built for `rekon:reconciler@0.3.0` (kept, as the 0.1.0 build).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_component_built_for_contract_0_3_0_behaves_as_before() {
        lifecycle(rekon_test_artifacts::APP_V0_3).await;
    }

    async fn lifecycle(module: &str) {
        let mut env = Env::new().await;
        env.apply_file(&path("guests/app/manifests/crd.yaml"));
        env.run(&[module], &[]);
        env.apply(app("web", 2));

        let deployment = env
            .wait("the Deployment", || {
                env.get("apps", "v1", "Deployment", Some("default"), "web")
            })
            .await;
        assert_eq!(deployment["spec"]["replicas"], 2);
        let owner = &deployment["metadata"]["ownerReferences"][0];
        assert_eq!(
            (owner["kind"].as_str(), owner["name"].as_str()),
            (Some("App"), Some("web"))
        );
        assert_eq!(owner["controller"], true);
        env.wait("the Service", || {
            env.get("", "v1", "Service", Some("default"), "web")
        })
        .await;
        let status = env
            .wait("the App status", || {
                env.get("demo.rekon.dev", "v1", "App", Some("default"), "web")
                    .filter(|a| a["status"]["observedGeneration"] == 1)
            })
            .await;
        assert!(
            status["status"]["conditions"]
                .as_array()
                .is_some_and(|c| c.iter().any(|c| c["type"] == "Ready")),
            "{status}"
        );

        // Editing the spec updates the Deployment and observedGeneration.
        env.apply(app("web", 5));
        env.wait("replicas 5", || {
            env.get("apps", "v1", "Deployment", Some("default"), "web")
                .filter(|d| d["spec"]["replicas"] == 5)
        })
        .await;
        env.wait("observedGeneration 2", || {
            env.get("demo.rekon.dev", "v1", "App", Some("default"), "web")
                .filter(|a| a["status"]["observedGeneration"] == 2)
        })
        .await;

        // A Deployment deleted by hand is repaired.
        let deployments = env.resource("apps", "v1", "Deployment");
        let before = deployment["metadata"]["uid"].clone();
        env.store()
            .delete(&deployments, Some("default"), "web", None)
            .unwrap();
        env.wait("the Deployment recreated", || {
            env.get("apps", "v1", "Deployment", Some("default"), "web")
                .filter(|d| d["metadata"]["uid"] != before)
        })
        .await;

        // Deleting the App runs the finalizer's cleanup; everything goes.
        let apps = env.resource("demo.rekon.dev", "v1", "App");
        env.store()
            .delete(&apps, Some("default"), "web", None)
            .unwrap();
        env.wait("the App gone", || {
            env.get("demo.rekon.dev", "v1", "App", Some("default"), "web")
                .is_none()
                .then_some(())
        })
        .await;
        env.wait("owned objects gone", || {
            (env.get("apps", "v1", "Deployment", Some("default"), "web")
                .is_none()
                && env
                    .get("", "v1", "Service", Some("default"), "web")
                    .is_none())
            .then_some(())
        })
        .await;
    }
}

/// Controller options (contract 0.2): predicates, priority, resync, the
/// primary's selector and namespaces, indexes, informers.
#[path = "controller/options.rs"]
mod options;

/// Recording live reconciles and replaying them against other versions.
#[path = "controller/record.rs"]
mod record;

fn configmap(ns: &str, name: &str, annotations: Value, data: Value) -> Value {
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": { "name": name, "namespace": ns, "annotations": annotations },
        "data": data,
    })
}

fn namespace(name: &str) -> Value {
    json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": name } })
}

mod configmap_sync {
    //! One scenario, three languages: the Rust, JavaScript and Python
    //! builds of the ConfigMap sync reconciler must behave the same.
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn rust_follows_creates_updates_and_deletes_including_the_watched_kind() {
        scenario(rekon_test_artifacts::CONFIGMAP_SYNC).await;
    }

    /// Built for `rekon:reconciler@0.1.0`, with its watched kind.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn built_for_contract_0_1_0_follows_the_same_scenario() {
        scenario(rekon_test_artifacts::CONFIGMAP_SYNC_V0_1).await;
    }

    /// Built for `rekon:reconciler@0.2.0`.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn built_for_contract_0_2_0_follows_the_same_scenario() {
        scenario(rekon_test_artifacts::CONFIGMAP_SYNC_V0_2).await;
    }

    /// Built for `rekon:reconciler@0.3.0`.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn built_for_contract_0_3_0_follows_the_same_scenario() {
        scenario(rekon_test_artifacts::CONFIGMAP_SYNC_V0_3).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn javascript_follows_creates_updates_and_deletes_including_the_watched_kind() {
        scenario(rekon_test_artifacts::built(
            rekon_test_artifacts::CONFIGMAP_SYNC_JS,
        ))
        .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn python_follows_creates_updates_and_deletes_including_the_watched_kind() {
        scenario(rekon_test_artifacts::built(
            rekon_test_artifacts::CONFIGMAP_SYNC_PY,
        ))
        .await;
    }

    /// The 12 MB JavaScript component, shipped as `rekon pack` writes it:
    /// several ConfigMaps, loaded by the host's ConfigMap source.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn javascript_shipped_as_chunked_configmaps_behaves_the_same() {
        scenario_shipped(
            rekon_test_artifacts::built(rekon_test_artifacts::CONFIGMAP_SYNC_JS),
            true,
        )
        .await;
    }

    async fn scenario(module: &str) {
        scenario_shipped(module, false).await
    }

    /// Runs `rekon pack` on a module and applies what it wrote.
    fn ship_as_configmaps(env: &Env, module: &str) {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_rekon"))
            .args([
                "pack",
                module,
                "--name",
                "module-under-test",
                "--namespace",
                "rekon-system",
            ])
            .env("REKON_CACHE_DIR", &env.cache)
            .output()
            .expect("running rekon pack");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        env.apply(namespace("rekon-system"));
        let documents: Vec<Value> = serde_yaml::Deserializer::from_slice(&output.stdout)
            .map(|d| <Value as serde::Deserialize>::deserialize(d).expect("YAML"))
            .filter(|v| !v.is_null())
            .collect();
        assert!(documents.len() > 2, "a big module is split into parts");
        for document in documents {
            env.apply(document);
        }
    }

    async fn scenario_shipped(module: &str, as_configmaps: bool) {
        let mut env = Env::new().await;
        // The JS and Python components are 12-20 MB: compile each once per
        // test run into the shared cache, before the host's deadlines start.
        env.use_shared_cache();
        env.warm_cache(module);
        env.apply(namespace("team-a"));
        env.apply(namespace("team-c"));
        env.apply(configmap(
            "team-c",
            "shared",
            json!({}),
            json!({ "mine": "yes" }),
        ));
        if as_configmaps {
            ship_as_configmaps(&env, module);
            env.run(
                &[],
                &[
                    "--watch-configmaps",
                    "--configmap-namespace",
                    "rekon-system",
                ],
            );
        } else {
            env.run(&[module], &[]);
        }
        let mut source = configmap(
            "default",
            "shared",
            json!({ "rekon.dev/sync-to": "team-a,team-b,team-c" }),
            json!({ "region": "eu-west-1" }),
        );
        source["metadata"]["labels"] = json!({ "rekon.dev/sync": "true" });
        env.apply(source.clone());
        let copy = env
            .wait("the copy in team-a", || {
                env.get("", "v1", "ConfigMap", Some("team-a"), "shared")
                    .filter(|c| c["data"]["region"] == "eu-west-1")
            })
            .await;
        assert_eq!(
            copy["metadata"]["labels"],
            json!({
                "rekon.dev/synced-from-namespace": "default",
                "rekon.dev/synced-from-name": "shared",
            })
        );
        let source = env
            .get("", "v1", "ConfigMap", Some("default"), "shared")
            .unwrap();
        assert_eq!(
            source["metadata"]["finalizers"],
            json!(["rekon.dev/sync-cleanup"])
        );
        // The module reads the Namespaces it watches: one informer of whole
        // Namespaces both queues its reconciles and serves its reads, so a
        // reconcile queued by a new Namespace finds it in the cache.
        let log = env.log();
        assert_eq!(
            log.matches("informer started kind=Namespace/v1").count(),
            1,
            "{log}"
        );
        assert!(
            log.contains("informer started kind=Namespace/v1 metadata_only=false"),
            "{log}"
        );

        // A ConfigMap of that name that is not a copy is left alone, with
        // a CopyConflict Warning Event on the source.
        let event = env
            .event("the CopyConflict Event", |e| e["reason"] == "CopyConflict")
            .await;
        assert_eq!(event["type"], "Warning");
        assert_eq!(event["regarding"]["name"], "shared");
        let foreign = env
            .get("", "v1", "ConfigMap", Some("team-c"), "shared")
            .unwrap();
        assert_eq!(foreign["data"], json!({ "mine": "yes" }));

        // team-b appears later: the Namespace watch brings the copy.
        env.apply(namespace("team-b"));
        env.wait("the copy in team-b", || {
            env.get("", "v1", "ConfigMap", Some("team-b"), "shared")
        })
        .await;

        // An update of the source reaches the copies.
        let mut updated = env
            .get("", "v1", "ConfigMap", Some("default"), "shared")
            .unwrap();
        updated["data"] = json!({ "region": "us-east-1" });
        env.apply(updated);
        env.wait("the updated copy", || {
            env.get("", "v1", "ConfigMap", Some("team-b"), "shared")
                .filter(|c| c["data"]["region"] == "us-east-1")
        })
        .await;

        // A namespace no longer listed loses its copy.
        let mut narrowed = env
            .get("", "v1", "ConfigMap", Some("default"), "shared")
            .unwrap();
        narrowed["metadata"]["annotations"]["rekon.dev/sync-to"] = json!("team-b,team-c");
        env.apply(narrowed);
        env.wait("the copy in team-a gone", || {
            env.get("", "v1", "ConfigMap", Some("team-a"), "shared")
                .is_none()
                .then_some(())
        })
        .await;

        // Deleting the source deletes the copies, then the source goes;
        // the foreign ConfigMap stays.
        let configmaps = env.resource("", "v1", "ConfigMap");
        env.store()
            .delete(&configmaps, Some("default"), "shared", None)
            .unwrap();
        env.wait("the copies and the source gone", || {
            (env.get("", "v1", "ConfigMap", Some("team-b"), "shared")
                .is_none()
                && env
                    .get("", "v1", "ConfigMap", Some("default"), "shared")
                    .is_none())
            .then_some(())
        })
        .await;
        assert!(
            env.get("", "v1", "ConfigMap", Some("team-c"), "shared")
                .is_some()
        );
    }
}

mod sharing {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn two_modules_on_one_kind_share_one_watch() {
        let mut env = Env::new().await;
        env.run(
            &[
                rekon_test_artifacts::CONFIGMAP_SYNC,
                rekon_test_artifacts::MISBEHAVE,
            ],
            &[],
        );
        env.apply(configmap(
            "default",
            "plain",
            json!({}),
            json!({ "a": "b" }),
        ));
        // misbehave reconciles every ConfigMap: its write shows both
        // controllers are running.
        env.wait("misbehave's reconcile", || {
            env.get("", "v1", "ConfigMap", Some("default"), "plain")
                .filter(|c| c["data"]["reconciled"] == "true")
        })
        .await;
        // One informer: one list, and one watch (a watch the client had to
        // reopen after a connection error would be a second watch request
        // of the same informer: the lists tell informers apart).
        let requests = env.server.requests();
        let count = |verb: &str| {
            requests
                .iter()
                .filter(|r| r.verb == verb && r.resource == "configmaps")
                .count()
        };
        assert_eq!(
            (count("list"), count("watch").min(1)),
            (1, 1),
            "one list and watch of configmaps for both modules: {requests:#?}"
        );
        let started = env
            .log()
            .matches("informer started kind=ConfigMap/v1")
            .count();
        assert_eq!(started, 1, "{}", env.log());
    }
}

mod failures {
    use super::*;

    fn failed_attempts(log: &str, name: &str) -> usize {
        log.lines()
            .filter(|l| l.contains("reconcile failed") && l.contains(&format!("object={name}")))
            .count()
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn failures_are_retried_with_growing_delays_until_fixed() {
        let mut env = Env::new().await;
        env.run(&[rekon_test_artifacts::MISBEHAVE], &[]);
        env.apply(configmap(
            "default",
            "flaky",
            json!({ "misbehave.rekon.dev/mode": "error" }),
            json!({}),
        ));
        env.wait("a few retries", || {
            (failed_attempts(&env.log(), "flaky") >= 4).then_some(())
        })
        .await;
        tokio::time::sleep(Duration::from_millis(600)).await;
        // 5 ms doubling: within a second, about eight attempts, not hundreds.
        let attempts = failed_attempts(&env.log(), "flaky");
        assert!(attempts < 15, "{attempts} attempts: no backoff");

        // Fix the cause: the next run succeeds.
        let mut fixed = env
            .get("", "v1", "ConfigMap", Some("default"), "flaky")
            .unwrap();
        fixed["metadata"]["annotations"]["misbehave.rekon.dev/mode"] = json!("ok");
        env.apply(fixed);
        env.wait("the fixed object reconciled", || {
            env.get("", "v1", "ConfigMap", Some("default"), "flaky")
                .filter(|c| c["data"]["reconciled"] == "true")
        })
        .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn misbehaving_module_never_stops_the_others() {
        let mut env = Env::new().await;
        env.apply_file(&path("guests/app/manifests/crd.yaml"));
        env.run(
            &[rekon_test_artifacts::MISBEHAVE, rekon_test_artifacts::APP],
            &["--timeout-ms", "200", "--max-memory-mib", "32"],
        );
        for mode in [
            "trap",
            "panic",
            "loop",
            "alloc",
            "recurse",
            "recurse-small",
            "huge-error",
            "huge-log",
        ] {
            env.apply(configmap(
                "default",
                &format!("bad-{mode}"),
                json!({ "misbehave.rekon.dev/mode": mode }),
                json!({}),
            ));
        }
        env.apply(app("web", 1));
        env.wait("the App reconciled", || {
            env.get("demo.rekon.dev", "v1", "App", Some("default"), "web")
                .filter(|a| a["status"]["observedGeneration"] == 1)
        })
        .await;
        // misbehave itself still serves its good objects.
        env.apply(configmap("default", "good", json!({}), json!({})));
        env.wait("misbehave's good object", || {
            env.get("", "v1", "ConfigMap", Some("default"), "good")
                .filter(|c| c["data"]["reconciled"] == "true")
        })
        .await;
        // Each failure was seen and classified.
        for kind in [
            "timeout",
            "out_of_memory",
            "panic",
            "stack_overflow",
            "trap",
        ] {
            let kind = format!("kind=\"{kind}\"");
            env.wait(&kind, || env.log().contains(&kind).then_some(()))
                .await;
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn denied_call_gets_forbidden_and_a_warning_event() {
        let mut env = Env::new().await;
        env.apply(json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": { "name": misbehave::VICTIM, "namespace": "default" },
            "data": { "k": "dg==" },
        }));
        env.run(&[rekon_test_artifacts::MISBEHAVE], &[]);
        env.apply(configmap(
            "default",
            "intruder",
            json!({ "misbehave.rekon.dev/mode": "forbidden" }),
            json!({}),
        ));
        let cm = env
            .wait("the guest's record of the refusal", || {
                env.get("", "v1", "ConfigMap", Some("default"), "intruder")
                    .filter(|c| c["data"]["forbidden"].is_string())
            })
            .await;
        assert_eq!(cm["data"]["forbidden"], "403 Forbidden");
        assert!(
            env.get("", "v1", "Secret", Some("default"), misbehave::VICTIM)
                .is_some(),
            "the Secret survived"
        );
        let event = env
            .event("the Warning event", |e| e["reason"] == "PermissionDenied")
            .await;
        assert_eq!(event["type"], "Warning");
        assert_eq!(event["regarding"]["name"], "intruder");
        // The uid ties it to this object: `kubectl describe` lists it.
        assert_eq!(event["regarding"]["uid"], cm["metadata"]["uid"], "{event}");
        let core = env
            .get(
                "",
                "v1",
                "Event",
                Some("default"),
                event["metadata"]["name"].as_str().unwrap(),
            )
            .expect("the same Event through core/v1");
        assert_eq!(core["involvedObject"]["name"], "intruder");
        assert!(
            event["note"].as_str().unwrap().contains("delete"),
            "{event}"
        );
    }
}

mod resilience {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn dropped_watches_410_and_error_bursts_end_in_the_right_state() {
        let mut env = Env::new().await;
        env.apply_file(&path("guests/app/manifests/crd.yaml"));
        env.run(&[rekon_test_artifacts::APP], &[]);
        for i in 0..3 {
            env.apply(app(&format!("a{i}"), 1));
        }
        let faults = env.server.faults();
        // Writes fail for a while: 500s, 429s, and conflicts.
        faults.fail_next(4, Some("patch"), Some("deployments"), 500);
        faults.fail_next(3, Some("patch"), Some("services"), 429);
        faults.fail_next(2, Some("patch"), Some("apps/status"), 409);
        for i in 3..6 {
            env.apply(app(&format!("a{i}"), 1));
        }
        // Watches are cut and history is compacted: resuming gets 410.
        faults.drop_watches();
        faults.compact();
        for i in 6..9 {
            env.apply(app(&format!("a{i}"), 2));
        }
        faults.drop_watches();
        for i in 0..9 {
            let name = format!("a{i}");
            let replicas = if i >= 6 { 2 } else { 1 };
            env.wait(&format!("{name} reconciled"), || {
                let d = env.get("apps", "v1", "Deployment", Some("default"), &name)?;
                env.get("", "v1", "Service", Some("default"), &name)?;
                let a = env.get("demo.rekon.dev", "v1", "App", Some("default"), &name)?;
                (d["spec"]["replicas"] == replicas && a["status"]["observedGeneration"] == 1)
                    .then_some(())
            })
            .await;
        }
    }
}

mod operator {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn configuration_narrows_a_modules_permissions() {
        let mut env = Env::new().await;
        env.apply(namespace("allowed"));
        let config = env.dir.path().join("rekon.yaml");
        std::fs::write(
            &config,
            "modules:\n  misbehave:\n    permissions:\n    - apiVersion: v1\n      kind: ConfigMap\n      verbs: [get, list, watch, patch]\n      namespaces: [allowed]\n",
        )
        .unwrap();
        env.run(
            &[rekon_test_artifacts::MISBEHAVE],
            &["--config", config.to_str().unwrap()],
        );
        env.apply(configmap("allowed", "yes", json!({}), json!({})));
        env.apply(configmap("default", "no", json!({}), json!({})));
        env.wait("the allowed namespace reconciled", || {
            env.get("", "v1", "ConfigMap", Some("allowed"), "yes")
                .filter(|c| c["data"]["reconciled"] == "true")
        })
        .await;
        let event = env
            .event("the Warning event for the narrowed call", |e| {
                e["reason"] == "PermissionDenied" && e["regarding"]["name"] == "no"
            })
            .await;
        assert!(
            event["note"]
                .as_str()
                .unwrap()
                .contains("operator's configuration"),
            "{event}"
        );
        let untouched = env
            .get("", "v1", "ConfigMap", Some("default"), "no")
            .unwrap();
        assert!(untouched["data"]["reconciled"].is_null(), "{untouched}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn kinds_served_after_start_are_picked_up_without_a_restart() {
        let mut env = Env::new().await;
        env.run(&[rekon_test_artifacts::APP], &[]);
        env.wait("the module to report the missing kind", || {
            env.log()
                .contains("cannot watch the module's kinds")
                .then_some(())
        })
        .await;
        env.apply_file(&path("guests/app/manifests/crd.yaml"));
        env.apply(app("late", 1));
        env.wait("the App reconciled", || {
            env.get("demo.rekon.dev", "v1", "App", Some("default"), "late")
                .filter(|a| a["status"]["observedGeneration"] == 1)
        })
        .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn requeue_after_is_honoured() {
        let mut env = Env::new().await;
        env.run(&[rekon_test_artifacts::MISBEHAVE], &[]);
        env.apply(configmap(
            "default",
            "again",
            json!({ "misbehave.rekon.dev/mode": "requeue", "misbehave.rekon.dev/size": "100" }),
            json!({}),
        ));
        // Nothing changes the ConfigMap: every run after the first is one
        // the module asked for.
        let runs = |log: &str| {
            log.lines()
                .filter(|l| l.contains("object=again") && l.contains("requeue_after_ms=100"))
                .map(|l| l.contains("reason=\"requeued\""))
                .collect::<Vec<bool>>()
        };
        let seen = env
            .wait("three runs", || {
                Some(runs(&env.log())).filter(|r| r.len() >= 3)
            })
            .await;
        assert_eq!(
            seen[..3],
            [false, true, true],
            "one run for the new object, then requeued runs"
        );
    }
}

mod concurrency {
    use super::*;

    /// When each run of `name` ended, from the host's log.
    fn run_ends(log: &str, name: &str) -> Vec<chrono::DateTime<chrono::Utc>> {
        let mut ends: Vec<_> = log
            .lines()
            .filter(|l| l.contains(&format!("object={name} ")) && l.contains("reconcile failed"))
            .filter_map(|l| l.split_whitespace().next()?.parse().ok())
            .collect();
        ends.sort();
        ends
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_same_object_is_never_reconciled_twice_at_once() {
        let mut env = Env::new().await;
        env.run(
            &[rekon_test_artifacts::MISBEHAVE],
            &[
                "--concurrency",
                "4",
                "--timeout-ms",
                "150",
                "--backoff-max-s",
                "1",
            ],
        );
        // Each run of `busy` spins until its 150 ms CPU deadline; meanwhile
        // it keeps changing, and other objects keep the workers busy.
        for i in 0..3 {
            env.apply(configmap(
                "default",
                &format!("other-{i}"),
                json!({}),
                json!({}),
            ));
        }
        for round in 0..25 {
            env.apply(configmap(
                "default",
                "busy",
                json!({ "misbehave.rekon.dev/mode": "loop" }),
                json!({ "round": round.to_string() }),
            ));
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        env.wait("several runs of busy", || {
            (run_ends(&env.log(), "busy").len() >= 3).then_some(())
        })
        .await;
        let ends = run_ends(&env.log(), "busy");
        for pair in ends.windows(2) {
            let gap = pair[1] - pair[0];
            assert!(
                gap >= chrono::Duration::milliseconds(145),
                "two runs of busy overlapped: they ended {gap} apart\n{ends:?}"
            );
        }
    }
}

mod embedded {
    use super::*;

    async fn client(server: &RunningServer) -> kube::Client {
        let kubeconfig = kube::config::Kubeconfig::from_yaml(&server.kubeconfig()).unwrap();
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
            .await
            .unwrap();
        kube::Client::try_from(config).unwrap()
    }

    /// While a big module compiles (the JavaScript guest, no compile
    /// cache), the host answers `modules()` at once and the other modules
    /// keep reconciling.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn modules_answers_and_others_reconcile_while_a_big_module_compiles() {
        let env = Env::new().await;
        env.apply_file(&path("guests/app/manifests/crd.yaml"));
        let dir = env.dir.path().join("modules");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(rekon_test_artifacts::APP, dir.join("app.wasm")).unwrap();
        let host = rekon_host::Host::builder()
            .client(client(&env.server).await)
            .engine_config(rekon_host::EngineConfig::default().cache_dir(None))
            .watch_dir(&dir)
            .start()
            .await
            .unwrap();
        let names = |modules: Vec<rekon_host::Module>| -> Vec<String> {
            modules.iter().map(|m| m.name().to_string()).collect()
        };
        std::fs::copy(
            rekon_test_artifacts::CONFIGMAP_SYNC_JS,
            dir.join("sync.wasm"),
        )
        .unwrap();
        // The directory's debounce has passed: the compile is under way.
        tokio::time::sleep(Duration::from_millis(300)).await;
        env.apply(app("during", 1));
        let answered = tokio::time::timeout(Duration::from_millis(200), host.modules())
            .await
            .expect("modules() answers while a module compiles");
        assert_eq!(names(answered), ["app"]);
        env.wait("the App reconciled during the compile", || {
            env.get("apps", "v1", "Deployment", Some("default"), "during")
        })
        .await;
        let during = names(host.modules().await);
        assert_eq!(during, ["app"], "the compile was still under way");
        let started = std::time::Instant::now();
        loop {
            if names(host.modules().await).contains(&"configmap-sync-js".to_string()) {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "the big module never loaded"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        host.shutdown().await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn stopping_one_module_keeps_the_shared_watch_of_the_other() {
        let env = Env::new().await;
        env.apply(namespace("team-a"));
        let host = rekon_host::Host::builder()
            .client(client(&env.server).await)
            .engine_config(rekon_host::EngineConfig::default().cache_dir(None))
            .module(
                "misbehave",
                std::fs::read(rekon_test_artifacts::MISBEHAVE).unwrap(),
            )
            .module(
                "configmap-sync",
                std::fs::read(rekon_test_artifacts::CONFIGMAP_SYNC).unwrap(),
            )
            .start()
            .await
            .unwrap();
        assert_eq!(host.modules().await.len(), 2);
        env.apply(configmap("default", "one", json!({}), json!({})));
        env.wait("misbehave running", || {
            env.get("", "v1", "ConfigMap", Some("default"), "one")
                .filter(|c| c["data"]["reconciled"] == "true")
        })
        .await;

        assert!(host.stop_module("misbehave").await);
        let mut source = configmap(
            "default",
            "shared",
            json!({ "rekon.dev/sync-to": "team-a" }),
            json!({ "k": "v" }),
        );
        source["metadata"]["labels"] = json!({ "rekon.dev/sync": "true" });
        env.apply(source);
        env.wait("configmap-sync still reconciling", || {
            env.get("", "v1", "ConfigMap", Some("team-a"), "shared")
        })
        .await;
        let source = env
            .get("", "v1", "ConfigMap", Some("default"), "shared")
            .unwrap();
        assert!(
            source["data"]["reconciled"].is_null(),
            "the stopped module did not run"
        );
        let watches = env
            .server
            .requests()
            .into_iter()
            .filter(|r| r.verb == "watch" && r.resource == "configmaps")
            .count();
        assert_eq!(watches, 1, "the ConfigMap watch was kept, not restarted");

        host.shutdown().await;
        env.wait("the watches closed", || {
            (env.store().watch_count() == 0).then_some(())
        })
        .await;
    }
}

mod lifecycle {
    //! What a cluster administrator meets on day one: namespaces deleted
    //! under running reconcilers, failures shown as Events, Events that
    //! cannot be written, and an API server that goes away and comes back.
    use super::*;

    fn labelled_source(ns: &str, name: &str, targets: &str) -> Value {
        json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {
                "name": name, "namespace": ns,
                "labels": { "rekon.dev/sync": "true" },
                "annotations": { "rekon.dev/sync-to": targets },
            },
            "data": { "k": "v" },
        })
    }

    fn in_ns(mut app: Value, ns: &str) -> Value {
        app["metadata"]["namespace"] = json!(ns);
        app
    }

    /// Regression: the App's `CleanedUp` Event was refused in the
    /// terminating namespace, the refusal failed the finalizing reconcile,
    /// the finalizer stayed, and the namespace hung in Terminating.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn deleting_a_namespace_holding_apps_and_sync_sources_never_hangs() {
        let mut env = Env::new().await;
        env.apply_file(&path("guests/app/manifests/crd.yaml"));
        env.run(
            &[
                rekon_test_artifacts::APP,
                rekon_test_artifacts::CONFIGMAP_SYNC,
            ],
            &[],
        );
        env.apply(namespace("doomed"));
        env.apply(namespace("elsewhere"));
        for name in ["a1", "a2"] {
            env.apply(in_ns(app(name, 1), "doomed"));
        }
        // A source in the doomed namespace, and one copied into it.
        env.apply(labelled_source("doomed", "outbound", "elsewhere"));
        env.apply(labelled_source("elsewhere", "inbound", "doomed"));
        for (ns, kind, name) in [
            ("doomed", "Deployment", "a1"),
            ("doomed", "Deployment", "a2"),
            ("elsewhere", "ConfigMap", "outbound"),
            ("doomed", "ConfigMap", "inbound"),
        ] {
            let group = if kind == "Deployment" { "apps" } else { "" };
            env.wait(&format!("{kind} {ns}/{name}"), || {
                env.get(group, "v1", kind, Some(ns), name)
            })
            .await;
        }

        let namespaces = env.resource("", "v1", "Namespace");
        env.store()
            .delete(&namespaces, None, "doomed", None)
            .expect("deleting the namespace");
        env.wait("the namespace gone", || {
            env.get("", "v1", "Namespace", None, "doomed")
                .is_none()
                .then_some(())
        })
        .await;
        // The outbound source's copy went with its source.
        env.wait("the copy of the deleted source removed", || {
            env.get("", "v1", "ConfigMap", Some("elsewhere"), "outbound")
                .is_none()
                .then_some(())
        })
        .await;
        // The inbound source lives on, synced, and does not fail over the
        // namespace it lists that is gone.
        let before = env.settled().await;
        let inbound = env
            .get("", "v1", "ConfigMap", Some("elsewhere"), "inbound")
            .expect("the inbound source");
        assert!(
            inbound["metadata"]["finalizers"]
                .as_array()
                .is_some_and(|f| f.iter().any(|f| f == "rekon.dev/sync-cleanup")),
            "{inbound}"
        );
        assert!(
            !env.log()[before..].contains("reconcile failed"),
            "{}",
            env.log()
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failing_reconcile_records_one_aggregated_event_naming_the_call() {
        let mut env = Env::new().await;
        env.apply_file(&path("guests/app/manifests/crd.yaml"));
        let faults = env.server.faults();
        // Every apply of the Deployment fails until cleared.
        faults.fail_next(100_000, Some("patch"), Some("deployments"), 500);
        env.run(&[rekon_test_artifacts::APP], &[]);
        let web = env.apply(app("web", 1));

        let failed =
            |e: &Value| e["reason"] == "ReconcileFailed" && e["regarding"]["name"] == "web";
        let event = env
            .event("a ReconcileFailed Event whose count grows", |e| {
                failed(e) && e["series"]["count"].as_i64().is_some_and(|c| c >= 3)
            })
            .await;
        assert_eq!(event["type"], "Warning");
        assert_eq!(event["regarding"]["uid"], web["metadata"]["uid"]);
        let note = event["note"].as_str().expect("a note");
        assert!(
            note.contains("patch Deployment.apps/v1 default/web: 500"),
            "the note names the failing call: {note}"
        );
        let events = env.resource("events.k8s.io", "v1", "Event");
        let all = env
            .store()
            .list(&events, &Default::default())
            .unwrap()
            .items;
        assert_eq!(
            all.iter().filter(|e| failed(e)).count(),
            1,
            "repeats are one Event: {all:?}"
        );
        // The log line says the same, inside the reconcile's span.
        let log = env.log();
        let line = log
            .lines()
            .find(|l| l.contains("reconcile failed"))
            .expect("a failure logged");
        assert!(line.contains("object=web "), "{line}");
        assert!(
            line.contains("patch Deployment.apps/v1 default/web"),
            "{line}"
        );

        faults.clear();
        env.wait(
            "the App reconciled once the API server takes the apply",
            || env.get("apps", "v1", "Deployment", Some("default"), "web"),
        )
        .await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn events_refused_or_stalled_by_the_api_server_never_hold_up_a_reconcile() {
        let mut env = Env::new().await;
        env.apply_file(&path("guests/app/manifests/crd.yaml"));
        let port = support::free_port();
        env.run(
            &[rekon_test_artifacts::APP],
            &["--metrics-addr", &format!("127.0.0.1:{port}")],
        );
        let apps = env.resource("demo.rekon.dev", "v1", "App");
        let faults = env.server.faults();
        let cleaned_up = |env: &Env| {
            let events = env.resource("events.k8s.io", "v1", "Event");
            env.store()
                .list(&events, &Default::default())
                .unwrap()
                .items
                .iter()
                .filter(|e| e["reason"] == "CleanedUp")
                .count()
        };

        // Refused: the finalizer still goes, the App with it.
        env.apply(app("refused", 1));
        env.wait("the first App's Deployment", || {
            env.get("apps", "v1", "Deployment", Some("default"), "refused")
        })
        .await;
        // Its first reconcile done (status written), so the deletion below
        // meets an up-to-date cache, not a 409 of a reconcile in flight.
        env.wait("the first App's status", || {
            env.get("demo.rekon.dev", "v1", "App", Some("default"), "refused")
                .filter(|a| a["status"]["observedGeneration"] == 1)
        })
        .await;
        faults.fail_next(100_000, Some("create"), Some("events"), 403);
        env.store()
            .delete(&apps, Some("default"), "refused", None)
            .unwrap();
        env.wait("the App gone although its Event was refused", || {
            env.get("demo.rekon.dev", "v1", "App", Some("default"), "refused")
                .is_none()
                .then_some(())
        })
        .await;
        assert_eq!(cleaned_up(&env), 0);
        assert!(!env.log().contains("reconcile failed"), "{}", env.log());
        env.wait("the refused Event counted", || {
            metrics(port).filter(|m| m.contains("rekon_events_total{result=\"dropped_refused\"}"))
        })
        .await;
        faults.clear();

        // Stalled: the App is gone before its Event is even written.
        env.apply(app("stalled", 1));
        env.wait("the second App's Deployment", || {
            env.get("apps", "v1", "Deployment", Some("default"), "stalled")
        })
        .await;
        // Its first reconcile done (status written), so the deletion below
        // meets an up-to-date cache, not a 409 of a reconcile in flight.
        env.wait("the second App's status", || {
            env.get("demo.rekon.dev", "v1", "App", Some("default"), "stalled")
                .filter(|a| a["status"]["observedGeneration"] == 1)
        })
        .await;
        faults.stall_next(1, Some("create"), Some("events"), Duration::from_secs(3));
        env.store()
            .delete(&apps, Some("default"), "stalled", None)
            .unwrap();
        env.wait("the App gone while its Event waits", || {
            env.get("demo.rekon.dev", "v1", "App", Some("default"), "stalled")
                .is_none()
                .then_some(())
        })
        .await;
        assert_eq!(
            cleaned_up(&env),
            0,
            "the Event was written before the App went"
        );
        env.wait("the stalled Event written in the end", || {
            (cleaned_up(&env) >= 1).then_some(())
        })
        .await;
    }

    /// The host's `/metrics` text.
    fn metrics(port: u16) -> Option<String> {
        use std::io::{Read as _, Write as _};
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
        stream
            .write_all(b"GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n")
            .ok()?;
        let mut text = String::new();
        stream.read_to_string(&mut text).ok()?;
        Some(text)
    }

    /// Three Apps settle; while the API server is down one is edited, one
    /// deleted and one created. Only those three are reconciled when it is
    /// back, with the reasons that say what happened.
    async fn restart_scenario(env: &mut Env, compact: bool, round: usize) {
        let apps = env.resource("demo.rekon.dev", "v1", "App");
        let names: Vec<String> = ["same", "edited", "deleted", "created"]
            .iter()
            .map(|n| format!("{n}{round}"))
            .collect();
        for name in &names[..3] {
            env.apply(app(name, 1));
        }
        for name in &names[..3] {
            env.wait(&format!("{name} ready"), || {
                env.get("demo.rekon.dev", "v1", "App", Some("default"), name)
                    .filter(|a| a["status"]["observedGeneration"] == 1)
            })
            .await;
        }
        let mark = env.settled().await;
        env.restart_server(Duration::from_secs(3), |store| {
            store.apply_object(app(&names[1], 3)).unwrap();
            store
                .delete(&apps, Some("default"), &names[2], None)
                .unwrap();
            store.apply_object(app(&names[3], 1)).unwrap();
            if compact {
                // As a real API server's watch cache after a restart:
                // resuming watches get 410 Gone and must relist.
                store.compact();
            }
        })
        .await;
        let back = std::time::Instant::now();
        env.wait("the edit reconciled", || {
            env.get("apps", "v1", "Deployment", Some("default"), &names[1])
                .filter(|d| d["spec"]["replicas"] == 3)
        })
        .await;
        eprintln!(
            "round {round} (compacted: {compact}): the edit made while down was applied {:?} after the API server came back",
            back.elapsed()
        );
        env.wait("the deleted App gone", || {
            env.get("demo.rekon.dev", "v1", "App", Some("default"), &names[2])
                .is_none()
                .then_some(())
        })
        .await;
        env.wait("the created App's Deployment", || {
            env.get("apps", "v1", "Deployment", Some("default"), &names[3])
        })
        .await;
        env.settled().await;
        let first = |name: &str| env.reconcile_reasons(mark, name).first().cloned();
        assert_eq!(
            env.reconcile_reasons(mark, &names[0]),
            Vec::<String>::new(),
            "unchanged: not reconciled"
        );
        assert_eq!(first(&names[1]).as_deref(), Some("updated"));
        assert_eq!(first(&names[2]).as_deref(), Some("finalizing"));
        assert_eq!(first(&names[3]).as_deref(), Some("added"));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn after_an_api_server_restart_watches_resume_and_only_changes_are_reconciled() {
        let mut env = Env::new().await;
        env.apply_file(&path("guests/app/manifests/crd.yaml"));
        env.run(&[rekon_test_artifacts::APP], &[]);
        // History kept: the watches resume where they were.
        restart_scenario(&mut env, false, 1).await;
        // History lost: the informers relist and compare.
        restart_scenario(&mut env, true, 2).await;
        assert!(env.log().contains("watch resumed"), "{}", env.log());
    }

    /// A component with a custom section appended: the same module, another
    /// digest (a new version to load).
    fn new_version(path: &str) -> Vec<u8> {
        let mut bytes = std::fs::read(path).expect("the component");
        let name = b"rekon-test";
        let payload = b"v2";
        bytes.push(0); // a custom section
        bytes.push((1 + name.len() + payload.len()) as u8);
        bytes.push(name.len() as u8);
        bytes.extend_from_slice(name);
        bytes.extend_from_slice(payload);
        bytes
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_reload_reconciles_every_app_once_as_module_reloaded() {
        let mut env = Env::new().await;
        env.apply_file(&path("guests/app/manifests/crd.yaml"));
        let modules = env.dir.path().join("modules");
        std::fs::create_dir_all(&modules).unwrap();
        std::fs::copy(rekon_test_artifacts::APP, modules.join("app.wasm")).unwrap();
        env.run(&[], &["--modules", modules.to_str().unwrap()]);
        for name in ["r1", "r2"] {
            env.apply(app(name, 1));
        }
        for name in ["r1", "r2"] {
            env.wait(&format!("{name} ready"), || {
                env.get("demo.rekon.dev", "v1", "App", Some("default"), name)
                    .filter(|a| a["status"]["observedGeneration"] == 1)
            })
            .await;
        }
        let mark = env.settled().await;
        let tmp = modules.join(".app.wasm.tmp");
        std::fs::write(&tmp, new_version(rekon_test_artifacts::APP)).unwrap();
        std::fs::rename(&tmp, modules.join("app.wasm")).unwrap();
        env.wait("the new version loaded", || {
            env.log()[mark..].contains("module loaded").then_some(())
        })
        .await;
        env.settled().await;
        for name in ["r1", "r2"] {
            assert_eq!(
                env.reconcile_reasons(mark, name),
                ["module-reloaded"],
                "{}",
                &env.log()[mark..]
            );
        }
    }
}

mod one_adapter {
    //! Every way to run a module gives the same answers to its host calls:
    //! `rekon reconcile` (the in-memory store), the SDK's native harness,
    //! and a live host against the API server over HTTP.
    use super::*;
    use misbehave::{MODE_KEY, Misbehave, SCRIPT_KEY};
    use rekon_sdk::testing::FakeCluster;

    /// The calls, and the start of the answer each must get.
    fn script() -> (Value, Vec<&'static str>) {
        let cm = |call: &str, name: &str| {
            json!({"call": call, "apiVersion": "v1", "kind": "ConfigMap",
                "namespace": "default", "name": name})
        };
        let with = |mut call: Value, patch: &str, body: &str| {
            call["patch"] = json!(patch);
            call["body"] = json!(body);
            call
        };
        let cases = [
            // An apply body is YAML, as for a real server: a trailing comma is fine.
            (
                with(
                    cm("patch", "applied"),
                    "apply",
                    r#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied", "namespace": "default"}, "data": {"a": "1",}}"#,
                ),
                "ok",
            ),
            (
                with(cm("create", ""), "", r#"{"metadata": {"name": "probe"}}"#),
                "409 AlreadyExists: configmaps \"probe\" already exists",
            ),
            (
                cm("get", "missing"),
                "404 NotFound: configmaps \"missing\" not found",
            ),
            (
                with(
                    cm("patch", "applied"),
                    "json",
                    r#"[{"op": "test", "path": "/data/a", "value": "2"}]"#,
                ),
                "422 ",
            ),
            (
                with(
                    cm("create", ""),
                    "",
                    r#"{"metadata": {"name": "Bad_Name"}}"#,
                ),
                "422 Invalid: ConfigMap \"Bad_Name\" is invalid",
            ),
            (
                json!({"call": "delete", "apiVersion": "v1", "kind": "Secret", "namespace": "default", "name": "victim"}),
                "403 Forbidden: module \"misbehave\" may not delete Secret/v1 in namespace \"default\": its manifest does not grant it",
            ),
            (
                with(
                    cm("replace", "applied"),
                    "",
                    r#"{"metadata": {"name": "applied", "resourceVersion": "1"}, "data": {}}"#,
                ),
                "409 Conflict: Operation cannot be fulfilled on configmaps \"applied\"",
            ),
            (
                with(cm("patch", "missing"), "merge", "{}"),
                "404 NotFound: configmaps \"missing\" not found",
            ),
        ];
        let calls: Vec<Value> = cases.iter().map(|(c, _)| c.clone()).collect();
        let expected = cases.iter().map(|(_, e)| *e).collect();
        (json!(calls), expected)
    }

    fn probe_object() -> Value {
        let (calls, _) = script();
        json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "probe", "namespace": "default", "annotations": {
                MODE_KEY: "probe", SCRIPT_KEY: calls.to_string(),
            }},
        })
    }

    /// The `answer-<i>` entries of a ConfigMap's data, in order.
    fn answers(data: &Value) -> Vec<String> {
        (0..)
            .map_while(|i| data[format!("answer-{i}")].as_str().map(str::to_string))
            .collect()
    }

    fn offline() -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let object = dir.path().join("probe.yaml");
        std::fs::write(&object, serde_yaml::to_string(&probe_object()).unwrap()).unwrap();
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_rekon"))
            .args(["reconcile", rekon_test_artifacts::MISBEHAVE, "--object"])
            .arg(&object)
            .env("REKON_CACHE_DIR", dir.path().join("cache"))
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        // The last merge patch is the module writing down its answers.
        let record: Value = stdout
            .lines()
            .rev()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|r| r["call"] == "patch" && r["args"]["patch"]["data"]["answer-0"].is_string())
            .unwrap_or_else(|| panic!("no answers written:\n{stdout}"));
        answers(&record["args"]["patch"]["data"])
    }

    fn harness() -> Vec<String> {
        let cluster = FakeCluster::new();
        cluster.seed(probe_object()).unwrap();
        cluster
            .reconcile::<Misbehave>(Some("default"), "probe")
            .unwrap();
        let cm = cluster
            .object(
                &rekon_sdk::Gvk::new("", "v1", "ConfigMap"),
                Some("default"),
                "probe",
            )
            .unwrap();
        answers(&cm["data"])
    }

    async fn live() -> Vec<String> {
        let mut env = Env::new().await;
        env.run(&[rekon_test_artifacts::MISBEHAVE], &[]);
        env.apply(probe_object());
        let cm = env
            .wait("the live answers", || {
                env.get("", "v1", "ConfigMap", Some("default"), "probe")
                    .filter(|c| c["data"]["answer-0"].is_string())
            })
            .await;
        answers(&cm["data"])
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_same_calls_get_the_same_answers_everywhere() {
        let (_, expected) = script();
        let offline = offline();
        assert_eq!(offline.len(), expected.len(), "{offline:#?}");
        for (answer, start) in offline.iter().zip(&expected) {
            assert!(
                answer.starts_with(start),
                "{answer:?} should start with {start:?}"
            );
        }
        assert_eq!(harness(), offline, "the SDK's harness");
        assert_eq!(live().await, offline, "a live host over HTTP");
    }
}
