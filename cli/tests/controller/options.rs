//! Controller options of contract 0.2 end to end: predicates, the
//! priority queue, resync, the primary's selector and namespaces.

use super::support;

mod predicates {
    use serde_json::{Value, json};

    use crate::support::{Env, app, path};

    /// The reconcile reasons of App `web` after a foreign status write, a
    /// label change, then a spec change, each let settle.
    async fn reasons_after_status_label_and_spec(module: &str) -> [Vec<String>; 3] {
        let mut env = Env::new().await;
        env.apply_file(&path("guests/app/manifests/crd.yaml"));
        env.run(&[module], &[]);
        env.apply(app("web", 2));
        env.wait("the App status", || {
            env.get("demo.rekon.dev", "v1", "App", Some("default"), "web")
                .filter(|a| a["status"]["observedGeneration"] == 1)
        })
        .await;
        let apps = env.resource("demo.rekon.dev", "v1", "App");
        let patch = |body: Value, status: bool| {
            let options = rekon_apiserver::WriteOptions {
                field_manager: Some("someone-else".into()),
                subresource: status.then(|| "status".to_string()),
                ..Default::default()
            };
            let merge = rekon_apiserver::PatchType::Merge;
            let body = serde_json::to_vec(&body).unwrap();
            env.store()
                .patch(&apps, Some("default"), "web", &merge, &body, &options)
                .unwrap();
        };
        // Each change, let settle: the reasons logged since the last mark.
        let mut mark = env.settled().await;
        let mut reasons = Vec::new();
        for (body, status) in [
            (json!({"status": {"replicas": 99}}), true),
            (json!({"metadata": {"labels": {"team": "shop"}}}), false),
            (json!({"spec": {"replicas": 3}}), false),
        ] {
            patch(body, status);
            let end = env.settled().await;
            reasons.push(env.reconcile_reasons(mark, "web"));
            mark = end;
        }
        env.wait("replicas 3", || {
            env.get("apps", "v1", "Deployment", Some("default"), "web")
                .filter(|d| d["spec"]["replicas"] == 3)
        })
        .await;
        let [status, labels, spec]: [Vec<String>; 3] = reasons.try_into().unwrap();
        [status, labels, spec]
    }

    /// `.generation_changed()`: a status or label write by anyone queues
    /// nothing; a spec change queues one reconcile.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_generation_filtered_module_ignores_status_and_label_writes() {
        let [status, labels, spec] =
            reasons_after_status_label_and_spec(rekon_test_artifacts::APP).await;
        assert_eq!(status, Vec::<String>::new(), "a status write");
        assert_eq!(labels, Vec::<String>::new(), "a label change");
        // One reconcile of the change (the Deployment it rewrites then
        // queues the App as its owner, as every owned change does).
        assert_eq!(
            spec.first().map(String::as_str),
            Some("updated"),
            "{spec:?}"
        );
        assert_eq!(
            spec.iter().filter(|r| *r == "updated").count(),
            1,
            "{spec:?}"
        );
    }

    /// The same App built for 0.1.0 (no predicates): every change queues a
    /// reconcile, as it always did.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_0_1_0_module_is_queued_by_every_change() {
        let [status, labels, spec] =
            reasons_after_status_label_and_spec(rekon_test_artifacts::APP_V0_1).await;
        assert!(status.first().is_some_and(|r| r == "updated"), "{status:?}");
        assert!(labels.first().is_some_and(|r| r == "updated"), "{labels:?}");
        assert!(spec.first().is_some_and(|r| r == "updated"), "{spec:?}");
    }
}

mod priority {
    use serde_json::json;

    use crate::support::{Env, configmap, namespace};

    /// Under a backlog of 10,000 objects (the initial list, low priority),
    /// an object a user edits is reconciled next, long before the backlog
    /// drains.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_edit_is_reconciled_before_a_10k_backlog_drains() {
        const BACKLOG: usize = 10_000;
        let mut env = Env::new().await;
        env.apply(namespace("backlog"));
        let store = env.store();
        // Already reconciled: the `ok` mode writes nothing for these.
        let done = json!({"reconciled": "true", "behaved-by": misbehave::BUILD_MARK});
        for i in 0..BACKLOG {
            let name = format!("cm-{i:05}");
            store
                .apply_object(configmap("backlog", &name, json!({}), done.clone()))
                .unwrap();
        }
        env.run(&[rekon_test_artifacts::MISBEHAVE], &[]);
        let reconciles = |env: &Env| env.log().matches("reconcile{").count();
        env.wait_long("the backlog's first reconciles", || {
            (reconciles(&env) > 0).then_some(())
        })
        .await;
        env.apply(configmap("backlog", "edited", json!({}), json!({})));
        env.wait_long("the edit reconciled", || {
            env.get("", "v1", "ConfigMap", Some("backlog"), "edited")
                .filter(|c| c["data"]["reconciled"] == "true")
        })
        .await;
        // Where the edit ran among the reconciles so far.
        let log = env.log();
        let position = log
            .lines()
            .filter(|l| l.contains("reconcile{"))
            .position(|l| l.contains("object=edited "))
            .expect("the edit's reconcile is logged");
        assert!(
            position < BACKLOG / 2,
            "the edit ran as reconcile {position} of a backlog of {BACKLOG}"
        );
        assert!(
            log.lines()
                .any(|l| l.contains("object=edited ")
                    && l.replace('"', "").contains("priority=high")),
            "the edit ran at high priority"
        );
    }
}

/// Runs the misbehave module (it reconciles ConfigMaps) with this operator
/// configuration of it.
fn run_misbehave_with(env: &mut support::Env, settings: &str) {
    let config = env.dir.path().join("rekon.yaml");
    std::fs::write(&config, format!("modules:\n  misbehave:\n{settings}")).unwrap();
    env.run(
        &[rekon_test_artifacts::MISBEHAVE],
        &["--config", config.to_str().unwrap()],
    );
}

mod resync {
    use serde_json::json;

    use super::run_misbehave_with;
    use crate::support::{Env, configmap, namespace};

    /// With a resync period (here set by the operator), every primary is
    /// reconciled again with reason `resync`, with nothing changed.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_primary_is_revisited_at_the_resync_period() {
        let mut env = Env::new().await;
        env.apply(namespace("drift"));
        for name in ["a", "b", "c"] {
            env.apply(configmap("drift", name, json!({}), json!({})));
        }
        run_misbehave_with(&mut env, "    resyncPeriod: 1s\n");
        let mark = env.log().len();
        env.wait_long("two resyncs of each", || {
            ["a", "b", "c"]
                .iter()
                .all(|name| {
                    let reasons = env.reconcile_reasons(mark, name);
                    reasons.iter().filter(|r| *r == "resync").count() >= 2
                })
                .then_some(())
        })
        .await;
        // The resyncs ran at low priority.
        assert!(
            env.log()
                .lines()
                .filter(|l| l.contains("reason=resync") || l.contains("reason=\"resync\""))
                .all(|l| l.replace('"', "").contains("priority=low")),
            "{}",
            env.log()
        );
    }
}

mod selector {
    use serde_json::json;

    use crate::support;
    use crate::support::{Env, configmap, namespace};

    /// A label selector on the primary (here the operator's): only the
    /// matching objects are cached and reconciled; an object that comes to
    /// match is picked up.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn only_primaries_matching_the_selector_are_cached_and_reconciled() {
        let mut env = Env::new().await;
        env.apply(namespace("teams"));
        let labelled = |name: &str, team: &str| {
            let mut cm = configmap("teams", name, json!({}), json!({}));
            cm["metadata"]["labels"] = json!({ "team": team });
            cm
        };
        env.apply(labelled("mine", "a"));
        env.apply(labelled("theirs", "b"));
        let port = support::free_port();
        let config = env.dir.path().join("rekon.yaml");
        std::fs::write(&config, "modules:\n  misbehave:\n    selector: team=a\n").unwrap();
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
        let reconciled = |name: &str| {
            env.get("", "v1", "ConfigMap", Some("teams"), name)
                .is_some_and(|c| c["data"]["reconciled"] == "true")
        };
        env.wait("the matching ConfigMap reconciled", || {
            reconciled("mine").then_some(())
        })
        .await;
        env.settled().await;
        assert!(
            !reconciled("theirs"),
            "a ConfigMap outside the selector was reconciled"
        );
        // The cache holds the matching objects only (the module's other
        // ConfigMaps are none: kube-system's and default's lack the label).
        let objects = env
            .wait("the informer gauge", || {
                let text = options_metrics(port)?;
                text.lines()
                    .find(|l| l.starts_with("rekon_informer_objects{") && l.contains("ConfigMap"))
                    .map(|l| l.rsplit(' ').next().unwrap_or_default().to_string())
            })
            .await;
        assert_eq!(objects, "1");
        // Relabelled to match, it is reconciled.
        env.apply(labelled("theirs", "a"));
        env.wait("the relabelled ConfigMap reconciled", || {
            reconciled("theirs").then_some(())
        })
        .await;
    }

    fn options_metrics(port: u16) -> Option<String> {
        support::http_get(port, "/metrics")
    }
}

mod reads {
    use serde_json::json;

    use crate::support::{Env, configmap, namespace};
    use misbehave::{MODE_KEY, READABLE_SECRETS, SCRIPT_KEY};

    /// Guests reading a kind no controller follows, in the one namespace
    /// their permissions cover: one informer for that namespace serves
    /// every read (one list, one watch), instead of a cluster-wide informer
    /// started and dropped per call.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn repeated_reads_of_an_unwatched_kind_share_one_namespaced_informer() {
        let mut env = Env::new().await;
        env.apply(namespace(READABLE_SECRETS));
        env.apply(json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "token", "namespace": READABLE_SECRETS},
            "data": {"key": "czNjcmV0"}}));
        let script = json!([{"call": "get", "apiVersion": "v1", "kind": "Secret",
            "namespace": READABLE_SECRETS, "name": "token"}]);
        for name in ["one", "two", "three"] {
            env.apply(configmap(
                READABLE_SECRETS,
                name,
                json!({ MODE_KEY: "probe", SCRIPT_KEY: script.to_string() }),
                json!({}),
            ));
        }
        env.run(&[rekon_test_artifacts::MISBEHAVE], &[]);
        for name in ["one", "two", "three"] {
            env.wait("the Secret read", || {
                env.get("", "v1", "ConfigMap", Some(READABLE_SECRETS), name)
                    .filter(|c| c["data"]["answer-0"] == "ok")
            })
            .await;
        }
        let secrets: Vec<_> = env
            .server
            .requests()
            .into_iter()
            .filter(|r| r.resource == "secrets")
            .collect();
        let count = |verb: &str| secrets.iter().filter(|r| r.verb == verb).count();
        assert_eq!((count("list"), count("watch")), (1, 1), "{secrets:#?}");
        let prefix = format!("/api/v1/namespaces/{READABLE_SECRETS}/secrets");
        assert!(
            secrets.iter().all(|r| r.path.starts_with(&prefix)),
            "namespaced reads, as the permissions are: {secrets:#?}"
        );
    }
}

mod namespaces {
    use serde_json::json;

    use super::run_misbehave_with;
    use crate::support::{Env, configmap, namespace};

    /// Primaries scoped to namespaces (here by the operator): only those
    /// are listed, watched (namespaced requests, as namespaced RBAC allows)
    /// and reconciled.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn primaries_scoped_to_namespaces_are_listed_and_reconciled_there_only() {
        let mut env = Env::new().await;
        for ns in ["shop", "blog", "other"] {
            env.apply(namespace(ns));
            env.apply(configmap(ns, "settings", json!({}), json!({})));
        }
        run_misbehave_with(&mut env, "    namespaces: [shop, blog]\n");
        let reconciled = |ns: &str| {
            env.get("", "v1", "ConfigMap", Some(ns), "settings")
                .is_some_and(|c| c["data"]["reconciled"] == "true")
        };
        env.wait("both namespaces reconciled", || {
            (reconciled("shop") && reconciled("blog")).then_some(())
        })
        .await;
        env.settled().await;
        assert!(
            !reconciled("other"),
            "a ConfigMap outside the namespaces was reconciled"
        );
        let configmaps: Vec<_> = env
            .server
            .requests()
            .into_iter()
            .filter(|r| r.resource == "configmaps" && matches!(r.verb.as_str(), "list" | "watch"))
            .collect();
        assert!(
            configmaps
                .iter()
                .all(|r| r.path.starts_with("/api/v1/namespaces/")),
            "no cluster-wide list or watch: {configmaps:#?}"
        );
    }
}

mod indexes {
    use serde_json::{Value, json};

    use crate::support::{Env, configmap, namespace};
    use misbehave::{MODE_KEY, SCRIPT_KEY, TEAM_INDEX};

    /// A module's declared index answers `list-by-index` from the host's
    /// cache: the right objects, in one namespace or all, as they change;
    /// an undeclared index is a 400.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn list_by_index_answers_from_the_cache_as_objects_change() {
        let mut env = Env::new().await;
        for ns in ["north", "south"] {
            env.apply(namespace(ns));
        }
        let member = |ns: &str, name: &str, team: &str| {
            let mut cm = configmap(
                ns,
                name,
                json!({}),
                json!({"reconciled": "true",
                "behaved-by": misbehave::BUILD_MARK}),
            );
            cm["metadata"]["labels"] = json!({ "team": team });
            cm
        };
        env.apply(member("north", "ann", "red"));
        env.apply(member("south", "bob", "red"));
        env.apply(member("south", "cat", "blue"));
        env.run(&[rekon_test_artifacts::MISBEHAVE], &[]);
        let probe = |name: &str, calls: Value| {
            env.apply(configmap(
                "north",
                name,
                json!({ MODE_KEY: "probe", SCRIPT_KEY: calls.to_string() }),
                json!({}),
            ));
        };
        let answers = |name: &'static str| {
            let env = &env;
            async move {
                let cm = env
                    .wait("the probe's answers", || {
                        env.get("", "v1", "ConfigMap", Some("north"), name)
                            .filter(|c| c["data"]["answer-0"].is_string())
                    })
                    .await;
                (0..)
                    .map_while(|i| {
                        cm["data"][format!("answer-{i}")]
                            .as_str()
                            .map(str::to_string)
                    })
                    .collect::<Vec<_>>()
            }
        };
        let by = |value: &str, ns: Option<&str>| json!({"call": "list-by-index", "index": TEAM_INDEX, "value": value, "namespace": ns});
        probe(
            "first",
            json!([by("red", None), by("red", Some("south")), by("green", None),
                   {"call": "list-by-index", "index": "nope", "value": "red"}]),
        );
        assert_eq!(
            answers("first").await,
            [
                "ok ann,bob",
                "ok bob",
                "ok ",
                "400 BadRequest: the manifest declares no index \"nope\""
            ]
        );
        // Relabelled and deleted: the next lookup sees it.
        env.apply(member("south", "cat", "red"));
        let configmaps = env.resource("", "v1", "ConfigMap");
        env.store()
            .delete(&configmaps, Some("north"), "ann", None)
            .unwrap();
        env.wait("the informer caught up", || {
            env.log().contains("object=ann ").then_some(())
        })
        .await;
        probe("second", json!([by("red", None)]));
        assert_eq!(answers("second").await, ["ok bob,cat"]);
    }
}
