//! Behaviour seen through the installed kubectl.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt as _, BufReader};
use tokio::process::Command;

use crate::common::{self, TestServer};

async fn kubectl(t: &TestServer, args: &[&str]) -> (bool, String, String) {
    let cache = t.dir.path().join("cache");
    let out = Command::new("kubectl")
        .args(args)
        .arg("--cache-dir")
        .arg(&cache)
        .env("KUBECONFIG", t.kubeconfig_path())
        .output()
        .await
        .expect("kubectl runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

pub(crate) async fn ok(t: &TestServer, args: &[&str]) -> String {
    let (success, out, err) = kubectl(t, args).await;
    assert!(success, "kubectl {args:?} failed: {err}\n{out}");
    assert!(!err.contains("warning"), "kubectl {args:?} warned: {err}");
    out
}

pub(crate) fn write(dir: &Path, name: &str, body: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, body).expect("write manifest");
    p.display().to_string()
}

#[tokio::test]
async fn apply_create_update_and_get_yaml() {
    let t = common::start().await;
    let d = t.dir.path();
    let ns = write(
        d,
        "ns.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: demo\n",
    );
    assert_eq!(
        ok(&t, &["apply", "-f", &ns]).await.trim(),
        "namespace/demo created"
    );
    let manifest = |color: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: demo\n  labels:\n    app: demo\ndata:\n  color: {color}\n  size: \"3\"\n"
        )
    };
    let f = write(d, "cm.yaml", &manifest("blue"));
    assert_eq!(
        ok(&t, &["apply", "-f", &f]).await.trim(),
        "configmap/settings created"
    );
    assert_eq!(
        ok(&t, &["apply", "-f", &f]).await.trim(),
        "configmap/settings unchanged"
    );
    write(d, "cm.yaml", &manifest("green"));
    assert_eq!(
        ok(&t, &["apply", "-f", &f]).await.trim(),
        "configmap/settings configured"
    );
    let yaml = ok(
        &t,
        &["get", "configmap", "settings", "-n", "demo", "-o", "yaml"],
    )
    .await;
    assert!(yaml.contains("color: green"), "{yaml}");
    assert!(yaml.contains("kubectl.kubernetes.io/last-applied-configuration"));
    assert!(yaml.contains("resourceVersion:"));
    let names = ok(
        &t,
        &["get", "cm", "-n", "demo", "-l", "app=demo", "-o", "name"],
    )
    .await;
    assert_eq!(names.trim(), "configmap/settings");
    let table = ok(&t, &["get", "cm", "-n", "demo"]).await;
    assert!(
        table.starts_with("NAME") && table.contains("settings"),
        "{table}"
    );
    // Server-side apply through kubectl, onto the client-side applied object.
    // The first one migrates ownership from the client-side apply.
    assert_eq!(
        ok(&t, &["apply", "--server-side", "-f", &f]).await.trim(),
        "configmap/settings serverside-applied"
    );
    write(d, "cm.yaml", &manifest("red"));
    assert_eq!(
        ok(&t, &["apply", "--server-side", "-f", &f]).await.trim(),
        "configmap/settings serverside-applied"
    );
    let color = ok(
        &t,
        &[
            "get",
            "cm",
            "settings",
            "-n",
            "demo",
            "-o",
            "jsonpath={.data.color}",
        ],
    )
    .await;
    assert_eq!(color, "red");
    // The request log shows the strategic merge patch kubectl sent.
    let patches: Vec<_> = t
        .server
        .requests()
        .into_iter()
        .filter(|r| r.verb == "patch")
        .collect();
    assert!(!patches.is_empty());
}

#[tokio::test]
async fn apply_kustomize_directory() {
    let t = common::start().await;
    let d = t.dir.path().join("kz");
    std::fs::create_dir_all(&d).unwrap();
    write(
        &d,
        "kustomization.yaml",
        "namespace: kz\nresources:\n- namespace.yaml\n- rbac.yaml\n- deployment.yaml\nconfigMapGenerator:\n- name: app-config\n  literals:\n  - mode=fast\n",
    );
    write(
        &d,
        "namespace.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kz\n",
    );
    write(
        &d,
        "rbac.yaml",
        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: ctl\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: ctl\nrules:\n- apiGroups: [\"\"]\n  resources: [configmaps]\n  verbs: [get, list, watch]\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: ctl\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: ctl\nsubjects:\n- kind: ServiceAccount\n  name: ctl\n",
    );
    write(
        &d,
        "deployment.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ctl\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {app: ctl}\n  template:\n    metadata:\n      labels: {app: ctl}\n    spec:\n      serviceAccountName: ctl\n      containers:\n      - name: ctl\n        image: example.com/ctl:1\n",
    );
    let out = ok(&t, &["apply", "-k", &d.display().to_string()]).await;
    for line in [
        "namespace/kz created",
        "serviceaccount/ctl created",
        "role.rbac.authorization.k8s.io/ctl created",
        "deployment.apps/ctl created",
    ] {
        assert!(out.contains(line), "{out}");
    }
    // A second apply with a changed image goes through strategic merge by container name.
    let dep = std::fs::read_to_string(d.join("deployment.yaml"))
        .unwrap()
        .replace("ctl:1", "ctl:2");
    write(&d, "deployment.yaml", &dep);
    let out = ok(&t, &["apply", "-k", &d.display().to_string()]).await;
    assert!(out.contains("deployment.apps/ctl configured"), "{out}");
    let image = ok(
        &t,
        &[
            "get",
            "deploy",
            "ctl",
            "-n",
            "kz",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].image} {.metadata.generation}",
        ],
    )
    .await;
    assert_eq!(image, "example.com/ctl:2 2");
}

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

#[tokio::test]
async fn imperative_creates_in_protobuf() {
    let t = common::start().await;
    assert_eq!(
        ok(&t, &["create", "namespace", "shop"]).await.trim(),
        "namespace/shop created"
    );
    ok(
        &t,
        &[
            "create",
            "configmap",
            "settings",
            "-n",
            "shop",
            "--from-literal=color=blue",
        ],
    )
    .await;
    ok(
        &t,
        &[
            "create",
            "secret",
            "generic",
            "token",
            "-n",
            "shop",
            "--from-literal=key=s3cret",
        ],
    )
    .await;
    let store = t.server.store();
    let get = |kind: &str, name: &str| {
        let res = store.resource_for_kind("", "v1", kind).unwrap();
        let ns = (kind != "Namespace").then_some("shop");
        store.get(&res, ns, name).unwrap()
    };
    assert_eq!(get("Namespace", "shop")["status"]["phase"], "Active");
    assert_eq!(get("ConfigMap", "settings")["data"]["color"], "blue");
    assert_eq!(get("Secret", "token")["data"]["key"], "czNjcmV0");
    assert_eq!(get("Secret", "token")["type"], "Opaque");
    // Every built-in kind decodes: the imperative commands of workloads,
    // services, quotas and RBAC.
    let commands: &[&[&str]] = &[
        &[
            "create",
            "deployment",
            "web",
            "--image=nginx:1.27",
            "--replicas=0",
        ],
        &["create", "job", "migrate", "--image=busybox"],
        &[
            "create",
            "cronjob",
            "nightly",
            "--image=busybox",
            "--schedule=0 3 * * *",
        ],
        &["create", "service", "clusterip", "web", "--tcp=80:8080"],
        &["create", "quota", "compute", "--hard=pods=10,cpu=2"],
        &["create", "role", "reader", "--verb=get", "--resource=pods"],
        &[
            "create",
            "rolebinding",
            "readers",
            "--role=reader",
            "--user=alice",
        ],
        &[
            "create",
            "ingress",
            "web",
            "--rule=shop.example.com/=web:80",
        ],
    ];
    for command in commands {
        let mut args = command.to_vec();
        args.extend(["-n", "shop"]);
        ok(&t, &args).await;
    }
    let get = |group: &str, kind: &str, name: &str| {
        let res = store.resource_for_kind(group, "v1", kind).unwrap();
        store.get(&res, Some("shop"), name).unwrap()
    };
    let web = get("apps", "Deployment", "web");
    assert_eq!(
        web["spec"]["replicas"], 0,
        "a zero that means something stays: {web}"
    );
    assert_eq!(
        web["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx:1.27"
    );
    let nightly = get("batch", "CronJob", "nightly");
    assert_eq!(nightly["spec"]["schedule"], "0 3 * * *");
    assert_eq!(
        get("", "Service", "web")["spec"]["ports"][0]["targetPort"],
        8080
    );
    assert_eq!(
        get("", "ResourceQuota", "compute")["spec"]["hard"]["pods"],
        "10"
    );
    assert_eq!(
        get("rbac.authorization.k8s.io", "Role", "reader")["rules"][0]["apiGroups"][0],
        ""
    );
    let ingress = get("networking.k8s.io", "Ingress", "web");
    assert_eq!(
        ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["name"],
        "web"
    );
    assert_eq!(
        get("batch", "Job", "migrate")["spec"]["template"]["spec"]["containers"][0]["image"],
        "busybox"
    );
}
