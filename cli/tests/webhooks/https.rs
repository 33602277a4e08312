//! The webhook server of `rekon run`, driven the way kube-apiserver
//! drives it: the configuration the host published says where to go
//! and which CA to trust; AdmissionReview and ConversionReview JSON go
//! over TLS, verified against that caBundle.

use std::io::{Read as _, Write as _};

use base64::Engine as _;
use serde_json::{Value, json};

use crate::support::{self, Env, post_tls as post};

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
