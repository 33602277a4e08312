//! Reading and deleting through kubectl: `get` by plural and short name,
//! `get --watch`, Events in `get` and `describe`, and a `delete` that waits
//! for a finalizer.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::Command;

use super::{kubectl, ok, write};
use crate::common;

#[tokio::test]
async fn crd_then_get_by_plural_and_short_name() {
    let t = common::start().await;
    let d = t.dir.path();
    let crd = write(
        d,
        "crd.yaml",
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.demo.example.com\nspec:\n  group: demo.example.com\n  scope: Namespaced\n  names:\n    kind: Widget\n    plural: widgets\n    singular: widget\n    shortNames: [wd]\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    subresources:\n      status: {}\n    schema:\n      openAPIV3Schema:\n        type: object\n        x-kubernetes-preserve-unknown-fields: true\n",
    );
    ok(&t, &["apply", "-f", &crd]).await;
    ok(
        &t,
        &[
            "wait",
            "--for=condition=Established",
            "crd/widgets.demo.example.com",
            "--timeout=10s",
        ],
    )
    .await;
    let w = write(
        d,
        "w.yaml",
        "apiVersion: demo.example.com/v1\nkind: Widget\nmetadata:\n  name: w1\n  namespace: default\nspec:\n  size: 1\n---\napiVersion: demo.example.com/v1\nkind: Widget\nmetadata:\n  name: w2\n  namespace: default\nspec:\n  size: 2\n",
    );
    let out = ok(&t, &["apply", "-f", &w]).await;
    assert!(out.contains("widget.demo.example.com/w1 created"), "{out}");
    let out = ok(&t, &["get", "widgets"]).await;
    assert!(out.contains("w1") && out.contains("w2"), "{out}");
    let out = ok(&t, &["get", "wd", "-o", "name"]).await;
    assert_eq!(
        out.trim(),
        "widget.demo.example.com/w1\nwidget.demo.example.com/w2"
    );
    // Re-applying a changed custom object sends a merge patch.
    let changed = std::fs::read_to_string(&w)
        .unwrap()
        .replace("size: 2", "size: 5");
    std::fs::write(&w, changed).unwrap();
    let out = ok(&t, &["apply", "-f", &w]).await;
    assert!(
        out.contains("widget.demo.example.com/w1 unchanged")
            && out.contains("widget.demo.example.com/w2 configured"),
        "{out}"
    );
    let out = ok(
        &t,
        &[
            "get",
            "wd",
            "w2",
            "-o",
            "jsonpath={.spec.size} {.metadata.generation}",
        ],
    )
    .await;
    assert_eq!(out, "5 2");
    ok(&t, &["delete", "crd", "widgets.demo.example.com"]).await;
    let (success, _, err) = kubectl(&t, &["get", "widgets"]).await;
    // kubectl's discovery cache may still list the kind: either way the server no longer serves it.
    assert!(!success && err.contains("widgets"), "{err}");
}

#[tokio::test]
async fn delete_with_finalizer_waits_for_it() {
    let t = common::start().await;
    let f = write(
        t.dir.path(),
        "held.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: held\n  finalizers: [example.com/hold]\ndata:\n  a: b\n",
    );
    ok(&t, &["apply", "-f", &f]).await;
    let out = ok(&t, &["delete", "cm", "held", "--wait=false"]).await;
    assert_eq!(out.trim(), "configmap \"held\" deleted");
    let ts = ok(
        &t,
        &[
            "get",
            "cm",
            "held",
            "-o",
            "jsonpath={.metadata.deletionTimestamp}",
        ],
    )
    .await;
    assert!(!ts.is_empty(), "still there, being deleted");
    ok(
        &t,
        &[
            "patch",
            "cm",
            "held",
            "--type=merge",
            "-p",
            r#"{"metadata":{"finalizers":null}}"#,
        ],
    )
    .await;
    let (success, _, err) = kubectl(&t, &["get", "cm", "held"]).await;
    assert!(!success && err.contains("NotFound"), "{err}");
    // A plain delete waits until the object is gone.
    ok(&t, &["apply", "-f", &f]).await;
    ok(
        &t,
        &[
            "patch",
            "cm",
            "held",
            "--type=json",
            "-p",
            r#"[{"op":"remove","path":"/metadata/finalizers"}]"#,
        ],
    )
    .await;
    let out = ok(&t, &["delete", "cm", "held"]).await;
    assert_eq!(out.trim(), "configmap \"held\" deleted");
}

#[tokio::test]
async fn get_watch_prints_changes() {
    let t = common::start().await;
    let store = t.server.store();
    let cm_res = store.resource_for_kind("", "v1", "ConfigMap").unwrap();
    store
        .create(
            &cm_res,
            Some("default"),
            serde_json::json!({"metadata": {"name": "before"}}),
            &Default::default(),
        )
        .unwrap();
    let mut child = Command::new("kubectl")
        .args(["get", "cm", "-w", "-o", "name", "--cache-dir"])
        .arg(t.dir.path().join("cache"))
        .env("KUBECONFIG", t.kubeconfig_path())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("kubectl get -w starts");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert_eq!(next_line(&mut lines).await, "configmap/before");
    assert_eq!(next_line(&mut lines).await, "configmap/kube-root-ca.crt");
    store
        .create(
            &cm_res,
            Some("default"),
            serde_json::json!({"metadata": {"name": "after"}}),
            &Default::default(),
        )
        .unwrap();
    assert_eq!(next_line(&mut lines).await, "configmap/after");
    child.kill().await.ok();
}

async fn next_line(lines: &mut tokio::io::Lines<BufReader<tokio::process::ChildStdout>>) -> String {
    tokio::time::timeout(Duration::from_secs(10), lines.next_line())
        .await
        .expect("a line in time")
        .expect("read")
        .expect("a line")
}

#[tokio::test]
async fn events_recorded_through_events_k8s_io_show_in_get_and_describe() {
    let t = common::start().await;
    let d = t.dir.path();
    let cm = write(
        d,
        "cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: target\n  namespace: default\n",
    );
    ok(&t, &["apply", "-f", &cm]).await;
    let store = t.server.store();
    let configmaps = store.resource_for_kind("", "v1", "ConfigMap").unwrap();
    let uid = store.get(&configmaps, Some("default"), "target").unwrap()["metadata"]["uid"].clone();
    // What rekon records: an events.k8s.io/v1 Event about the object.
    let events = store
        .resource_for_kind("events.k8s.io", "v1", "Event")
        .unwrap();
    store
        .apply_object(serde_json::json!({
            "apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": { "name": "target.1", "namespace": "default" },
            "eventTime": chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.6fZ").to_string(),
            "type": "Warning", "reason": "PermissionDenied", "action": "PermissionDenied",
            "note": "1 call(s) denied", "reportingController": "rekon-misbehave",
            "reportingInstance": "replica-a",
            "regarding": { "apiVersion": "v1", "kind": "ConfigMap", "namespace": "default",
                "name": "target", "uid": uid },
        }))
        .unwrap();
    assert!(store.get(&events, Some("default"), "target.1").is_ok());

    let table = ok(&t, &["get", "events", "-n", "default"]).await;
    let mut lines = table.lines();
    let header: Vec<&str> = lines
        .next()
        .unwrap_or_default()
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(
        header,
        ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"],
        "{table}"
    );
    let row = lines.next().unwrap_or_default();
    for cell in [
        "Warning",
        "PermissionDenied",
        "configmap/target",
        "1 call(s) denied",
    ] {
        assert!(row.contains(cell), "{cell} missing from {table}");
    }
    let wide = ok(&t, &["get", "events", "-n", "default", "-o", "wide"]).await;
    assert!(wide.contains("rekon-misbehave, replica-a"), "{wide}");

    let described = ok(&t, &["describe", "configmap", "target", "-n", "default"]).await;
    assert!(
        described.contains("PermissionDenied") && described.contains("1 call(s) denied"),
        "{described}"
    );
}
