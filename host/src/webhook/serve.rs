//! The webhook server: AdmissionReview and ConversionReview v1 over HTTPS
//! (HTTP/2 or HTTP/1.1), answered by the modules serving webhooks.
//!
//! Paths: `POST /mutate/<module>/<webhook>`, `POST /validate/<module>/<webhook>`,
//! `POST /convert/<module>`, `POST /uninstall` (the uninstall webhook, see
//! [`uninstall`](crate::webhook::uninstall)); `GET /readyz` answers `ok` once listening.
//! A request for a module or webhook that is not loaded (any more) is
//! answered as its failure policy would have it: refused with 404 for
//! admission, a `Failure` for conversion.

use std::net::SocketAddr;
use std::sync::Arc;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};

use super::registry::WebhookModules;
use super::review;
use crate::cluster::Cluster;
use crate::runtime::Phase;
use crate::telemetry::Metrics;

/// Largest review body read (kube-apiserver's objects are at most ~3 MiB).
const MAX_BODY: usize = 8 << 20;

/// What the server answers with.
#[derive(Clone)]
pub(crate) struct Served {
    pub modules: WebhookModules,
    pub cluster: Arc<dyn Cluster>,
    pub metrics: Arc<Metrics>,
    /// The uninstall webhook's: the triggers, and where this
    /// installation's webhooks are reached.
    pub uninstall: Option<(crate::webhook::uninstall::Triggers, super::Endpoint)>,
}

/// Where a webhook server is in its shutdown.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Stage {
    Serving,
    /// The host stops: every request is still answered, and an HTTP/1
    /// connection is closed after each answer (`Connection: close`), so the
    /// API server opens new ones, to the replicas that stay. (Closing an
    /// idle connection now would race with the API server reusing it.)
    Draining,
    /// The drain is over: no new connection is taken, and every connection
    /// goes once its requests in flight are answered (an HTTP/2 GOAWAY,
    /// whose unanswered requests the API server sends again elsewhere).
    Closing,
}

/// Winds a webhook server's connections down gracefully: no request the
/// API server sent is cut off by the process exiting.
#[derive(Clone)]
pub(crate) struct Closer {
    stage: Arc<tokio::sync::watch::Sender<Stage>>,
    open: Arc<tokio::sync::watch::Sender<usize>>,
}

impl Closer {
    /// The host stops: connections are retired as they are used.
    pub(crate) fn drain(&self) {
        self.stage.send_if_modified(|s| {
            let changed = *s < Stage::Draining;
            *s = (*s).max(Stage::Draining);
            changed
        });
    }

    /// Every connection goes once answered; returns when none is left, or
    /// after `grace`.
    pub(crate) async fn close(&self, grace: std::time::Duration) {
        self.stage.send_replace(Stage::Closing);
        let mut open = self.open.subscribe();
        let _ = tokio::time::timeout(grace, open.wait_for(|n| *n == 0)).await;
    }
}

/// Counts a connection as open while it lives.
struct Open(Arc<tokio::sync::watch::Sender<usize>>);

impl Open {
    fn new(open: Arc<tokio::sync::watch::Sender<usize>>) -> Open {
        open.send_modify(|n| *n += 1);
        Open(open)
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n -= 1);
    }
}

/// Serves webhooks over TLS on `addr` until the task is aborted; returns
/// the bound address (port 0 picks one) and what winds it down.
pub(crate) async fn serve(
    addr: SocketAddr,
    tls: rustls::ServerConfig,
    served: Served,
) -> std::io::Result<(SocketAddr, tokio::task::JoinHandle<()>, Closer)> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
    let closer = Closer {
        stage: Arc::new(tokio::sync::watch::Sender::new(Stage::Serving)),
        open: Arc::new(tokio::sync::watch::Sender::new(0)),
    };
    let connections = closer.clone();
    let task = tokio::spawn(async move {
        let mut closing = connections.stage.subscribe();
        loop {
            // Once closing, no new connection is taken.
            let accepted = tokio::select! {
                accepted = listener.accept() => accepted,
                _ = closing.wait_for(|s| *s == Stage::Closing) => return,
            };
            let Ok((stream, _)) = accepted else {
                continue;
            };
            let _ = stream.set_nodelay(true);
            let (acceptor, served) = (acceptor.clone(), served.clone());
            let open = Open::new(connections.open.clone());
            let mut stage = connections.stage.subscribe();
            tokio::spawn(async move {
                let _open = open;
                let stream = match acceptor.accept(stream).await {
                    Ok(stream) => stream,
                    Err(error) => {
                        tracing::debug!(%error, "webhook TLS handshake failed");
                        return;
                    }
                };
                let draining = stage.clone();
                let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                    let served = served.clone();
                    // Draining: an HTTP/1 connection is closed once this
                    // answer is sent, so the API server's next request
                    // opens a new one (to the replicas that stay).
                    let close = *draining.borrow() >= Stage::Draining
                        && request.version() <= hyper::Version::HTTP_11;
                    async move {
                        let mut response = answer(request, &served).await;
                        if close {
                            response.headers_mut().insert(
                                hyper::header::CONNECTION,
                                hyper::header::HeaderValue::from_static("close"),
                            );
                        }
                        Ok::<_, std::convert::Infallible>(response)
                    }
                });
                let io = hyper_util::rt::TokioIo::new(stream);
                let builder = hyper_util::server::conn::auto::Builder::new(
                    hyper_util::rt::TokioExecutor::new(),
                );
                let connection = builder.serve_connection(io, service);
                tokio::pin!(connection);
                let mut told = false;
                loop {
                    tokio::select! {
                        _ = connection.as_mut() => return,
                        changed = stage.changed(), if !told => {
                            if changed.is_err() || *stage.borrow_and_update() == Stage::Closing {
                                connection.as_mut().graceful_shutdown();
                                told = true;
                            }
                        }
                    }
                }
            });
        }
    });
    Ok((bound, task, closer))
}

/// Serves the admission and conversion reviews of `modules` over TLS on
/// `addr` (port 0 picks one) until the task is aborted, their guests'
/// calls reaching `cluster`: the host's webhook server without the
/// publishing, for a tool that points the API server at it itself (`rekon
/// test` on a real API server). Returns the bound address.
pub async fn serve_reviews(
    addr: SocketAddr,
    tls: rustls::ServerConfig,
    modules: WebhookModules,
    cluster: Arc<dyn Cluster>,
    metrics: Arc<Metrics>,
) -> std::io::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    let served = Served {
        modules,
        cluster,
        metrics,
        uninstall: None,
    };
    let (bound, task, _) = serve(addr, tls, served).await?;
    Ok((bound, task))
}

fn respond(status: StatusCode, body: &Value) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", "application/json")
        .body(Full::new(Bytes::from(body.to_string())))
        .expect("a valid response")
}

fn text(status: StatusCode, message: &str) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header("content-type", "text/plain")
        .body(Full::new(Bytes::from(format!("{message}\n"))))
        .expect("a valid response")
}

async fn answer(request: Request<Incoming>, served: &Served) -> Response<Full<Bytes>> {
    let path = request.uri().path().to_string();
    if request.method() == Method::GET && (path == "/readyz" || path == "/healthz") {
        return text(StatusCode::OK, "ok");
    }
    if request.method() != Method::POST {
        return text(StatusCode::METHOD_NOT_ALLOWED, "webhooks take POST");
    }
    let body = match Limited::new(request.into_body(), MAX_BODY).collect().await {
        Ok(body) => body.to_bytes(),
        Err(error) => return text(StatusCode::PAYLOAD_TOO_LARGE, &error.to_string()),
    };
    let review: Value = match serde_json::from_slice(&body) {
        Ok(review) => review,
        Err(error) => {
            return text(
                StatusCode::BAD_REQUEST,
                &format!("the body is not JSON: {error}"),
            );
        }
    };
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    match parts.as_slice() {
        [verb @ ("mutate" | "validate"), module, webhook] => {
            let phase = if *verb == "mutate" {
                Phase::Mutating
            } else {
                Phase::Validating
            };
            let Some(module) = served.modules.get(module) else {
                let uid = review.pointer("/request/uid").cloned().unwrap_or_default();
                return respond(
                    StatusCode::OK,
                    &json!({
                        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                        "response": {"uid": uid, "allowed": false, "status": {
                            "metadata": {}, "status": "Failure", "code": 404, "reason": "NotFound",
                            "message": format!("module {module:?} is not loaded on this replica"),
                        }},
                    }),
                );
            };
            let answer = review::admit_counted(
                &served.metrics,
                &module,
                served.cluster.clone(),
                phase,
                webhook,
                &review,
            )
            .await;
            respond(StatusCode::OK, &answer)
        }
        ["convert", module] => {
            let Some(module) = served.modules.get(module) else {
                let uid = review.pointer("/request/uid").cloned().unwrap_or_default();
                return respond(
                    StatusCode::OK,
                    &json!({
                        "apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                        "response": {"uid": uid, "convertedObjects": [], "result": {
                            "metadata": {}, "status": "Failure",
                            "message": format!("module {module:?} is not loaded on this replica"),
                        }},
                    }),
                );
            };
            let answer =
                review::convert_counted(&served.metrics, &module, served.cluster.clone(), &review)
                    .await;
            respond(StatusCode::OK, &answer)
        }
        ["uninstall"] => respond(StatusCode::OK, &uninstall(served, &review).await),
        _ => text(StatusCode::NOT_FOUND, "not a webhook path"),
    }
}

/// The uninstall webhook: the deletion of a trigger is rekon's uninstall,
/// seen while its permissions still hold. Takes back what rekon
/// published, then lets the deletion through (always: it never blocks
/// one), with a warning saying what was done.
async fn uninstall(served: &Served, review: &Value) -> Value {
    let uid = review.pointer("/request/uid").cloned().unwrap_or_default();
    let mut response = json!({"uid": uid, "allowed": true});
    if let Some((triggers, endpoint)) = &served.uninstall
        && triggers.matches(review)
        && let Some(client) = triggers.client()
    {
        let deleted = format!(
            "{} {}",
            review["request"]["resource"]["resource"]
                .as_str()
                .unwrap_or_default(),
            review["request"]["name"].as_str().unwrap_or_default()
        );
        tracing::warn!(%deleted, "rekon is being uninstalled: taking back its webhook configurations, CRD conversions and Leases");
        triggers.set_uninstalled();
        let uninstall = crate::webhook::uninstall::Uninstall::new(
            client,
            triggers.namespace(),
            endpoint.clone(),
        );
        let warning = match uninstall.run().await {
            Ok(report) => {
                tracing::info!(configurations = ?report.configurations, conversions = ?report.conversions, leases = ?report.leases, "uninstalled");
                format!(
                    "rekon is uninstalled: removed {} webhook configuration(s), turned off the conversion of {} CRD(s), deleted {} Lease(s)",
                    report.configurations.len(),
                    report.conversions.len(),
                    report.leases.len()
                )
            }
            Err(error) => {
                let error = crate::loader::error_chain(&error);
                tracing::error!(%error, "cannot take back everything rekon published");
                format!(
                    "rekon cannot take back everything it published ({error}): run `rekon uninstall`"
                )
            }
        };
        response["warnings"] = json!([warning]);
    }
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})
}
