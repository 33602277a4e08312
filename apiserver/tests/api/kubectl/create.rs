//! Creating through kubectl: `apply` of manifests and of a kustomize
//! directory, and imperative `create`s (sent as protobuf).

use super::{ok, write};
use crate::common;

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
