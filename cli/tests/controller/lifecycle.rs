//! What a cluster administrator meets on day one: namespaces deleted
//! under running reconcilers, failures shown as Events, Events that
//! cannot be written, and an API server that goes away and comes back.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{self, Env, app, namespace, path};

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

    let failed = |e: &Value| e["reason"] == "ReconcileFailed" && e["regarding"]["name"] == "web";
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
