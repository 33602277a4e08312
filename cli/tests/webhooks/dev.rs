//! The admission chain in `rekon dev`, seen by kubectl: the app module's
//! validation, defaults and warnings, its conversion between v1 and v2,
//! failure policies, and a reload that changes the verdict.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{self, Dev, app_yaml, fresh, path, stderr, stdout};

/// The `app` module's webhooks in `rekon dev`: a bad App is refused by
/// `kubectl apply` with the module's message, worded as kube-apiserver
/// words a webhook's denial; defaults are filled in; warnings reach
/// kubectl; every way of writing (apply, server-side apply, patch,
/// dry run) goes through the chain.
#[test]
fn kubectl_sees_the_apps_validation_defaults_and_warnings() {
    let crd = path("guests/app/manifests/crd.yaml");
    let dev = Dev::start(&[rekon_test_artifacts::APP, "-f", &crd]);
    // The module loads after the API server: wait for its verdicts.
    dev.until("the app module's webhooks", || {
        !dev.apply(&app_yaml(&fresh("probe"), "{image: '', replicas: 1}"), &[])
            .status
            .success()
    });

    let bad = dev.apply(&app_yaml("bad", "{image: nginx, replicas: 500}"), &[]);
    assert!(!bad.status.success(), "a bad App is refused");
    let message = stderr(&bad);
    assert!(
        message.contains(
            "admission webhook \"validate-apps.app.rekon.dev\" denied the request: \
                 spec.replicas must be between 0 and 100, not 500"
        ),
        "{message}"
    );
    let gone = dev.kubectl(&["get", "app", "bad", "-o", "name"]);
    assert!(!gone.status.success(), "nothing was stored");

    let both = dev.apply(&app_yaml("both", "{image: '', replicas: -1}"), &[]);
    let message = stderr(&both);
    assert!(
        message.contains("spec.image is required; spec.replicas must be between 0 and 100"),
        "{message}"
    );

    let good = dev.apply(&app_yaml("good", "{image: 'nginx:latest'}"), &[]);
    assert!(good.status.success(), "{}", stderr(&good));
    assert!(
        stderr(&good).contains("Warning: spec.image uses the :latest tag; pin a version"),
        "{}",
        stderr(&good)
    );
    let spec = dev.kubectl(&[
        "get",
        "apps.v1.demo.rekon.dev",
        "good",
        "-o",
        "jsonpath={.spec}",
    ]);
    let spec: Value = serde_json::from_str(&stdout(&spec)).unwrap();
    assert_eq!(
        spec,
        json!({"image": "nginx:latest", "replicas": 1, "port": 80}),
        "the defaulting webhook filled replicas and port"
    );

    let patch = dev.kubectl(&[
        "patch",
        "apps.v1.demo.rekon.dev",
        "good",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"replicas":101}}"#,
    ]);
    assert!(!patch.status.success(), "a bad patch is refused");
    assert!(stderr(&patch).contains("not 101"), "{}", stderr(&patch));
    let ssa = dev.apply(
        &app_yaml("good", "{image: nginx, replicas: 200}"),
        &["--server-side", "--force-conflicts"],
    );
    assert!(!ssa.status.success(), "a bad server-side apply is refused");
    assert!(stderr(&ssa).contains("not 200"), "{}", stderr(&ssa));
    let dry = dev.apply(
        &app_yaml("dry", "{image: nginx, replicas: 300}"),
        &["--dry-run=server"],
    );
    assert!(!dry.status.success(), "a bad server dry run is refused");

    // A patch that drops the port gets it back from the defaulting
    // webhook; the reconciler sees the defaulted App.
    let fine = dev.kubectl(&[
        "patch",
        "apps.v1.demo.rekon.dev",
        "good",
        "--type",
        "json",
        "-p",
        r#"[{"op":"remove","path":"/spec/port"},{"op":"replace","path":"/spec/replicas","value":3}]"#,
    ]);
    assert!(fine.status.success(), "{}", stderr(&fine));
    let spec = dev.kubectl(&[
        "get",
        "apps.v1.demo.rekon.dev",
        "good",
        "-o",
        "jsonpath={.spec}",
    ]);
    let spec: Value = serde_json::from_str(&stdout(&spec)).unwrap();
    assert_eq!(spec["port"], 80, "{spec}");
    assert_eq!(spec["replicas"], 3, "{spec}");
    dev.until("the Deployment of the defaulted App", || {
        stdout(&dev.kubectl(&[
            "get",
            "deployment",
            "good",
            "-o",
            "jsonpath={.spec.replicas}",
        ])) == "3"
    });
}

/// The App CRD serves v1 (stored) and v2: in `rekon dev` the app
/// module converts between them, so an App stored as v1 reads as v2
/// and back, an App written as v2 is stored as v1, and the v1
/// reconciler sees it.
#[test]
fn a_stored_app_reads_as_v2_and_back_through_the_modules_conversion() {
    let crd = path("guests/app/manifests/crd.yaml");
    let dev = Dev::start(&[rekon_test_artifacts::APP, "-f", &crd]);
    dev.until("the app module's webhooks", || {
        !dev.apply(&app_yaml(&fresh("probe"), "{image: '', replicas: 1}"), &[])
            .status
            .success()
    });
    let created = dev.apply(
        &app_yaml("web", "{image: nginx, replicas: 2, port: 8080}"),
        &[],
    );
    assert!(created.status.success(), "{}", stderr(&created));
    let get = |resource: &str| -> Value {
        let out = dev.kubectl(&["get", resource, "web", "-o", "json"]);
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_str(&stdout(&out)).unwrap()
    };
    let v2 = get("apps.v2.demo.rekon.dev");
    assert_eq!(v2["apiVersion"], "demo.rekon.dev/v2");
    assert_eq!(
        v2["spec"],
        json!({"replicas": 2, "container": {"image": "nginx", "port": 8080}})
    );
    let v1 = get("apps.v1.demo.rekon.dev");
    assert_eq!(
        v1["spec"],
        json!({"image": "nginx", "replicas": 2, "port": 8080})
    );
    assert_eq!(v1["metadata"]["uid"], v2["metadata"]["uid"]);

    // Written as v2: stored as v1, reconciled by the v1 reconciler.
    let written = dev.apply(
        "apiVersion: demo.rekon.dev/v2\nkind: App\nmetadata: {name: second, namespace: default}\n\
             spec: {replicas: 3, container: {image: 'nginx:1.27', port: 9090}}\n",
        &[],
    );
    assert!(written.status.success(), "{}", stderr(&written));
    let v1 = dev.kubectl(&[
        "get",
        "apps.v1.demo.rekon.dev",
        "second",
        "-o",
        "jsonpath={.spec}",
    ]);
    let v1: Value = serde_json::from_str(&stdout(&v1)).unwrap();
    assert_eq!(
        v1,
        json!({"image": "nginx:1.27", "replicas": 3, "port": 9090})
    );
    dev.until("the Deployment of the App written as v2", || {
        stdout(&dev.kubectl(&[
            "get",
            "deployment",
            "second",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].image}",
        ])) == "nginx:1.27"
    });
    // A v2 patch goes through the conversion and the webhooks alike.
    let bad = dev.kubectl(&[
        "patch",
        "apps.v2.demo.rekon.dev",
        "second",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"replicas":1000}}"#,
    ]);
    assert!(!bad.status.success());
    assert!(stderr(&bad).contains("not 1000"), "{}", stderr(&bad));
}

fn configmap(name: &str, policy: &str, mode: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: default\n  \
             labels: {{misbehave.rekon.dev/webhook-policy: {policy}}}\n  \
             annotations: {{misbehave.rekon.dev/webhook: {mode}, misbehave.rekon.dev/mode: requeue, \
             misbehave.rekon.dev/size: '3600000'}}\n"
    )
}

/// A webhook that traps, panics or loops follows its failure policy:
/// `Fail` refuses the write with what happened, `Ignore` lets it
/// through with a warning; the host keeps serving. During a review a
/// module may read, never write.
#[test]
fn failing_webhooks_obey_fail_and_ignore_and_only_read() {
    let dev = Dev::start(&[rekon_test_artifacts::MISBEHAVE]);
    dev.until("the misbehave module's webhooks", || {
        !dev.apply(&configmap(&fresh("probe"), "fail", "deny"), &[])
            .status
            .success()
    });
    let denied = dev.apply(&configmap("denied", "fail", "deny"), &[]);
    assert!(
        stderr(&denied).contains(
            "admission webhook \"fail-closed.misbehave.rekon.dev\" denied the request: \
                 misbehave: asked to deny"
        ),
        "{}",
        stderr(&denied)
    );
    for (mode, says) in [
        ("trap", "guest trapped"),
        ("panic", "misbehave: asked to panic"),
        ("loop", "CPU time limit"),
    ] {
        let closed = dev.apply(&configmap(&format!("closed-{mode}"), "fail", mode), &[]);
        assert!(!closed.status.success(), "{mode} with Fail is refused");
        let message = stderr(&closed);
        assert!(
            message.contains("webhook \"fail-closed\" of module \"misbehave\" failed")
                && message.contains(says),
            "{mode}: {message}"
        );
        let open = dev.apply(&configmap(&format!("open-{mode}"), "ignore", mode), &[]);
        assert!(
            open.status.success(),
            "{mode} with Ignore is let through: {}",
            stderr(&open)
        );
        assert!(
            stderr(&open).contains("ignored: failurePolicy Ignore"),
            "{mode}: {}",
            stderr(&open)
        );
    }
    let write = dev.apply(&configmap("write", "fail", "write"), &[]);
    assert!(
        stderr(&write).contains("write refused: 403 Forbidden: a webhook may only read"),
        "{}",
        stderr(&write)
    );
    let read = dev.apply(&configmap("read", "fail", "read"), &[]);
    assert!(read.status.success(), "{}", stderr(&read));
    let uid = stdout(&dev.kubectl(&[
        "get",
        "namespace",
        "default",
        "-o",
        "jsonpath={.metadata.uid}",
    ]));
    assert!(
        stderr(&read).contains(&format!("namespace uid {uid}")),
        "{}",
        stderr(&read)
    );
    // Unlabelled ConfigMaps are not the webhooks' business.
    let plain = dev.kubectl(&["create", "configmap", "plain"]);
    assert!(plain.status.success(), "{}", stderr(&plain));
}

/// A new version of a module answers the next review: the verdict
/// changes without a restart; a version that fails to load leaves the
/// last good one answering; a module that goes stops answering.
#[test]
fn a_reload_changes_the_verdict_without_a_restart() {
    let modules = tempfile::tempdir().unwrap();
    let file = modules.path().join("misbehave.wasm");
    let build = |mark: &str| support::misbehave_with(misbehave::BUILD_MARK, mark);
    std::fs::write(&file, build("misbehave-build-A")).unwrap();
    let dev = Dev::start(&["--modules", modules.path().to_str().unwrap()]);
    let cm = |name: &str| configmap(name, "fail", "deny-build-a");
    dev.until("build A's denial", || {
        stderr(&dev.apply(&cm(&fresh("a")), &[])).contains("denied by misbehave-build-A")
    });
    std::fs::write(&file, build("misbehave-build-B")).unwrap();
    dev.until("build B's verdict", || {
        let out = dev.apply(&cm(&fresh("b")), &[]);
        out.status.success() && stderr(&out).contains("allowed by misbehave-build-B")
    });
    std::fs::write(&file, b"\0asm garbage").unwrap();
    std::thread::sleep(Duration::from_secs(1));
    let still = dev.apply(&cm("c"), &[]);
    assert!(
        stderr(&still).contains("allowed by misbehave-build-B"),
        "the last good version answers: {}",
        stderr(&still)
    );
    std::fs::remove_file(&file).unwrap();
    dev.until("the module to go", || {
        let out = dev.apply(&cm(&fresh("d")), &[]);
        out.status.success() && !stderr(&out).contains("allowed by")
    });
}
