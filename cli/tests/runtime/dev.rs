//! `rekon dev` with modules: the example guests against the embedded
//! server, objects applied through the modules' webhooks, and a tenant
//! operator owning built-in kinds.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::{dev_kubectl, kubectl, sigterm_and_wait, stderr, stdout, write};

/// `rekon dev` with the example guests and only the example App: the
/// app module ships its CRD, which `rekon dev` installs before
/// applying the App, and the App is reconciled.
#[test]
fn dev_runs_the_example_guests_against_the_embedded_server() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let manifests = concat!(env!("CARGO_MANIFEST_DIR"), "/../guests/app/manifests");
    let mut child = Command::new(env!("CARGO_BIN_EXE_rekon"))
        .env_remove("KUBEBUILDER_ASSETS") // the in-memory server
        .args([
            "dev",
            rekon_test_artifacts::APP,
            rekon_test_artifacts::CONFIGMAP_SYNC,
        ])
        // No CRD given: the app module ships it, and `rekon dev` installs it.
        .args(["-f", &format!("{manifests}/example.yaml")])
        .arg("--write-kubeconfig")
        .arg(&kubeconfig)
        .env("REKON_CACHE_DIR", dir.path().join("cache"))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    // The example App gets its Deployment and a status, seen with kubectl.
    loop {
        if kubeconfig.exists() {
            let status = kubectl(
                &kubeconfig,
                &[
                    "get",
                    "app",
                    "web",
                    "-o",
                    "jsonpath={.status.observedGeneration}",
                ],
            );
            let deployment = kubectl(&kubeconfig, &["get", "deployment", "web", "-o", "name"]);
            if stdout(&status) == "1" && stdout(&deployment).trim() == "deployment.apps/web" {
                break;
            }
        }
        assert!(
            Instant::now() < deadline,
            "the example App was not reconciled"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    sigterm_and_wait(&mut child);
}

/// `rekon dev -f` applies its objects through the API server once the
/// modules' webhooks serve, as `kubectl apply` would: an App the
/// module's validating webhook denies is refused, and `rekon dev` says
/// so and stops.
#[test]
fn dev_applies_its_objects_through_the_modules_webhooks() {
    let dir = tempfile::tempdir().unwrap();
    let app = write(
        dir.path(),
        "big.yaml",
        "apiVersion: demo.rekon.dev/v1\nkind: App\nmetadata: {name: big, namespace: default}\nspec: {image: \"nginx:1.27\", replicas: 500}\n",
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_rekon"))
        .env_remove("KUBEBUILDER_ASSETS") // the in-memory server
        .args(["dev", rekon_test_artifacts::APP, "-f", &app])
        .env("REKON_CACHE_DIR", dir.path().join("cache"))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // What rekon dev says is read as it says it: a pipe nobody drains
    // would hold it up once full.
    let mut pipe = child.stderr.take().unwrap();
    let said = std::thread::spawn(move || {
        let mut err = String::new();
        let _ = std::io::Read::read_to_string(&mut pipe, &mut err);
        err
    });
    // The module is compiled first (a fresh cache), which takes a while
    // when the other tests compile theirs on the same cores.
    let deadline = Instant::now() + Duration::from_secs(180);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            let _ = child.wait();
            panic!(
                "rekon dev did not stop after applying an App its webhook denies; it said:\n{}",
                said.join().unwrap()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let err = said.join().unwrap();
    assert!(!status.success(), "{err}");
    assert!(err.contains("big.yaml"), "{err}");
    assert!(err.contains("denied the request"), "{err}");
}

/// A module owning built-in kinds beyond Deployments (Namespace,
/// ResourceQuota, RoleBinding, StatefulSet, Job) reconciles in
/// `rekon dev`: it provisions, follows its owned objects' status, and
/// its Tenant's deletion takes everything with it.
#[test]
fn dev_runs_a_tenant_operator_owning_quota_statefulset_and_job() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let manifests = concat!(env!("CARGO_MANIFEST_DIR"), "/../guests/tenant/manifests");
    let mut child = Command::new(env!("CARGO_BIN_EXE_rekon"))
        .env_remove("KUBEBUILDER_ASSETS") // the in-memory server
        .args(["dev", rekon_test_artifacts::TENANT])
        .args(["-f", &format!("{manifests}/crd.yaml")])
        .args(["-f", &format!("{manifests}/example.yaml")])
        .arg("--write-kubeconfig")
        .arg(&kubeconfig)
        .env("REKON_CACHE_DIR", dir.path().join("cache"))
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let cache = dir.path().join("kubectl-cache");
    let run = |args: &[&str]| dev_kubectl(&kubeconfig, &cache, args);
    let until = |what: &str, done: &dyn Fn() -> bool| {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !(kubeconfig.exists() && done()) {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(100));
        }
    };
    let jsonpath = |args: &[&str], path: &str| {
        let mut all = args.to_vec();
        let path = format!("jsonpath={path}");
        all.extend(["-o", &path]);
        stdout(&run(&all))
    };
    until("the tenant's objects", &|| {
        let names = stdout(&run(&[
            "get",
            "resourcequota,rolebinding,statefulset,job",
            "-n",
            "tenant-acme",
            "-o",
            "name",
        ]));
        names.contains("resourcequota/tenant-quota")
            && names.contains("rolebinding.rbac.authorization.k8s.io/tenant-admins")
            && names.contains("statefulset.apps/db")
            && names.contains("job.batch/db-init")
    });
    let reason = || jsonpath(&["get", "tenant", "acme"], "{.status.conditions[0].reason}");
    until("the Provisioning status", &|| reason() == "Provisioning");
    // The workload controllers report: the module hears of its owned
    // objects' changes and reports the tenant ready.
    for (kind, status) in [
        (
            "statefulset/db",
            r#"{"status":{"replicas":1,"readyReplicas":1}}"#,
        ),
        ("job/db-init", r#"{"status":{"succeeded":1}}"#),
    ] {
        let out = run(&[
            "patch",
            kind,
            "-n",
            "tenant-acme",
            "--subresource=status",
            "--type=merge",
            "-p",
            status,
        ]);
        assert!(out.status.success(), "{}", stderr(&out));
    }
    until("the Provisioned status", &|| reason() == "Provisioned");
    assert_eq!(
        jsonpath(
            &["get", "tenant", "acme"],
            "{.status.databaseReady} {.status.initialized}"
        ),
        "1 true"
    );
    // Deleting the Tenant collects the namespace and its contents.
    let out = run(&["delete", "tenant", "acme", "--wait=false"]);
    assert!(out.status.success(), "{}", stderr(&out));
    until("the namespace's removal", &|| {
        stderr(&run(&["get", "namespace", "tenant-acme"])).contains("NotFound")
    });
    sigterm_and_wait(&mut child);
}

/// `rekon dev` migrates a module's CRD as a cluster's leader does: Apps
/// written in v1, the CRD then storing v2 (applied by hand, as an upgrade
/// would) — every App is written back (its conversion checked both ways
/// first), `storedVersions` becomes `[v2]`, `rekon migrate status` says
/// so, and only then can v1 be dropped from the CRD.
#[test]
fn dev_migrates_a_crd_to_its_new_storage_version() {
    let dev = crate::support::Dev::start(&[rekon_test_artifacts::APP]);
    let crd = "apps.demo.rekon.dev";
    dev.until("the App CRD", || {
        dev.kubectl(&["get", "crd", crd]).status.success()
    });
    let apps: String = (0..12)
        .map(|i| {
            format!(
                "---\napiVersion: demo.rekon.dev/v1\nkind: App\nmetadata: {{name: mig-{i}, namespace: default}}\nspec: {{image: \"nginx:1.27\", replicas: 1, port: 80}}\n"
            )
        })
        .collect();
    let applied = dev.apply(&apps, &[]);
    assert!(
        applied.status.success(),
        "{}",
        String::from_utf8_lossy(&applied.stderr)
    );
    let versions = |field: &str| {
        let out = dev.kubectl(&["get", "crd", crd, "-o", &format!("jsonpath={{{field}}}")]);
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    assert_eq!(versions(".status.storedVersions"), r#"["v1"]"#);
    let app_versions = || {
        dev.kubectl(&[
            "get",
            "apps",
            "-n",
            "default",
            "-o",
            "jsonpath={.items[*].metadata.resourceVersion}",
        ])
    };
    let before = app_versions();
    // The upgrade: v2 stores.
    let moved = dev.kubectl(&[
        "patch", "crd", crd, "--type=json", "-p",
        r#"[{"op":"replace","path":"/spec/versions/0/storage","value":false},{"op":"replace","path":"/spec/versions/1/storage","value":true}]"#,
    ]);
    assert!(
        moved.status.success(),
        "{}",
        String::from_utf8_lossy(&moved.stderr)
    );
    let dropped = r#"[{"op":"remove","path":"/spec/versions/0"}]"#;
    dev.until("storedVersions [v2]", || {
        versions(".status.storedVersions") == r#"["v2"]"#
    });
    let after = app_versions();
    let (before, after) = (
        String::from_utf8_lossy(&before.stdout),
        String::from_utf8_lossy(&after.stdout),
    );
    let unchanged: Vec<_> = before
        .split(' ')
        .filter(|rv| after.split(' ').any(|a| a == *rv))
        .collect();
    assert!(
        unchanged.is_empty(),
        "Apps not written back: {unchanged:?} of {before} (now {after})"
    );
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_rekon"))
        .args(["migrate", "status", "--kubeconfig"])
        .arg(&dev.kubeconfig)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&status.stdout);
    assert!(
        said.contains("apps.demo.rekon.dev: done to v2, 12/12 objects written back; storage v2, storedVersions [\"v2\"]"),
        "{said}{}",
        String::from_utf8_lossy(&status.stderr)
    );
    // v1 may go now.
    let removed = dev.kubectl(&["patch", "crd", crd, "--type=json", "-p", dropped]);
    assert!(
        removed.status.success(),
        "{}",
        String::from_utf8_lossy(&removed.stderr)
    );
}
