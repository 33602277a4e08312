//! The HTTP endpoints: `/metrics`, `/healthz`, `/livez` and `/readyz`.

use std::net::SocketAddr;
use std::sync::Arc;

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::{Request, Response, StatusCode};

use super::Metrics;

/// Serves `/metrics`, `/healthz` and `/readyz` on `addr` until the task is
/// aborted. Returns the bound address (port 0 picks one).
pub(crate) async fn serve(
    addr: SocketAddr,
    metrics: Arc<Metrics>,
) -> std::io::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let task = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let metrics = metrics.clone();
            tokio::spawn(async move {
                let service =
                    hyper::service::service_fn(move |request: Request<hyper::body::Incoming>| {
                        let metrics = metrics.clone();
                        async move { Ok::<_, std::convert::Infallible>(answer(&request, &metrics)) }
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

fn answer(request: &Request<hyper::body::Incoming>, metrics: &Metrics) -> Response<Full<Bytes>> {
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
        path if request.method() == hyper::Method::POST && path.starts_with("/rollout/") => {
            let rest = &path["/rollout/".len()..];
            let command = match rest.rsplit_once('/') {
                Some((module, "promote")) => Some((module, crate::rollout::Command::Promote)),
                Some((module, "abort")) => Some((module, crate::rollout::Command::Abort)),
                _ => None,
            };
            match command {
                Some((module, command)) => match metrics.rollouts.command(module, command) {
                    Ok(()) => (
                        StatusCode::ACCEPTED,
                        "text/plain",
                        format!("{command:?} of module {module:?}'s shadow under way\n"),
                    ),
                    Err(why) => (StatusCode::CONFLICT, "text/plain", format!("{why}\n")),
                },
                None => (
                    StatusCode::NOT_FOUND,
                    "text/plain",
                    "POST /rollout/<module>/promote or /rollout/<module>/abort\n".to_string(),
                ),
            }
        }
        path if path.starts_with("/rollout/") => {
            let module = &path["/rollout/".len()..];
            match metrics.rollout_status(module) {
                Some(status) => (StatusCode::OK, "text/plain", status),
                None => (
                    StatusCode::NOT_FOUND,
                    "text/plain",
                    format!(
                        "module {module:?} has no shadow (mark a version `rekon.dev/rollout: shadow`, or name one in `shadow:` of the operator configuration)\n"
                    ),
                ),
            }
        }
        path => match path
            .strip_prefix("/recordings/")
            .map(|module| (module, metrics.recorded(module)))
        {
            Some((_, Some(traces))) => (StatusCode::OK, "application/jsonl", traces),
            Some((module, None)) => (
                StatusCode::NOT_FOUND,
                "text/plain",
                format!(
                    "the reconciles of module {module:?} are not recorded (see `record:` in the operator configuration)\n"
                ),
            ),
            None => (
                StatusCode::NOT_FOUND,
                "text/plain",
                "not found\n".to_string(),
            ),
        },
    };
    Response::builder()
        .status(status)
        .header("content-type", content_type)
        .body(Full::new(Bytes::from(body)))
        .expect("a valid response")
}
