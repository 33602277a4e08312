//! Admission and conversion webhooks served by modules, with the real
//! `rekon` binary: `rekon dev` runs the admission chain in its API server
//! (kubectl, a client none of us wrote, sees the verdicts), `rekon admit`
//! answers reviews offline.

// Tests may unwrap: a panic is a failed test with its message.
#![allow(clippy::unwrap_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{Value, json};

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `rekon dev` with its arguments, until dropped.
struct Dev {
    child: Child,
    dir: tempfile::TempDir,
    kubeconfig: PathBuf,
}

impl Dev {
    fn start(args: &[&str]) -> Dev {
        let dir = tempfile::tempdir().unwrap();
        let kubeconfig = dir.path().join("kubeconfig");
        let child = Command::new(env!("CARGO_BIN_EXE_rekon"))
            .env_remove("KUBEBUILDER_ASSETS") // the in-memory server
            .arg("dev")
            .args(args)
            .arg("--write-kubeconfig")
            .arg(&kubeconfig)
            .env("REKON_CACHE_DIR", dir.path().join("cache"))
            .stderr(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let dev = Dev {
            child,
            dir,
            kubeconfig,
        };
        dev.until("the API server", || dev.kubeconfig.exists());
        dev
    }

    fn kubectl(&self, args: &[&str]) -> Output {
        Command::new("kubectl")
            .arg("--cache-dir")
            .arg(self.dir.path().join("kubectl-cache"))
            .args(args)
            .env("KUBECONFIG", &self.kubeconfig)
            .output()
            .expect("running kubectl")
    }

    /// `kubectl apply -f -` of `manifest` (YAML or JSON).
    fn apply(&self, manifest: &str, extra: &[&str]) -> Output {
        let path = self.dir.path().join(format!(
            "manifest-{}.yaml",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        std::fs::write(&path, manifest).unwrap();
        let mut args = vec!["apply", "-f", path.to_str().unwrap()];
        args.extend_from_slice(extra);
        self.kubectl(&args)
    }

    fn until(&self, what: &str, mut done: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !done() {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Dev {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A name not used before (an unchanged `kubectl apply` sends nothing,
/// so a probe repeated until a webhook answers needs a new object).
fn fresh(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!("{prefix}-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

fn path(relative: &str) -> String {
    format!("{}/../{relative}", env!("CARGO_MANIFEST_DIR"))
}

fn app(name: &str, spec: &str) -> String {
    format!(
        "apiVersion: demo.rekon.dev/v1\nkind: App\nmetadata: {{name: {name}, namespace: default}}\nspec: {spec}\n"
    )
}

mod dev {
    use super::*;

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
            !dev.apply(&app(&fresh("probe"), "{image: '', replicas: 1}"), &[])
                .status
                .success()
        });

        let bad = dev.apply(&app("bad", "{image: nginx, replicas: 500}"), &[]);
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

        let both = dev.apply(&app("both", "{image: '', replicas: -1}"), &[]);
        let message = stderr(&both);
        assert!(
            message.contains("spec.image is required; spec.replicas must be between 0 and 100"),
            "{message}"
        );

        let good = dev.apply(&app("good", "{image: 'nginx:latest'}"), &[]);
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
            &app("good", "{image: nginx, replicas: 200}"),
            &["--server-side", "--force-conflicts"],
        );
        assert!(!ssa.status.success(), "a bad server-side apply is refused");
        assert!(stderr(&ssa).contains("not 200"), "{}", stderr(&ssa));
        let dry = dev.apply(
            &app("dry", "{image: nginx, replicas: 300}"),
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
            !dev.apply(&app(&fresh("probe"), "{image: '', replicas: 1}"), &[])
                .status
                .success()
        });
        let created = dev.apply(&app("web", "{image: nginx, replicas: 2, port: 8080}"), &[]);
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
}

mod admit {
    use super::*;

    fn rekon_admit(dir: &Path, module: &str, review: &Value, extra: &[&str]) -> (Value, bool) {
        let file = dir.join("review.json");
        std::fs::write(&file, review.to_string()).unwrap();
        let output = Command::new(env!("CARGO_BIN_EXE_rekon"))
            .args(["admit", module, "--request", file.to_str().unwrap()])
            .args(extra)
            .env("REKON_CACHE_DIR", dir.join("cache"))
            .output()
            .unwrap();
        let answer = serde_json::from_str(&stdout(&output))
            .unwrap_or_else(|e| panic!("{e}: {} {}", stdout(&output), stderr(&output)));
        (answer, output.status.success())
    }

    fn review(operation: &str, object: Value) -> Value {
        json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {
                "uid": "review-1",
                "kind": {"group": "demo.rekon.dev", "version": "v1", "kind": "App"},
                "resource": {"group": "demo.rekon.dev", "version": "v1", "resource": "apps"},
                "name": "web", "namespace": "default", "operation": operation,
                "userInfo": {"username": "alice"},
                "object": object,
            }
        })
    }

    /// One webhook's AdmissionReview answer, the whole chain's outcome,
    /// and a ConversionReview there and back, offline.
    #[test]
    fn rekon_admit_answers_admission_and_conversion_reviews() {
        admit_scenario(rekon_test_artifacts::APP);
    }

    /// The App operator built for `rekon:reconciler@0.3.0` (kept in the
    /// test artifacts, never rebuilt) answers the same reviews alike.
    #[test]
    fn a_component_built_for_contract_0_3_0_answers_reviews_as_before() {
        admit_scenario(rekon_test_artifacts::APP_V0_3);
    }

    fn admit_scenario(module: &str) {
        let dir = tempfile::tempdir().unwrap();
        let app = json!({"apiVersion": "demo.rekon.dev/v1", "kind": "App",
            "metadata": {"name": "web", "namespace": "default", "uid": "u-1"},
            "spec": {"image": "nginx"}});
        let (answer, ok) = rekon_admit(
            dir.path(),
            module,
            &review("CREATE", app.clone()),
            &["--webhook", "default-apps"],
        );
        assert!(ok);
        assert_eq!(answer["kind"], "AdmissionReview");
        assert_eq!(answer["response"]["uid"], "review-1");
        assert_eq!(answer["response"]["patchType"], "JSONPatch");
        let patch = base64::engine::general_purpose::STANDARD
            .decode(answer["response"]["patch"].as_str().unwrap())
            .unwrap();
        let mut patch: Vec<Value> = serde_json::from_slice(&patch).unwrap();
        // Two independent adds, in whatever order the guest's JSON maps
        // keep keys (a build with serde_json's preserve_order lists them
        // as written, one without it sorted).
        patch.sort_by_key(|op| op["path"].as_str().unwrap_or_default().to_string());
        assert_eq!(
            patch,
            [
                json!({"op": "add", "path": "/spec/port", "value": 80}),
                json!({"op": "add", "path": "/spec/replicas", "value": 1}),
            ]
        );

        let mut bad = app.clone();
        bad["spec"]["replicas"] = json!(1000);
        let (answer, ok) = rekon_admit(dir.path(), module, &review("UPDATE", bad), &[]);
        assert!(!ok, "a denial exits non-zero");
        assert_eq!(answer["allowed"], false);
        assert_eq!(answer["code"], 422);
        assert_eq!(answer["webhook"], "validate-apps.app.rekon.dev");
        assert_eq!(
            answer["reviews"].as_array().unwrap().len(),
            2,
            "mutating, then validating"
        );

        let (answer, ok) = rekon_admit(dir.path(), module, &review("CREATE", app.clone()), &[]);
        assert!(ok);
        assert_eq!(
            answer["object"]["spec"],
            json!({"image": "nginx", "replicas": 1, "port": 80})
        );

        let mut v1 = app.clone();
        v1["spec"] = json!({"image": "nginx", "replicas": 2, "port": 8080});
        let conversion = |objects: Vec<Value>, to: &str| {
            json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                   "request": {"uid": "c-1", "desiredAPIVersion": to, "objects": objects}})
        };
        let (answer, ok) = rekon_admit(
            dir.path(),
            module,
            &conversion(vec![v1.clone()], "demo.rekon.dev/v2"),
            &[],
        );
        assert!(ok, "{answer}");
        let v2 = answer["response"]["convertedObjects"][0].clone();
        assert_eq!(v2["apiVersion"], "demo.rekon.dev/v2");
        assert_eq!(
            v2["spec"],
            json!({"replicas": 2, "container": {"image": "nginx", "port": 8080}})
        );
        assert_eq!(v2["metadata"], v1["metadata"]);
        let (back, ok) = rekon_admit(
            dir.path(),
            module,
            &conversion(vec![v2], "demo.rekon.dev/v1"),
            &[],
        );
        assert!(ok, "{back}");
        assert_eq!(
            back["response"]["convertedObjects"][0], v1,
            "nothing is lost"
        );

        let (answer, ok) = rekon_admit(
            dir.path(),
            module,
            &conversion(vec![v1], "demo.rekon.dev/v9"),
            &[],
        );
        assert!(!ok);
        assert_eq!(answer["response"]["result"]["status"], "Failure");
        assert!(
            answer["response"]["result"]["message"]
                .as_str()
                .unwrap()
                .contains("no version demo.rekon.dev/v9"),
            "{answer}"
        );
    }
}

mod https {
    //! The webhook server of `rekon run`, driven the way kube-apiserver
    //! drives it: the configuration the host published says where to go
    //! and which CA to trust; AdmissionReview and ConversionReview JSON go
    //! over TLS, verified against that caBundle.
    use super::*;
    use std::io::{Read as _, Write as _};
    use support::{Env, post_tls as post};

    fn metrics(port: u16) -> String {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        stream
            .write_all(b"GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n")
            .unwrap();
        let mut text = String::new();
        stream.read_to_string(&mut text).unwrap();
        text
    }

    fn app_review(uid: &str, operation: &str, spec: Value) -> Value {
        json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {
                "uid": uid,
                "kind": {"group": "demo.rekon.dev", "version": "v1", "kind": "App"},
                "resource": {"group": "demo.rekon.dev", "version": "v1", "resource": "apps"},
                "name": "web", "namespace": "default", "operation": operation,
                "userInfo": {"username": "system:admin"},
                "object": {"apiVersion": "demo.rekon.dev/v1", "kind": "App",
                           "metadata": {"name": "web", "namespace": "default", "uid": "u-1"},
                           "spec": spec},
            }
        })
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn reviews_over_tls_verified_against_the_published_ca_bundle() {
        let mut env = Env::new().await;
        env.apply_file(&support::path("guests/app/manifests/crd.yaml"));
        let modules = tempfile::tempdir().unwrap();
        std::fs::copy(rekon_test_artifacts::APP, modules.path().join("app.wasm")).unwrap();
        let (port, metrics_port) = (support::free_port(), support::free_port());
        let addr = format!("127.0.0.1:{port}");
        let url = format!("https://127.0.0.1:{port}");
        let metrics_addr = format!("127.0.0.1:{metrics_port}");
        env.run(
            &[],
            &[
                "--modules",
                modules.path().to_str().unwrap(),
                "--webhook-addr",
                &addr,
                "--webhook-url",
                &url,
                "--metrics-addr",
                &metrics_addr,
            ],
        );
        let validating = env
            .webhook_configuration("ValidatingWebhookConfiguration", "app")
            .await;
        let webhook = &validating["webhooks"][0];
        assert_eq!(webhook["name"], "validate-apps.app.rekon.dev");
        assert_eq!(
            webhook["clientConfig"]["url"],
            format!("{url}/validate/app/validate-apps")
        );
        assert_eq!(webhook["failurePolicy"], "Fail");
        assert_eq!(webhook["sideEffects"], "None");
        assert_eq!(webhook["admissionReviewVersions"], json!(["v1"]));
        assert_eq!(
            webhook["rules"],
            json!([{"apiGroups": ["demo.rekon.dev"], "apiVersions": ["v1"],
                    "operations": ["CREATE", "UPDATE"], "resources": ["apps"], "scope": "*"}])
        );
        let mutating = env
            .webhook_configuration("MutatingWebhookConfiguration", "app")
            .await;
        assert_eq!(
            mutating["webhooks"][0]["clientConfig"]["url"],
            format!("{url}/mutate/app/default-apps")
        );
        let crd = env
            .wait("the CRD's conversion", || {
                env.get(
                    "apiextensions.k8s.io",
                    "v1",
                    "CustomResourceDefinition",
                    None,
                    "apps.demo.rekon.dev",
                )
                .filter(|crd| crd["spec"]["conversion"]["strategy"] == "Webhook")
            })
            .await;
        assert_eq!(
            crd["spec"]["conversion"]["webhook"]["clientConfig"]["url"],
            format!("{url}/convert/app")
        );
        let ca = base64::engine::general_purpose::STANDARD
            .decode(webhook["clientConfig"]["caBundle"].as_str().unwrap())
            .unwrap();
        assert!(
            env.get("", "v1", "Secret", Some("default"), "rekon-webhook-tls")
                .is_some(),
            "the CA and serving certificate are kept in a Secret"
        );

        let (code, denied) = post(
            port,
            &ca,
            "/validate/app/validate-apps",
            &app_review("r-1", "CREATE", json!({"image": "nginx", "replicas": 1000})),
        )
        .unwrap();
        assert_eq!(code, 200);
        assert_eq!(denied["kind"], "AdmissionReview");
        assert_eq!(denied["response"]["uid"], "r-1");
        assert_eq!(denied["response"]["allowed"], false);
        assert_eq!(
            denied["response"]["status"]["message"],
            "spec.replicas must be between 0 and 100, not 1000"
        );
        let (_, patched) = post(
            port,
            &ca,
            "/mutate/app/default-apps",
            &app_review("r-2", "CREATE", json!({"image": "nginx"})),
        )
        .unwrap();
        assert_eq!(patched["response"]["allowed"], true);
        assert_eq!(patched["response"]["patchType"], "JSONPatch");
        let conversion = json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "request": {"uid": "c-1", "desiredAPIVersion": "demo.rekon.dev/v2", "objects": [
                {"apiVersion": "demo.rekon.dev/v1", "kind": "App",
                 "metadata": {"name": "web", "namespace": "default", "uid": "u-1"},
                 "spec": {"image": "nginx", "replicas": 2, "port": 80}}]}
        });
        let (_, converted) = post(port, &ca, "/convert/app", &conversion).unwrap();
        assert_eq!(converted["response"]["result"]["status"], "Success");
        assert_eq!(
            converted["response"]["convertedObjects"][0]["spec"]["container"]["image"],
            "nginx"
        );

        // A client trusting another CA refuses the server.
        let other = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_string()]).unwrap();
        let refused = post(
            port,
            other.cert.pem().as_bytes(),
            "/validate/app/validate-apps",
            &app_review("r-3", "CREATE", json!({})),
        );
        assert!(refused.is_err(), "{refused:?}");

        let text = metrics(metrics_port);
        for line in [
            "rekon_admission_requests_total{module=\"app\",webhook=\"validate-apps\",result=\"denied\"} 1",
            "rekon_admission_requests_total{module=\"app\",webhook=\"default-apps\",result=\"patched\"} 1",
            "rekon_admission_requests_total{module=\"app\",webhook=\"convert\",result=\"converted\"} 1",
        ] {
            assert!(text.contains(line), "{line} in:\n{text}");
        }
        assert!(text.contains(
            "rekon_admission_duration_seconds_count{module=\"app\",webhook=\"validate-apps\"} 1"
        ));

        // The module goes: so do its configurations.
        std::fs::remove_file(modules.path().join("app.wasm")).unwrap();
        env.wait("the configurations to go", || {
            env.get(
                "admissionregistration.k8s.io",
                "v1",
                "ValidatingWebhookConfiguration",
                None,
                "rekon-app",
            )
            .is_none()
            .then_some(())
        })
        .await;
        env.wait("the CRD's conversion to be None again", || {
            env.get(
                "apiextensions.k8s.io",
                "v1",
                "CustomResourceDefinition",
                None,
                "apps.demo.rekon.dev",
            )
            .filter(|crd| {
                crd["spec"]["conversion"]["strategy"] == "None"
                    && crd["spec"]["conversion"]["webhook"].is_null()
            })
        })
        .await;
        let (_, gone) = post(
            port,
            &ca,
            "/validate/app/validate-apps",
            &app_review("r-4", "CREATE", json!({})),
        )
        .unwrap();
        assert_eq!(gone["response"]["status"]["code"], 404, "{gone}");
    }
}

mod languages {
    //! One webhook, three languages: the ConfigMap sync's validation of
    //! sources, built in Rust, JavaScript and Python, answers alike.
    use super::*;

    fn shared_cache() -> String {
        path("target/rekon-test-cache")
    }

    fn admit(module: &str, review: &Value) -> (Value, bool) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("review.json");
        std::fs::write(&file, review.to_string()).unwrap();
        let output = Command::new(env!("CARGO_BIN_EXE_rekon"))
            .args(["admit", module, "--request", file.to_str().unwrap()])
            .env("REKON_CACHE_DIR", shared_cache())
            .output()
            .unwrap();
        let answer = serde_json::from_str(&stdout(&output))
            .unwrap_or_else(|e| panic!("{e}: {} {}", stdout(&output), stderr(&output)));
        (answer, output.status.success())
    }

    fn source(annotation: Option<&str>) -> Value {
        let mut cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "settings", "namespace": "team-a",
                         "labels": {"rekon.dev/sync": "true"}},
            "data": {"k": "v"}});
        if let Some(targets) = annotation {
            cm["metadata"]["annotations"] = json!({"rekon.dev/sync-to": targets});
        }
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "s-1", "operation": "CREATE",
                "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
                "resource": {"group": "", "version": "v1", "resource": "configmaps"},
                "name": "settings", "namespace": "team-a", "userInfo": {"username": "u"},
                "object": cm}})
    }

    fn same_answers(module: &str) {
        let (missing, ok) = admit(module, &source(None));
        assert!(!ok, "{module}: {missing}");
        assert_eq!(missing["code"], 422, "{module}: {missing}");
        assert_eq!(
            missing["message"],
            "admission webhook \"validate-sources.configmap-sync.rekon.dev\" denied the request: \
             rekon.dev/sync-to must name at least one namespace"
                .replace(
                    "configmap-sync",
                    missing["webhook"]
                        .as_str()
                        .unwrap()
                        .split('.')
                        .nth(1)
                        .unwrap()
                ),
            "{module}"
        );
        let (bad, _) = admit(module, &source(Some("team-b, Team_C")));
        assert!(
            bad["message"]
                .as_str()
                .unwrap()
                .ends_with("rekon.dev/sync-to: \"Team_C\" is not a namespace name"),
            "{module}: {bad}"
        );
        let (own, ok) = admit(module, &source(Some("team-a,team-b")));
        assert!(ok, "{module}: {own}");
        assert_eq!(
            own["warnings"],
            json!(["rekon.dev/sync-to lists the source's own namespace team-a: it is skipped"]),
            "{module}"
        );
        let (fine, ok) = admit(module, &source(Some("team-b")));
        assert!(ok && fine["warnings"] == json!([]), "{module}: {fine}");
        // Not a source: no webhook is called.
        let mut plain = source(None);
        plain["request"]["object"]["metadata"]["labels"] = json!({});
        let (plain, ok) = admit(module, &plain);
        assert!(ok && plain["reviews"] == json!([]), "{module}: {plain}");
        // No conversion: the module's reason is the answer.
        let conversion = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "request": {"uid": "c", "desiredAPIVersion": "demo.rekon.dev/v2", "objects": [{}]}});
        let (answer, ok) = admit(module, &conversion);
        assert!(!ok);
        let message = answer["response"]["result"]["message"].as_str().unwrap();
        assert!(
            message.contains("convert") && message.contains("demo.rekon.dev/v2"),
            "{module}: {answer}"
        );
    }

    #[test]
    fn rust_javascript_and_python_validate_sources_alike() {
        same_answers(rekon_test_artifacts::CONFIGMAP_SYNC);
        same_answers(rekon_test_artifacts::built(
            rekon_test_artifacts::CONFIGMAP_SYNC_JS,
        ));
        same_answers(rekon_test_artifacts::built(
            rekon_test_artifacts::CONFIGMAP_SYNC_PY,
        ));
    }
}

mod lifecycle {
    //! What the replicas publish for their webhooks belongs to them all:
    //! `rekon run` replicas with leader election, over the in-memory API
    //! server. A stopping replica withdraws nothing; a changed or deleted
    //! configuration comes back at once; a module's configurations go only
    //! once no replica serves it; an uninstall takes everything back.
    use super::*;
    use support::{Env, post_tls as post};

    const ADMISSION: &str = "admissionregistration.k8s.io";

    /// No drain: nothing calls the Service here.
    const WEBHOOKS: &[&str] = &[
        "--webhook-service",
        "default/rekon-webhooks:443",
        "--webhook-drain",
        "0s",
    ];

    /// A replica serving the modules of `dir` as `identity`; returns its
    /// index and webhook port.
    fn replica(env: &mut Env, dir: &Path, identity: &str, extra: &[&str]) -> (usize, u16) {
        let port = support::free_port();
        let addr = format!("127.0.0.1:{port}");
        let mut args = support::LEASE.to_vec();
        args.extend(WEBHOOKS);
        args.extend(["--identity", identity, "--modules", dir.to_str().unwrap()]);
        args.extend(["--webhook-addr", &addr]);
        args.extend(extra);
        (env.run(&[], &args), port)
    }

    fn module_dir(env: &Env, name: &str) -> PathBuf {
        let dir = env.dir.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(rekon_test_artifacts::APP, dir.join("app.wasm")).unwrap();
        dir
    }

    fn configuration(env: &Env, kind: &str) -> Option<Value> {
        env.get(ADMISSION, "v1", kind, None, "rekon-app")
    }

    fn conversion(env: &Env) -> Value {
        env.get(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            None,
            "apps.demo.rekon.dev",
        )
        .unwrap()["spec"]["conversion"]
            .clone()
    }

    fn leader(env: &Env) -> Option<String> {
        env.lease_holder("rekon-leader")
    }

    /// An environment with the App CRD and two replicas' module folders,
    /// replica `a` started and leading, everything published.
    async fn two_replicas_a_leading() -> (Env, PathBuf, PathBuf, usize) {
        let mut env = Env::new().await;
        env.use_shared_cache();
        env.apply_file(&support::path("guests/app/manifests/crd.yaml"));
        let (dir_a, dir_b) = (module_dir(&env, "a"), module_dir(&env, "b"));
        let (a, _) = replica(&mut env, &dir_a, "a", &[]);
        env.wait("a to lead", || leader(&env).filter(|l| l == "a"))
            .await;
        env.wait_long("the configurations", || all_published(&env).then_some(()))
            .await;
        (env, dir_a, dir_b, a)
    }

    /// Waits until `identity`'s webhook-server Lease names the module.
    async fn serving(env: &Env, identity: &str) {
        let name = format!("rekon-webhooks-{identity}");
        env.wait(&format!("{name} naming the module"), || {
            env.get("coordination.k8s.io", "v1", "Lease", Some("default"), &name)
                .filter(|l| l["metadata"]["annotations"]["rekon.dev/webhook-modules"] == "app")
        })
        .await;
    }

    /// Everything published is there: both configurations, the conversion.
    fn all_published(env: &Env) -> bool {
        configuration(env, "ValidatingWebhookConfiguration").is_some()
            && configuration(env, "MutatingWebhookConfiguration").is_some()
            && conversion(env)["strategy"] == "Webhook"
    }

    /// Stops host `index` with SIGTERM, checking that everything stays
    /// published at every moment of its shutdown.
    async fn stop_watching(env: &mut Env, index: usize) {
        env.signal(index, "TERM");
        let started = Instant::now();
        loop {
            assert!(
                all_published(env),
                "something was withdrawn while host {index} stopped\n{}",
                env.log()
            );
            if env.hosts[index].try_wait().unwrap().is_some() {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "host {index} does not stop"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // And for a while after.
        for _ in 0..40 {
            assert!(
                all_published(env),
                "something was withdrawn after host {index} stopped"
            );
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn replicas_come_and_go_and_what_they_publish_stays() {
        let (mut env, dir_a, dir_b, a) = two_replicas_a_leading().await;
        let (b, _) = replica(&mut env, &dir_b, "b", &[]);
        serving(&env, "b").await;
        let published = configuration(&env, "ValidatingWebhookConfiguration").unwrap();
        let selector = &published["webhooks"][0]["namespaceSelector"];
        assert_eq!(
            selector,
            &json!({"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn",
                    "values": ["kube-node-lease", "kube-public", "kube-system"]}]}),
            "{published}"
        );

        // The leader stops (a rolling restart, a scale-down): nothing goes.
        stop_watching(&mut env, a).await;
        env.wait("b to lead", || leader(&env).filter(|l| l == "b"))
            .await;
        assert!(
            env.get(
                "coordination.k8s.io",
                "v1",
                "Lease",
                Some("default"),
                "rekon-webhooks-a"
            )
            .is_none(),
            "a stopped replica leaves the webhook servers"
        );

        // Deleted or changed by someone else: applied again at once.
        let validating = env.resource(ADMISSION, "v1", "ValidatingWebhookConfiguration");
        env.store()
            .delete(&validating, None, "rekon-app", None)
            .unwrap();
        let deleted = Instant::now();
        env.wait("the configuration back", || {
            configuration(&env, "ValidatingWebhookConfiguration")
        })
        .await;
        assert!(
            deleted.elapsed() < Duration::from_secs(5),
            "back in {:?}",
            deleted.elapsed()
        );
        let mut changed = configuration(&env, "ValidatingWebhookConfiguration").unwrap();
        changed["webhooks"][0]["failurePolicy"] = json!("Ignore");
        env.apply(changed);
        env.wait("the failure policy back", || {
            configuration(&env, "ValidatingWebhookConfiguration")
                .filter(|c| c["webhooks"][0]["failurePolicy"] == "Fail")
        })
        .await;
        let crds = env.resource("apiextensions.k8s.io", "v1", "CustomResourceDefinition");
        let mut crd = env.store().get(&crds, None, "apps.demo.rekon.dev").unwrap();
        crd["spec"]["conversion"] = json!({"strategy": "None"});
        env.apply(crd);
        env.wait("the conversion back", || {
            (conversion(&env)["strategy"] == "Webhook").then_some(())
        })
        .await;

        // A replica comes back without the module: the module stays
        // published while b serves it...
        std::fs::remove_file(dir_a.join("app.wasm")).unwrap();
        let (a2, _) = replica(&mut env, &dir_a, "a", &[]);
        env.signal(b, "TERM");
        env.wait("a to lead again", || leader(&env).filter(|l| l == "a"))
            .await;
        tokio::time::sleep(Duration::from_secs(1)).await;
        // (b is gone: now nobody serves the module.)
        env.wait(
            "the configurations withdrawn once nobody serves the module",
            || {
                (configuration(&env, "ValidatingWebhookConfiguration").is_none()
                    && configuration(&env, "MutatingWebhookConfiguration").is_none()
                    && conversion(&env) == json!({"strategy": "None"}))
                .then_some(())
            },
        )
        .await;
        assert!(
            env.log_of(a2).contains("no replica serves the module"),
            "{}",
            env.log_of(a2)
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_module_is_withdrawn_only_once_no_replica_serves_it() {
        let (mut env, dir_a, dir_b, a) = two_replicas_a_leading().await;
        replica(&mut env, &dir_b, "b", &[]);
        serving(&env, "b").await;
        // The leader loses the module; b still serves it.
        std::fs::remove_file(dir_a.join("app.wasm")).unwrap();
        env.wait("a to unload the module", || {
            env.log_of(a).contains("module unloaded").then_some(())
        })
        .await;
        for _ in 0..60 {
            assert!(all_published(&env), "withdrawn while b serves the module");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // b loses it too: now it goes.
        std::fs::remove_file(dir_b.join("app.wasm")).unwrap();
        env.wait("the configurations withdrawn", || {
            (configuration(&env, "ValidatingWebhookConfiguration").is_none()
                && configuration(&env, "MutatingWebhookConfiguration").is_none()
                && conversion(&env) == json!({"strategy": "None"}))
            .then_some(())
        })
        .await;
    }

    fn delete_review(
        uid: &str,
        resource: &str,
        name: &str,
        namespace: Option<&str>,
        dry_run: bool,
    ) -> Value {
        json!({
            "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {
                "uid": uid, "operation": "DELETE", "dryRun": dry_run,
                "kind": {"group": "", "version": "v1", "kind": "ServiceAccount"},
                "resource": {"group": "", "version": "v1", "resource": resource},
                "name": name, "namespace": namespace,
                "userInfo": {"username": "admin"},
            }
        })
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn deleting_what_rekon_runs_as_takes_back_what_it_published() {
        let mut env = Env::new().await;
        env.use_shared_cache();
        env.apply_file(&support::path("guests/app/manifests/crd.yaml"));
        env.apply(json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "rekon", "namespace": "default"}}));
        env.apply(
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "rekon-system"}}),
        );
        let dir = module_dir(&env, "a");
        let (host, port) = replica(
            &mut env,
            &dir,
            "a",
            &[
                "--uninstall-trigger",
                "serviceaccount/rekon",
                "--uninstall-trigger",
                "namespace/rekon-system",
                // One that never existed: no sign of an uninstall.
                "--uninstall-trigger",
                "clusterrolebinding/missing",
            ],
        );
        env.wait_long("the configurations", || all_published(&env).then_some(()))
            .await;
        let uninstall = env
            .wait("the uninstall webhook", || {
                env.get(
                    ADMISSION,
                    "v1",
                    "ValidatingWebhookConfiguration",
                    None,
                    "rekon.uninstall",
                )
            })
            .await;
        let webhook = &uninstall["webhooks"][0];
        assert_eq!(webhook["failurePolicy"], "Ignore");
        assert_eq!(webhook["clientConfig"]["service"]["path"], "/uninstall");
        let ca = base64::engine::general_purpose::STANDARD
            .decode(webhook["clientConfig"]["caBundle"].as_str().unwrap())
            .unwrap();

        // A dry run, or another object, changes nothing.
        for review in [
            delete_review("u-1", "serviceaccounts", "rekon", Some("default"), true),
            delete_review("u-2", "serviceaccounts", "other", Some("default"), false),
            delete_review("u-3", "serviceaccounts", "rekon", Some("team-a"), false),
        ] {
            let (code, answer) = post(port, &ca, "/uninstall", &review).unwrap();
            assert_eq!(code, 200);
            assert_eq!(answer["response"]["allowed"], true);
            assert!(answer["response"]["warnings"].is_null(), "{answer}");
        }
        assert!(all_published(&env));

        // The real deletion of the ServiceAccount: allowed, after rekon took
        // back everything it published.
        let (_, answer) = post(
            port,
            &ca,
            "/uninstall",
            &delete_review("u-4", "serviceaccounts", "rekon", Some("default"), false),
        )
        .unwrap();
        assert_eq!(answer["response"]["uid"], "u-4");
        assert_eq!(answer["response"]["allowed"], true);
        assert_eq!(
            answer["response"]["warnings"][0],
            "rekon is uninstalled: removed 3 webhook configuration(s), turned off the conversion of 1 CRD(s), deleted 2 Lease(s)",
            "{answer}"
        );
        assert!(configuration(&env, "ValidatingWebhookConfiguration").is_none());
        assert!(configuration(&env, "MutatingWebhookConfiguration").is_none());
        assert!(
            env.get(
                ADMISSION,
                "v1",
                "ValidatingWebhookConfiguration",
                None,
                "rekon.uninstall"
            )
            .is_none()
        );
        assert_eq!(conversion(&env), json!({"strategy": "None"}));
        // And it publishes nothing again.
        tokio::time::sleep(Duration::from_secs(3)).await;
        assert!(
            configuration(&env, "ValidatingWebhookConfiguration").is_none(),
            "{}",
            env.log_of(host)
        );
        assert_eq!(conversion(&env), json!({"strategy": "None"}));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn rekon_uninstall_cleans_up_after_a_rekon_that_is_gone() {
        let mut env = Env::new().await;
        env.use_shared_cache();
        env.apply_file(&support::path("guests/app/manifests/crd.yaml"));
        let dir = module_dir(&env, "a");
        let (host, _) = replica(&mut env, &dir, "a", &[]);
        env.wait_long("the configurations", || all_published(&env).then_some(()))
            .await;
        // It dies without a word.
        env.signal(host, "KILL");
        let _ = env.hosts[host].wait();
        assert!(all_published(&env));
        let uninstall = |args: &[&str]| {
            Command::new(env!("CARGO_BIN_EXE_rekon"))
                .arg("uninstall")
                .args(args)
                .arg("--kubeconfig")
                .arg(&env.kubeconfig)
                .output()
                .unwrap()
        };
        let output = uninstall(&["--namespace", "default"]);
        assert!(output.status.success(), "{}", stderr(&output));
        let said = stdout(&output);
        for line in [
            "deleted: MutatingWebhookConfiguration/rekon-app",
            "deleted: ValidatingWebhookConfiguration/rekon-app",
            "conversion set to None: apps.demo.rekon.dev",
            "deleted Lease: rekon-leader",
        ] {
            assert!(said.lines().any(|l| l == line), "{line} in:\n{said}");
        }
        assert!(configuration(&env, "ValidatingWebhookConfiguration").is_none());
        assert_eq!(conversion(&env), json!({"strategy": "None"}));
        let again = uninstall(&["--namespace", "default"]);
        assert_eq!(
            stdout(&again).trim(),
            "nothing of rekon's left for service default/rekon-webhooks:443"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_module_whose_webhooks_no_server_serves_is_reported() {
        let mut env = Env::new().await;
        env.use_shared_cache();
        env.apply_file(&support::path("guests/app/manifests/crd.yaml"));
        env.run(&[rekon_test_artifacts::APP], &[]);
        let event = env
            .event("the WebhooksNotServed Event", |e| {
                e["reason"] == "WebhooksNotServed"
            })
            .await;
        assert_eq!(event["regarding"]["kind"], "CustomResourceDefinition");
        assert_eq!(event["regarding"]["name"], "apps.demo.rekon.dev");
        assert!(
            event["note"].as_str().unwrap().starts_with(
                "module app converts App.demo.rekon.dev between v1, v2, but no webhook server runs"
            ),
            "{event}"
        );
        let log = env.log();
        assert!(log.contains("the CRD's conversion stays None"), "{log}");
        assert!(
            log.contains("declares admission webhooks (validate-apps, default-apps)"),
            "{log}"
        );
        let checked = Command::new(env!("CARGO_BIN_EXE_rekon"))
            .args(["check", rekon_test_artifacts::APP])
            .output()
            .unwrap();
        let report: Value = serde_json::from_slice(&checked.stdout).unwrap();
        assert_eq!(report["warnings"].as_array().unwrap().len(), 2, "{report}");
        assert!(stderr(&checked).contains("warning: module app converts"));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_operator_sets_failure_policy_timeout_and_selectors_per_webhook() {
        let mut env = Env::new().await;
        env.use_shared_cache();
        env.apply_file(&support::path("guests/app/manifests/crd.yaml"));
        let config = env.dir.path().join("rekon.yaml");
        std::fs::write(
            &config,
            "excludeNamespaces: [ops]\nmodules:\n  app:\n    webhooks:\n      validate-apps:\n        \
             failurePolicy: Ignore\n        timeoutSeconds: 5\n        namespaceSelector: env in (prod)\n",
        )
        .unwrap();
        let dir = module_dir(&env, "a");
        replica(&mut env, &dir, "a", &["--config", config.to_str().unwrap()]);
        let validating = env
            .webhook_configuration("ValidatingWebhookConfiguration", "app")
            .await;
        let webhook = &validating["webhooks"][0];
        assert_eq!(webhook["failurePolicy"], "Ignore");
        assert_eq!(webhook["timeoutSeconds"], 5);
        assert_eq!(
            webhook["namespaceSelector"],
            json!({"matchExpressions": [
                {"key": "env", "operator": "In", "values": ["prod"]},
                {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["ops"]},
            ]})
        );
        let mutating = env
            .webhook_configuration("MutatingWebhookConfiguration", "app")
            .await;
        assert_eq!(mutating["webhooks"][0]["failurePolicy"], "Fail");
    }
}
