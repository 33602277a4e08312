//! A small blocking HTTP/1.1 client, over TLS (a real API server) or
//! plain TCP (rekon's in-memory one), that returns each answer whole:
//! status, headers (warnings included) and body. One connection per
//! request, so no answer depends on an earlier one.

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

/// One answer.
#[derive(Clone, Debug)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The headers, names in lower case, in the order they came.
    pub headers: Vec<(String, String)>,
    /// The body (chunked transfer decoded).
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

/// A client of one server.
#[derive(Clone)]
pub struct Client {
    host: String,
    port: u16,
    token: Option<String>,
    tls: Option<Arc<rustls::ClientConfig>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("tls", &self.tls.is_some())
            .finish_non_exhaustive()
    }
}

impl Client {
    /// A client of `url` (`http://` or `https://` host and port), with a
    /// bearer token, trusting `ca_pem` for `https`.
    ///
    /// # Panics
    /// On a URL without a host and port, or a CA that is not PEM: both are
    /// the caller's mistakes, not conditions to handle.
    pub fn new(url: &str, token: Option<&str>, ca_pem: Option<&str>) -> Client {
        let (scheme, rest) = url.split_once("://").expect("a URL with a scheme");
        let authority = rest.split('/').next().unwrap_or_default();
        let (host, port) = authority.rsplit_once(':').expect("a URL with a port");
        let tls = (scheme == "https").then(|| {
            use rustls_pki_types::pem::PemObject as _;
            let mut roots = rustls::RootCertStore::empty();
            for cert in rustls_pki_types::CertificateDer::pem_slice_iter(
                ca_pem.unwrap_or_default().as_bytes(),
            ) {
                roots
                    .add(cert.expect("a PEM certificate"))
                    .expect("a CA certificate");
            }
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            Arc::new(
                rustls::ClientConfig::builder_with_provider(provider)
                    .with_safe_default_protocol_versions()
                    .expect("rustls' default protocol versions")
                    .with_root_certificates(roots)
                    .with_no_client_auth(),
            )
        });
        Client {
            host: host.to_string(),
            port: port.parse().expect("a port number"),
            token: token.map(str::to_string),
            tls,
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
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}:{}\r\nAccept: application/json\r\nUser-Agent: rekon-envtest\r\nConnection: close\r\n",
            self.host, self.port
        );
        if let Some(token) = &self.token {
            head.push_str(&format!("Authorization: Bearer {token}\r\n"));
        }
        if let Some(content_type) = content_type {
            head.push_str(&format!("Content-Type: {content_type}\r\n"));
        }
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        let body = body.unwrap_or_default();
        head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        let mut request = head.into_bytes();
        request.extend_from_slice(body);
        let socket = TcpStream::connect((self.host.as_str(), self.port))?;
        socket.set_read_timeout(Some(Duration::from_secs(60)))?;
        let mut answer = Vec::new();
        match &self.tls {
            Some(config) => {
                let name = rustls_pki_types::ServerName::try_from(self.host.clone())
                    .map_err(|e| std::io::Error::other(e.to_string()))?;
                let connection = rustls::ClientConnection::new(config.clone(), name)
                    .map_err(std::io::Error::other)?;
                let mut tls = rustls::StreamOwned::new(connection, socket);
                tls.write_all(&request)?;
                match tls.read_to_end(&mut answer) {
                    Ok(_) => {}
                    // A peer closing without close_notify still answered.
                    Err(e)
                        if e.kind() == std::io::ErrorKind::UnexpectedEof && !answer.is_empty() => {}
                    Err(e) => return Err(e),
                }
            }
            None => {
                let mut socket = socket;
                socket.write_all(&request)?;
                socket.read_to_end(&mut answer)?;
            }
        }
        parse(&answer)
    }
}

fn parse(answer: &[u8]) -> std::io::Result<Response> {
    let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
    let split = answer
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| bad("no end of headers"))?;
    let head = String::from_utf8_lossy(&answer[..split]);
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| bad("no status"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let raw = &answer[split + 4..];
    let chunked = headers
        .iter()
        .any(|(n, v)| n == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"));
    let body = if chunked { dechunk(raw)? } else { raw.to_vec() };
    Ok(Response {
        status,
        headers,
        body,
    })
}

fn dechunk(mut raw: &[u8]) -> std::io::Result<Vec<u8>> {
    let bad = || std::io::Error::new(std::io::ErrorKind::InvalidData, "bad chunked body");
    let mut body = Vec::new();
    loop {
        let line_end = raw.windows(2).position(|w| w == b"\r\n").ok_or_else(bad)?;
        let size_text = String::from_utf8_lossy(&raw[..line_end]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| bad())?;
        raw = &raw[line_end + 2..];
        if size == 0 {
            return Ok(body);
        }
        body.extend_from_slice(raw.get(..size).ok_or_else(bad)?);
        raw = raw.get(size + 2..).ok_or_else(bad)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_parse_whole_and_chunked() {
        let plain = parse(b"HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nWarning: 299 - \"x\"\r\n\r\n{\"a\":1}").unwrap();
        assert_eq!(plain.status, 201);
        assert_eq!(plain.header("warning"), ["299 - \"x\""]);
        assert_eq!(plain.json()["a"], 1);
        let chunked = parse(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n{\"a\"\r\n3\r\n:2}\r\n0\r\n\r\n",
        )
        .unwrap();
        assert_eq!(chunked.json()["a"], 2);
        assert!(parse(b"HTTP/1.1 200 OK\r\n").is_err());
    }
}
