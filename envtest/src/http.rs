//! A blocking HTTP client, over TLS (a real API server) or plain TCP
//! (rekon's in-memory one), that returns each answer whole: status,
//! headers (warnings included) and body, whatever the status. It is
//! kube-rs's client (`kube::Client::send`, the raw request) driven by a
//! runtime of its own, so tests and tools that are not async can use it.

use std::sync::Arc;

use http_body_util::BodyExt as _;

/// One answer.
#[derive(Clone, Debug)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The headers, names in lower case, in the order they came.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Response {
    /// The values of one header.
    pub fn header(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// The body as JSON (`Null` when it is not JSON).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

/// A client of one server. Cheap to clone.
#[derive(Clone)]
pub struct Client {
    url: String,
    client: kube::Client,
    /// The runtime the client's requests run on (a thread of its own).
    runtime: Arc<tokio::runtime::Runtime>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A client of `url` (`http://` or `https://` host and port), with a
    /// bearer token, trusting `ca_pem` for `https`.
    ///
    /// # Panics
    /// On a URL that is not one, or a CA that is not PEM: both are the
    /// caller's mistakes, not conditions to handle.
    pub fn new(url: &str, token: Option<&str>, ca_pem: Option<&str>) -> Client {
        Client::build(url, token, ca_pem, true)
    }

    /// [`Client::new`] without kube's retries: each request is sent once,
    /// and an answer the server asks to retry (a 429) is the answer
    /// returned, as a comparison of two servers needs.
    pub fn without_retries(url: &str, token: Option<&str>, ca_pem: Option<&str>) -> Client {
        Client::build(url, token, ca_pem, false)
    }

    fn build(url: &str, token: Option<&str>, ca_pem: Option<&str>, retry: bool) -> Client {
        let mut config =
            kube::Config::new(url.parse().expect("a URL with a scheme, host and port"));
        config.default_retry = retry;
        if let Some(pem) = ca_pem {
            use rustls_pki_types::pem::PemObject as _;
            config.root_cert = Some(
                rustls_pki_types::CertificateDer::pem_slice_iter(pem.as_bytes())
                    .map(|cert| cert.expect("a PEM certificate").to_vec())
                    .collect(),
            );
        }
        config.auth_info.token = token.map(|t| t.to_string().into());
        config.headers.push((
            http::header::USER_AGENT,
            http::HeaderValue::from_static("rekon-envtest"),
        ));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("rekon-envtest-http")
            .enable_all()
            .build()
            .expect("a runtime for the HTTP client");
        let client = {
            let _entered = runtime.enter();
            kube::Client::try_from(config).expect("a client of the server")
        };
        Client {
            url: url.to_string(),
            client,
            runtime: Arc::new(runtime),
        }
    }

    /// Sends one request; `path` includes the query.
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
        // JSON unless the caller asks for something else (a Table).
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

#[cfg(test)]
mod tests {
    use std::io::{Read as _, Write as _};

    use super::{Client, Response};

    /// A server of one connection that answers with `answer` as written.
    fn serve_once(answer: &'static [u8]) -> (String, std::thread::JoinHandle<String>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let server = std::thread::spawn(move || {
            let (mut socket, _) = listener.accept().unwrap();
            let mut request = Vec::new();
            let mut buffer = [0u8; 4096];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = socket.read(&mut buffer).unwrap();
                request.extend_from_slice(&buffer[..n]);
            }
            socket.write_all(answer).unwrap();
            String::from_utf8_lossy(&request).into_owned()
        });
        (url, server)
    }

    #[test]
    fn an_answer_comes_whole_whatever_its_status_and_encoding() {
        let (url, server) = serve_once(
            b"HTTP/1.1 422 Unprocessable Entity\r\nContent-Type: application/json\r\nWarning: 299 - \"x\"\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{\"a\"\r\n3\r\n:2}\r\n0\r\n\r\n",
        );
        let client = Client::new(&url, Some("t0k3n"), None);
        let answer = client
            .request(
                "POST",
                "/api/v1/namespaces?fieldManager=x",
                Some("application/json"),
                Some(b"{}"),
            )
            .unwrap();
        assert_eq!(answer.status, 422);
        assert_eq!(answer.header("warning"), ["299 - \"x\""]);
        assert_eq!(answer.json()["a"], 2);
        let request = server.join().unwrap();
        assert!(
            request.starts_with("POST /api/v1/namespaces?fieldManager=x HTTP/1.1"),
            "{request}"
        );
        let lower = request.to_ascii_lowercase();
        assert!(lower.contains("authorization: bearer t0k3n"), "{request}");
        assert!(
            lower.contains("content-type: application/json"),
            "{request}"
        );
    }

    #[test]
    fn an_answer_gives_its_headers_and_json() {
        let answer = Response {
            status: 201,
            headers: vec![
                ("content-type".into(), "application/json".into()),
                ("warning".into(), "299 - \"x\"".into()),
            ],
            body: br#"{"a":1}"#.to_vec(),
        };
        assert_eq!(answer.header("warning"), ["299 - \"x\""]);
        assert!(answer.header("etag").is_empty());
        assert_eq!(answer.json()["a"], 1);
        let text = Response {
            body: b"not json".to_vec(),
            ..answer
        };
        assert!(text.json().is_null());
    }
}
