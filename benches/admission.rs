//! `cargo bench --bench admission`: what one admission review costs, for
//! the `app` module's validating webhook and a 2 KB App. Prints one JSON
//! object per line: `{"bench":"admission","metric":...,"value":...,"unit":...}`.
//!
//! - `inprocess_p50_ms`, `inprocess_p99_ms`: one review answered in the
//!   process (AdmissionReview JSON in, answer out, a fresh instance);
//! - `reviews_per_s`, `https_p50_ms`, `https_p99_ms`: reviews over HTTPS on
//!   loopback to a running host's webhook server, from 2 client threads,
//!   each on its own keep-alive TLS connection (as kube-apiserver keeps
//!   its connections to a webhook).
//!
//! Run without `--bench` (as `cargo test --all-targets` does) it makes one
//! quick pass, to check it still works.

mod common;

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rekon_host::runtime::Phase;
use rekon_host::webhook::{Certificate, Endpoint, ServingCert, WebhookServerConfig};
use rekon_host::{Cluster, Engine, Host, Module};
use rekon_offline::MemoryCluster;
use serde_json::{Value, json};

fn emit(metric: &str, value: f64, unit: &str) {
    common::emit("admission", metric, value, unit);
}

/// The AdmissionReview of a create of an App of about 2 KB.
fn review() -> Value {
    let mut app = json!({
        "apiVersion": "demo.rekon.dev/v1", "kind": "App",
        "metadata": {"name": "web", "namespace": "default",
            "labels": {"app.kubernetes.io/name": "web", "team": "payments"}, "annotations": {}},
        "spec": {"image": "registry.example/shop/web:1.27.3", "replicas": 3, "port": 8080},
    });
    let padding = 2048usize.saturating_sub(app.to_string().len() + 40);
    app["metadata"]["annotations"]["demo.rekon.dev/notes"] = json!("n".repeat(padding));
    json!({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {
            "uid": "bench",
            "kind": {"group": "demo.rekon.dev", "version": "v1", "kind": "App"},
            "resource": {"group": "demo.rekon.dev", "version": "v1", "resource": "apps"},
            "name": "web", "namespace": "default", "operation": "CREATE",
            "userInfo": {"username": "bench"}, "object": app,
        }
    })
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

/// One client: a keep-alive TLS connection, reviews sent one after the
/// other until `until`; each latency in milliseconds.
fn client(port: u16, ca_pem: String, body: String, until: Instant) -> Vec<f64> {
    use rustls_pki_types::pem::PemObject as _;
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_pki_types::CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(cert.expect("a PEM CA")).expect("a CA");
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = rustls_pki_types::ServerName::try_from("127.0.0.1").expect("a server name");
    let connection = rustls::ClientConnection::new(Arc::new(config), name).expect("a TLS client");
    let socket = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connecting");
    socket.set_nodelay(true).expect("nodelay");
    let mut tls = BufReader::new(rustls::StreamOwned::new(connection, socket));
    let request = format!(
        "POST /validate/app/validate-apps HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut latencies = Vec::new();
    while Instant::now() < until {
        let started = Instant::now();
        tls.get_mut()
            .write_all(request.as_bytes())
            .expect("sending a review");
        let mut length = 0;
        let mut line = String::new();
        loop {
            line.clear();
            tls.read_line(&mut line).expect("reading the answer");
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((key, value)) = header.split_once(':')
                && key.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().expect("a length");
            }
        }
        let mut answer = vec![0; length];
        tls.read_exact(&mut answer).expect("reading the body");
        latencies.push(started.elapsed().as_secs_f64() * 1e3);
        assert!(
            answer.starts_with(b"{\"apiVersion\":\"admission.k8s.io/v1\""),
            "{}",
            String::from_utf8_lossy(&answer)
        );
    }
    latencies
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    let (iterations, duration) = if full {
        (5_000, Duration::from_secs(5))
    } else {
        (20, Duration::from_millis(200))
    };
    let bytes = std::fs::read(rekon_test_artifacts::APP).expect("the app guest is built");
    let cache = tempfile::tempdir().expect("a directory");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let review = review();

    runtime.block_on(async {
        let engine =
            Engine::new(common::steady_state(cache.path().join("cache"))).expect("an engine");
        let module = Module::load(&engine, &bytes).await.expect("the app loads");
        let cluster: Arc<dyn Cluster> = Arc::new(MemoryCluster::default());
        let mut latencies = Vec::with_capacity(iterations);
        for i in 0..iterations + iterations / 10 {
            let started = Instant::now();
            let (answer, _) = rekon_host::webhook::admit(
                &module,
                cluster.clone(),
                Phase::Validating,
                "validate-apps",
                &review,
            )
            .await;
            if i >= iterations / 10 {
                latencies.push(started.elapsed().as_secs_f64() * 1e3);
            }
            assert_eq!(answer["response"]["allowed"], true, "{answer}");
        }
        latencies.sort_by(f64::total_cmp);
        emit("inprocess_p50_ms", percentile(&latencies, 0.5), "ms");
        emit("inprocess_p99_ms", percentile(&latencies, 0.99), "ms");
    });

    // A host serving the webhook over HTTPS (its certificate from a
    // directory: nothing is published, no cluster is needed).
    let cert = ServingCert::self_signed(&["127.0.0.1".to_string()]).expect("a certificate");
    let dir = cache.path().join("tls");
    std::fs::create_dir_all(&dir).expect("a directory");
    std::fs::write(dir.join("tls.crt"), &cert.cert_pem).expect("tls.crt");
    std::fs::write(dir.join("tls.key"), &cert.key_pem).expect("tls.key");
    std::fs::write(dir.join("ca.crt"), &cert.ca_pem).expect("ca.crt");
    let (host, server, port) = runtime.block_on(async {
        let server = rekon_apiserver::ApiServer::builder()
            .start()
            .await
            .expect("an API server for the host's client");
        let kubeconfig = kube::config::Kubeconfig::from_yaml(&server.kubeconfig()).expect("yaml");
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
            .await
            .expect("a kube config");
        let client = kube::Client::try_from(config).expect("a client");
        let mut webhooks = WebhookServerConfig::new(
            "127.0.0.1:0".parse().expect("an address"),
            Endpoint::Url("https://127.0.0.1".into()),
            "default",
        );
        webhooks.certificate = Certificate::Dir(dir.clone());
        webhooks.publish = false;
        let host = Host::builder()
            .client(client)
            .engine_config(common::steady_state(cache.path().join("cache")))
            .module("app.wasm", bytes.clone())
            .webhooks(webhooks)
            .start()
            .await
            .expect("the host starts");
        let port = host.webhook_server().expect("serving").0.port();
        (host, server, port)
    });
    let body = review.to_string();
    let until = Instant::now() + duration;
    let started = Instant::now();
    let clients: Vec<_> = (0..2)
        .map(|_| {
            let (ca, body) = (cert.ca_pem.clone(), body.clone());
            std::thread::spawn(move || client(port, ca, body, until))
        })
        .collect();
    let mut latencies: Vec<f64> = clients
        .into_iter()
        .flat_map(|c| c.join().expect("a client"))
        .collect();
    let elapsed = started.elapsed().as_secs_f64();
    latencies.sort_by(f64::total_cmp);
    emit("reviews_per_s", latencies.len() as f64 / elapsed, "1/s");
    emit("https_p50_ms", percentile(&latencies, 0.5), "ms");
    emit("https_p99_ms", percentile(&latencies, 0.99), "ms");
    runtime.block_on(async {
        host.shutdown().await;
        server.shutdown().await;
    });
}
