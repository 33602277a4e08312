//! Metrics and probes as documented: health and readiness, the served
//! metric names, a 404 elsewhere.

use crate::support::{self, Env, app, free_port, http_status, path, reconciled};

/// The metric names the README lists (its Metrics table).
fn documented_metrics() -> Vec<String> {
    let readme = std::fs::read_to_string(path("README.md")).unwrap();
    let section = readme
        .split("### Metrics")
        .nth(1)
        .expect("the README has a Metrics section");
    let section = section.split("\n#").next().unwrap();
    let mut names: Vec<String> = section
        .split('`')
        .filter(|t| t.starts_with("rekon_"))
        .map(str::to_string)
        .collect();
    names.dedup();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_and_probes_behave_as_documented() {
    let mut env = Env::new().await;
    env.apply_file(&path("guests/app/manifests/crd.yaml"));
    let garbage = env.dir.path().join("garbage.wasm");
    std::fs::write(&garbage, b"not a module").unwrap();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let webhook_port = free_port();
    let webhook_addr = format!("127.0.0.1:{webhook_port}");
    let webhook_url = format!("https://{webhook_addr}");
    env.run(
        &[
            rekon_test_artifacts::APP,
            rekon_test_artifacts::MISBEHAVE,
            garbage.to_str().unwrap(),
        ],
        &[
            "--metrics-addr",
            &addr,
            "--webhook-addr",
            &webhook_addr,
            "--webhook-url",
            &webhook_url,
        ],
    );
    env.wait("/healthz", || {
        http_status(port, "/healthz").filter(|r| r.0 == 200)
    })
    .await;
    env.wait("/readyz", || {
        http_status(port, "/readyz").filter(|r| r.0 == 200)
    })
    .await;
    env.apply(app("web", 1));
    env.apply(serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": { "name": "trap", "namespace": "default" },
    }));
    reconciled(&env, "web").await;
    // One admission review, as the API server would send it.
    let configuration = env
        .webhook_configuration("ValidatingWebhookConfiguration", "app")
        .await;
    let ca = base64::Engine::decode(
        &base64::engine::general_purpose::STANDARD,
        configuration["webhooks"][0]["clientConfig"]["caBundle"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    let review = serde_json::json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": "u", "operation": "CREATE",
            "kind": {"group": "demo.rekon.dev", "version": "v1", "kind": "App"},
            "resource": {"group": "demo.rekon.dev", "version": "v1", "resource": "apps"},
            "name": "x", "namespace": "default", "userInfo": {"username": "u"},
            "object": app("x", 1)},
    });
    support::post_tls(webhook_port, &ca, "/validate/app/validate-apps", &review).unwrap();
    let metrics = env
        .wait("a guest failure counted", || {
            http_status(port, "/metrics").map(|r| r.1).filter(|m| {
                m.contains("rekon_guest_failures_total{") && m.contains("rekon_events_total{")
            })
        })
        .await;
    let documented = documented_metrics();
    assert!(documented.len() >= 10, "{documented:?}");
    for name in &documented {
        // Histograms are served as name_bucket, name_sum and name_count.
        let served = metrics.lines().any(|l| {
            l.strip_prefix(name.as_str()).is_some_and(|rest| {
                rest.starts_with('{') || rest.starts_with(' ') || rest.starts_with("_bucket{")
            })
        });
        assert!(served, "{name} is documented but not served:\n{metrics}");
    }
    let line = |prefix: &str| -> Option<f64> {
        metrics
            .lines()
            .find(|l| l.starts_with(prefix))?
            .rsplit(' ')
            .next()?
            .parse()
            .ok()
    };
    // Counted under the version that served them (as rekon_module_info).
    let done = metrics
        .lines()
        .find(|l| {
            l.starts_with("rekon_reconciles_total{module=\"app\",version=\"0.1.0\",digest=\"")
                && l.contains("result=\"done\"}")
        })
        .unwrap_or_else(|| panic!("no reconcile of app counted:\n{metrics}"));
    let digest = done
        .split("digest=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    assert!(
        metrics.contains(&format!(
            "rekon_module_info{{module=\"app\",version=\"0.1.0\",digest=\"{digest}\"}} 1"
        )),
        "{metrics}"
    );
    assert!(line(done).is_some_and(|n| n >= 1.0), "{done}");
    assert_eq!(
        line("rekon_module_load_failures_total{reason=\"not_wasm\"}"),
        Some(1.0)
    );
    assert_eq!(line("rekon_leader "), Some(1.0));
    assert_eq!(
        line("rekon_module_leader{module=\"app\"}"),
        Some(1.0),
        "{metrics}"
    );
    let info: Vec<&str> = metrics
        .lines()
        .filter(|l| l.starts_with("rekon_module_info{"))
        .collect();
    assert_eq!(info.len(), 2, "{info:?}");
    assert_eq!(http_status(port, "/nothing").map(|r| r.0), Some(404));
}
