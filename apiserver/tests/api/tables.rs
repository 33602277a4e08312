//! The columns `kubectl get` prints for the common built-in kinds, as a real
//! kube-apiserver prints them.

use crate::common;
use crate::kubectl::{ok, write};

const MANIFEST: &str = r#"
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "nginx:1.27"}]}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: shop}
spec:
  replicas: 3
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: "postgres:17"}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: migrate, namespace: shop}
spec:
  completions: 2
  template:
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: "busybox"}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: backup, namespace: shop}
spec:
  schedule: "*/5 * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: backup, image: "busybox"}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  clusterIP: 10.0.0.20
  selector: {app: web}
  ports: [{port: 80, protocol: TCP}]
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: compute, namespace: shop}
spec:
  hard: {pods: "10", limits.cpu: "2"}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: editors, namespace: shop}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: edit}
subjects: [{kind: User, name: alice, apiGroup: rbac.authorization.k8s.io}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader, namespace: shop}
rules: [{apiGroups: [""], resources: [pods], verbs: [get]}]
"#;

/// The header and the row of `name` in a `kubectl get` output, split on
/// runs of two or more spaces (cells may hold single spaces).
fn row<'a>(out: &'a str, name: &str) -> (Vec<&'a str>, Vec<&'a str>) {
    let split = |line: &'a str| -> Vec<&'a str> {
        line.split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect()
    };
    let mut lines = out.lines();
    let header = split(lines.next().unwrap_or_default());
    let row = lines
        .map(split)
        .find(|cells| cells.first() == Some(&name))
        .unwrap_or_else(|| panic!("no row {name} in\n{out}"));
    (header, row)
}

#[tokio::test]
async fn common_kinds_print_their_real_columns() {
    let t = common::start().await;
    let manifest = write(t.dir.path(), "shop.yaml", MANIFEST);
    ok(&t, &["create", "-f", &manifest]).await;
    let get = |args: &'static [&'static str]| {
        let t = &t;
        async move {
            let mut all = vec!["get", "-n", "shop"];
            all.extend_from_slice(args);
            ok(t, &all).await
        }
    };

    let out = get(&["deployment", "-o", "wide"]).await;
    let (header, web) = row(&out, "web");
    assert_eq!(
        header,
        [
            "NAME",
            "READY",
            "UP-TO-DATE",
            "AVAILABLE",
            "AGE",
            "CONTAINERS",
            "IMAGES",
            "SELECTOR"
        ]
    );
    assert_eq!(
        [web[1], web[2], web[3], web[5], web[6], web[7]],
        ["0/2", "0", "0", "web", "nginx:1.27", "app=web"]
    );

    let out = get(&["statefulset"]).await;
    let (header, db) = row(&out, "db");
    assert_eq!(header, ["NAME", "READY", "AGE"]);
    assert_eq!(db[1], "0/3");

    let out = get(&["job"]).await;
    let (header, job) = row(&out, "migrate");
    assert_eq!(header, ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]);
    assert_eq!(job[1..3], ["Running", "0/2"]);

    let out = get(&["cronjob"]).await;
    let (header, cron) = row(&out, "backup");
    assert_eq!(
        header,
        [
            "NAME",
            "SCHEDULE",
            "TIMEZONE",
            "SUSPEND",
            "ACTIVE",
            "LAST SCHEDULE",
            "AGE"
        ]
    );
    assert_eq!(
        cron[1..6],
        ["*/5 * * * *", "<none>", "False", "0", "<none>"]
    );

    let out = get(&["service"]).await;
    let (header, svc) = row(&out, "web");
    assert_eq!(
        header,
        [
            "NAME",
            "TYPE",
            "CLUSTER-IP",
            "EXTERNAL-IP",
            "PORT(S)",
            "AGE"
        ]
    );
    assert_eq!(svc[1..5], ["ClusterIP", "10.0.0.20", "<none>", "80/TCP"]);

    // A quota's cells come from its status (written by the quota
    // controller), its resources sorted by name.
    ok(
        &t,
        &[
            "patch",
            "-n",
            "shop",
            "resourcequota",
            "compute",
            "--subresource=status",
            "--type=merge",
            "-p",
            r#"{"status": {"hard": {"pods": "10", "limits.cpu": "2", "configmaps": "5"}, "used": {"pods": "1"}}}"#,
        ],
    )
    .await;
    let out = get(&["resourcequota"]).await;
    let (header, quota) = row(&out, "compute");
    // Kubernetes 1.36 prints the age last (printers.go).
    assert_eq!(header, ["NAME", "REQUEST", "LIMIT", "AGE"]);
    assert_eq!(
        quota[1..3],
        ["configmaps: 0/5, pods: 1/10", "limits.cpu: 0/2"]
    );

    let out = get(&["rolebinding", "-o", "wide"]).await;
    let (header, binding) = row(&out, "editors");
    assert_eq!(header[..3], ["NAME", "ROLE", "AGE"]);
    assert_eq!((binding[1], binding[3]), ("ClusterRole/edit", "alice"));

    // Kinds the real server prints with their creation time.
    let out = get(&["role"]).await;
    let (header, role) = row(&out, "reader");
    assert_eq!(header, ["NAME", "CREATED AT"]);
    assert!(role[1].ends_with('Z'), "{out}");
}
