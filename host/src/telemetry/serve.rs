//! The HTTP endpoints: `/metrics`, `/healthz`, `/livez` and `/readyz`, and
//! the paths a room above serves beside them ([`Endpoints`]).

use std::net::SocketAddr;
use std::sync::Arc;

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Method, Request, Response, StatusCode};

use super::Metrics;

/// An answer of the metrics port: status, content type, body.
pub type Answer = (StatusCode, &'static str, String);

/// Paths served on the metrics port beside the metrics and health checks,
/// by a room above (the rollout's admin endpoints).
pub trait Endpoints: Send + Sync {
    /// The answer to `method` on `path`; `None` when the path is not one of
    /// these endpoints'.
    fn answer(&self, method: &Method, path: &str) -> Option<Answer>;
}

/// Serves `/metrics`, `/healthz` and `/readyz`, and `endpoints`, on `addr`
/// until the task is aborted. Returns the bound address (port 0 picks one).
pub(crate) async fn serve(
    addr: SocketAddr,
    metrics: Arc<Metrics>,
    endpoints: Arc<dyn Endpoints>,
) -> std::io::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let task = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let (metrics, endpoints) = (metrics.clone(), endpoints.clone());
            tokio::spawn(async move {
                let service =
                    hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
                        let (metrics, endpoints) = (metrics.clone(), endpoints.clone());
                        async move {
                            Ok::<_, std::convert::Infallible>(answer(
                                &request,
                                &metrics,
                                &*endpoints,
                            ))
                        }
                    });
                let io = hyper_util::rt::TokioIo::new(stream);
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(io, service)
                    .await;
            });
        }
    });
    Ok((bound, task))
}

fn answer(
    request: &Request<hyper::body::Incoming>,
    metrics: &Metrics,
    endpoints: &dyn Endpoints,
) -> Response<Full<Bytes>> {
    let (status, content_type, body) = match request.uri().path() {
        "/metrics" => (
            StatusCode::OK,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
            metrics.encode(),
        ),
        "/healthz" | "/livez" => (StatusCode::OK, "text/plain", "ok\n".to_string()),
        "/readyz" if metrics.is_ready() => (StatusCode::OK, "text/plain", "ok\n".to_string()),
        "/readyz" if metrics.is_stopping() => (
            StatusCode::SERVICE_UNAVAILABLE,
            "text/plain",
            "not ready: shutting down\n".to_string(),
        ),
        "/readyz" => (
            StatusCode::SERVICE_UNAVAILABLE,
            "text/plain",
            "not ready: caches syncing or modules loading\n".to_string(),
        ),
        path => endpoints.answer(request.method(), path).unwrap_or_else(|| {
            (
                StatusCode::NOT_FOUND,
                "text/plain",
                "not found\n".to_string(),
            )
        }),
    };
    Response::builder()
        .status(status)
        .header("content-type", content_type)
        .body(Full::new(Bytes::from(body)))
        .expect("a valid response")
}
