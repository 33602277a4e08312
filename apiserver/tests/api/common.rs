//! Shared helpers: a started server with a kube client, raw HTTP, polling.

use std::net::SocketAddr;

use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::TcpStream;

use kube::Client;
use kube::config::{KubeConfigOptions, Kubeconfig};
use rekon_apiserver::{ApiServer, RunningServer};

/// A running server and a kube client for it.
pub struct TestServer {
    pub server: RunningServer,
    pub client: Client,
    pub dir: tempfile::TempDir,
}

impl TestServer {
    pub fn kubeconfig_path(&self) -> std::path::PathBuf {
        self.dir.path().join("kubeconfig")
    }
}

pub async fn start() -> TestServer {
    start_with(ApiServer::builder()).await
}

pub async fn start_with(builder: rekon_apiserver::ApiServerBuilder) -> TestServer {
    let server = builder.start().await.expect("server starts");
    let dir = tempfile::tempdir().expect("tempdir");
    server
        .write_kubeconfig(dir.path().join("kubeconfig"))
        .expect("kubeconfig written");
    let kc = Kubeconfig::from_yaml(&server.kubeconfig()).expect("kubeconfig parses");
    let config = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .expect("kube accepts the kubeconfig");
    let client = Client::try_from(config).expect("client");
    TestServer {
        server,
        client,
        dir,
    }
}

/// A raw HTTP/1.1 exchange: (status, headers lower-cased, body).
pub async fn raw(
    addr: SocketAddr,
    method: &str,
    path: &str,
    content_type: &str,
    body: &str,
) -> (u16, String, String) {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nUser-Agent: raw-test/1.0\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.expect("write");
    let mut out = String::new();
    tokio::time::timeout(Duration::from_secs(10), s.read_to_string(&mut out))
        .await
        .expect("answered in time")
        .expect("read");
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        dechunk(body)
    } else {
        body.to_string()
    };
    (status, head.to_ascii_lowercase(), body)
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = s.split_once("\r\n") {
        let n = usize::from_str_radix(size.trim(), 16).unwrap_or(0);
        if n == 0 || rest.len() < n {
            break;
        }
        out.push_str(&rest[..n]);
        s = rest[n..].trim_start_matches("\r\n");
    }
    out
}

pub async fn get(addr: SocketAddr, path: &str) -> (u16, String, String) {
    raw(addr, "GET", path, "application/json", "").await
}

/// Polls `f` until it returns true or 10 s pass.
pub async fn eventually<F, Fut>(what: &str, mut f: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if f().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("timed out waiting for {what}");
}
