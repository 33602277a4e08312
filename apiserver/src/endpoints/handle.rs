//! One request: the request log, injected faults and delays, the control
//! endpoints, then its route dispatched.

use std::sync::Arc;

use http::{Request, Response, header};
use hyper::body::Incoming;
#[cfg(feature = "faults")]
use rekon_store::Status;

#[cfg(feature = "faults")]
use super::control::control;
use super::dispatch::dispatch;
#[cfg(feature = "faults")]
use super::dispatch::read_body;
use super::routes::{Route, route};
use super::state::State;
use crate::faults::RequestRecord;
use crate::handlers::request::verb_of;
#[cfg(feature = "faults")]
use crate::respond::status_response;
use crate::respond::{Body, Ctx, Media, Query, header_text, negotiate};

/// Answers one request, and logs it.
pub(crate) async fn handle(state: Arc<State>, req: Request<Incoming>) -> Response<Body> {
    let method = req.method().clone();
    let raw_query = req.uri().query().unwrap_or("").to_string();
    let (path, query) = legacy_watch(req.uri().path(), Query::parse(&raw_query));
    let user_agent = header_text(&req, header::USER_AGENT);
    let accept = header_text(&req, header::ACCEPT);
    // What a resource's endpoint would answer; a header none of whose
    // clauses is acceptable there is refused by the handlers (406), and
    // answered as JSON (or YAML, if asked first) elsewhere.
    let media = negotiate(&accept, true).unwrap_or(Media {
        yaml: accept.starts_with("application/yaml"),
        ..Media::default()
    });
    let ctx = Ctx {
        pretty: query.get("pretty") == Some("true")
            || ["curl", "Wget", "Mozilla/5.0"]
                .iter()
                .any(|p| user_agent.starts_with(p)),
        yaml: media.yaml,
        table: media.table,
        metadata_only: media.metadata_only,
        metadata_as: media.metadata_as,
        accept,
    };
    #[cfg(feature = "faults")]
    if path.starts_with("/_rekon/") {
        let body = read_body(req).await;
        return control(&state, &method, &path, &body, &ctx);
    }
    #[cfg(feature = "faults")]
    {
        let latency = state.faults.latency();
        if !latency.is_zero() {
            tokio::time::sleep(latency).await;
        }
    }
    let r = route(&state.store, &path);
    let (verb, resource) = match &r {
        Route::Resource { res, name, sub, .. } => (
            verb_of(&method, name.is_some(), &query),
            match sub {
                Some(s) => format!("{}/{s}", res.plural),
                None => res.plural.clone(),
            },
        ),
        _ => ("", String::new()),
    };
    #[cfg(feature = "faults")]
    let dry_run = query.get("dryRun").is_some();
    #[cfg(feature = "faults")]
    let resp = match inject(&state, verb, &resource, dry_run).await {
        Some((code, retry)) => status_response(&injected(code, retry, &resource), &ctx),
        None => dispatch(&state, r, req, &query, &user_agent, &ctx).await,
    };
    #[cfg(not(feature = "faults"))]
    let resp = dispatch(&state, r, req, &query, &user_agent, &ctx).await;
    state.faults.record(RequestRecord {
        method: method.to_string(),
        path,
        query: raw_query,
        user_agent,
        verb: verb.to_string(),
        resource,
        status: resp.status().as_u16(),
    });
    resp
}

/// The deprecated watch paths (`/api/v1/watch/namespaces/NS/pods`, served
/// still): the resource's path, watched.
fn legacy_watch(path: &str, mut query: Query) -> (String, Query) {
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let at = match segments.as_slice() {
        ["api", _, "watch", _, ..] => 2,
        ["apis", _, _, "watch", _, ..] => 3,
        _ => return (path.to_string(), query),
    };
    let mut kept = segments;
    kept.remove(at);
    query.0.insert(0, ("watch".to_string(), "true".to_string()));
    (format!("/{}", kept.join("/")), query)
}

/// The fault to inject for this request, after the delay to add, if any.
#[cfg(feature = "faults")]
async fn inject(state: &State, verb: &str, resource: &str, dry_run: bool) -> Option<(u16, u64)> {
    if verb.is_empty() {
        return None;
    }
    if let Some(delay) = state.faults.take_stall(verb, resource) {
        tokio::time::sleep(delay).await;
    }
    state.faults.take_failure(verb, resource, dry_run)
}

/// The Status of an injected fault.
#[cfg(feature = "faults")]
fn injected(code: u16, retry: u64, resource: &str) -> Status {
    match code {
        429 => Status::too_many_requests(retry),
        500 => Status::internal("injected fault"),
        409 => Status::new(
            409,
            "Conflict",
            format!("Operation cannot be fulfilled on {resource}: injected conflict"),
        ),
        503 => Status::new(
            503,
            "ServiceUnavailable",
            "injected fault: service unavailable",
        ),
        504 => Status::new(504, "Timeout", "injected fault: timeout"),
        400 => Status::new(400, "BadRequest", "injected fault: bad request"),
        403 => Status::new(403, "Forbidden", "injected fault: forbidden"),
        404 => Status::new(404, "NotFound", "injected fault: not found"),
        c => Status::new(c, "", format!("injected fault {c}")),
    }
}
