//! The webhook server: AdmissionReview and ConversionReview v1 over HTTPS
//! (HTTP/2 or HTTP/1.1), answered by the modules serving webhooks.
//!
//! Paths: `POST /mutate/<module>/<webhook>`, `POST /validate/<module>/<webhook>`,
//! `POST /convert/<module>`, `POST /uninstall` (the uninstall webhook, see
//! [`crate::uninstall`]); `GET /readyz` answers `ok` once listening.
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
    pub uninstall: Option<(crate::uninstall::Triggers, super::Endpoint)>,
}

/// Serves webhooks over TLS on `addr` until the task is aborted; returns
/// the bound address (port 0 picks one).
pub(crate) async fn serve(
    addr: SocketAddr,
    tls: rustls::ServerConfig,
    served: Served,
) -> std::io::Result<(SocketAddr, tokio::task::JoinHandle<()>)> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
    let task = tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let _ = stream.set_nodelay(true);
            let (acceptor, served) = (acceptor.clone(), served.clone());
            tokio::spawn(async move {
                let stream = match acceptor.accept(stream).await {
                    Ok(stream) => stream,
                    Err(error) => {
                        tracing::debug!(%error, "webhook TLS handshake failed");
                        return;
                    }
                };
                let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                    let served = served.clone();
                    async move { Ok::<_, std::convert::Infallible>(answer(request, &served).await) }
                });
                let io = hyper_util::rt::TokioIo::new(stream);
                let _ = hyper_util::server::conn::auto::Builder::new(
                    hyper_util::rt::TokioExecutor::new(),
                )
                .serve_connection(io, service)
                .await;
            });
        }
    });
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
        let uninstall =
            crate::uninstall::Uninstall::new(client, triggers.namespace(), endpoint.clone());
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
