//! The suite's HTTP client: envtest's blocking client (kube-rs's, driven by
//! a runtime of its own), without kube's retries. Each step is sent once
//! to both servers: an answer the server asks to retry (a 429 of an
//! eviction its disruption budget refuses) is the answer compared, not
//! the last of fifteen tries over minutes.

use std::sync::Arc;

use base64::Engine as _;
use http_body_util::BodyExt as _;
use rekon_envtest::http::Response;

/// A client of one server.
#[derive(Clone)]
pub struct Client {
    client: kube::Client,
    runtime: Arc<tokio::runtime::Runtime>,
}

impl Client {
    /// A client of the server at `url`: a bearer `token` and the `ca_pem`
    /// its certificate is signed by for a real one, none for the embedded
    /// one.
    pub fn new(url: &str, token: Option<&str>, ca_pem: Option<&str>) -> Client {
        let mut config =
            kube::Config::new(url.parse().expect("a URL with a scheme, host and port"));
        config.default_retry = false;
        if let Some(pem) = ca_pem {
            config.root_cert = Some(der_certificates(pem));
        }
        config.auth_info.token = token.map(|t| t.to_string().into());
        config.headers.push((
            http::header::USER_AGENT,
            http::HeaderValue::from_static("rekon-envtest"),
        ));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("differential-http")
            .enable_all()
            .build()
            .expect("a runtime for the HTTP client");
        let client = {
            let _entered = runtime.enter();
            kube::Client::try_from(config).expect("a client of the server")
        };
        Client {
            client,
            runtime: Arc::new(runtime),
        }
    }

    /// Sends one request, JSON accepted; the answer whole, whatever its
    /// status.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        content_type: Option<&str>,
        body: Option<&[u8]>,
    ) -> std::io::Result<Response> {
        self.request_with(method, path, content_type, body, &[])
    }

    /// [`Client::request`] with more headers.
    pub fn request_with(
        &self,
        method: &str,
        path: &str,
        content_type: Option<&str>,
        body: Option<&[u8]>,
        headers: &[(&str, &str)],
    ) -> std::io::Result<Response> {
        let mut request = http::Request::builder().method(method).uri(path);
        if !headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("accept"))
        {
            request = request.header(http::header::ACCEPT, "application/json");
        }
        if let Some(content_type) = content_type {
            request = request.header(http::header::CONTENT_TYPE, content_type);
        }
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let request = request
            .body(kube::client::Body::from(body.unwrap_or_default().to_vec()))
            .map_err(std::io::Error::other)?;
        let client = self.client.clone();
        self.runtime.block_on(async move {
            let answer = client.send(request).await.map_err(std::io::Error::other)?;
            let status = answer.status().as_u16();
            let headers = answer
                .headers()
                .iter()
                .map(|(n, v)| {
                    (
                        n.as_str().to_ascii_lowercase(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect();
            let body = answer
                .into_body()
                .collect()
                .await
                .map_err(std::io::Error::other)?
                .to_bytes()
                .to_vec();
            Ok(Response {
                status,
                headers,
                body,
            })
        })
    }
}

/// The DER bytes of each certificate of a PEM bundle.
fn der_certificates(pem: &str) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut block: Option<String> = None;
    for line in pem.lines().map(str::trim) {
        if line.starts_with("-----BEGIN CERTIFICATE") {
            block = Some(String::new());
        } else if line.starts_with("-----END CERTIFICATE") {
            if let Some(text) = block.take() {
                out.push(
                    base64::engine::general_purpose::STANDARD
                        .decode(text)
                        .expect("a certificate in base64"),
                );
            }
        } else if let Some(text) = block.as_mut() {
            text.push_str(line);
        }
    }
    out
}
