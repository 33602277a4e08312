//! One request: fault injection, the control endpoints, and dispatching a route.

use std::sync::Arc;
#[cfg(feature = "faults")]
use std::time::Duration;

use bytes::Bytes;
#[cfg(feature = "faults")]
use http::Method;
use http::{HeaderValue, Request, Response, StatusCode, header};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use rekon_store::{Status, Store, is_builtin};
#[cfg(feature = "faults")]
use serde_json::Value;
use serde_json::{Map, json};

#[cfg(feature = "faults")]
use crate::server::control::FailRule;
use crate::server::control::RequestRecord;
use crate::server::respond::{
    Ctx, Query, audit_headers, body_of, json_response, status_response, text_404,
};
use crate::server::rest::rest;
use crate::server::routes::{Route, route, verb_of};
use crate::server::{Body, State, discovery, protobuf};

pub(crate) async fn handle(state: Arc<State>, req: Request<Incoming>) -> Response<Body> {
    let method = req.method().clone();
    let path = req.uri().path().to_string();
    let raw_query = req.uri().query().unwrap_or("").to_string();
    let query = Query::parse(&raw_query);
    let user_agent = req
        .headers()
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let accept = req
        .headers()
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let ctx = Ctx {
        pretty: query.get("pretty") == Some("true")
            || ["curl", "Wget", "Mozilla/5.0"]
                .iter()
                .any(|p| user_agent.starts_with(p)),
        yaml: accept.starts_with("application/yaml"),
        table: accept.contains("as=Table"),
        metadata_only: accept.contains("as=PartialObjectMetadata"),
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

/// The fault to inject for this request, after the delay to add, if any.
#[cfg(feature = "faults")]
pub(crate) async fn inject(
    state: &State,
    verb: &str,
    resource: &str,
    dry_run: bool,
) -> Option<(u16, u64)> {
    if verb.is_empty() {
        return None;
    }
    if let Some(delay) = state.faults.take_stall(verb, resource) {
        tokio::time::sleep(delay).await;
    }
    state.faults.take_failure(verb, resource, dry_run)
}

#[cfg(feature = "faults")]
pub(crate) fn injected(code: u16, retry: u64, resource: &str) -> Status {
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

#[cfg_attr(not(feature = "faults"), allow(dead_code))]
pub(crate) async fn read_body(req: Request<Incoming>) -> Bytes {
    match req.into_body().collect().await {
        Ok(c) => c.to_bytes(),
        Err(_) => Bytes::new(),
    }
}

#[cfg(feature = "faults")]
pub(crate) fn control(
    state: &State,
    method: &Method,
    path: &str,
    body: &[u8],
    ctx: &Ctx,
) -> Response<Body> {
    let f = &state.faults;
    let arg: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let ok = || json_response(200, &json!({"ok": true}), ctx);
    match (method.as_str(), path) {
        ("GET", "/_rekon/requests") => json_response(200, &json!(f.requests()), ctx),
        ("DELETE", "/_rekon/requests") => {
            f.clear_requests();
            ok()
        }
        ("GET", "/_rekon/watches") => {
            json_response(200, &json!({"open": state.store.watch_count()}), ctx)
        }
        ("POST", "/_rekon/drop-watches") => {
            f.drop_watches();
            ok()
        }
        ("POST", "/_rekon/fail") => match serde_json::from_value::<FailRule>(arg) {
            Ok(rule) => {
                f.fail(rule);
                ok()
            }
            Err(e) => status_response(&Status::bad_request(format!("bad fail rule: {e}")), ctx),
        },
        ("POST", "/_rekon/latency") => {
            let ms = arg.get("millis").and_then(Value::as_u64).unwrap_or(0);
            f.set_latency(Duration::from_millis(ms));
            ok()
        }
        ("POST", "/_rekon/compact") => {
            f.compact();
            ok()
        }
        ("POST", "/_rekon/restart") => {
            let keep = arg.get("keepData").and_then(Value::as_bool).unwrap_or(true);
            // The restart closes this very connection: answer first.
            let f = f.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(20)).await;
                f.restart(keep);
            });
            ok()
        }
        ("DELETE", "/_rekon/faults") => {
            f.clear();
            ok()
        }
        _ => text_404(),
    }
}

pub(crate) fn openapi_docs(store: &Store) -> Vec<(String, String, Vec<u8>)> {
    let resources = store.resources();
    discovery::group_versions(&resources)
        .into_iter()
        .map(|(g, v)| {
            let doc = discovery::openapi_group_version(&resources, &g, &v, is_builtin);
            let bytes = serde_json::to_vec(&doc).unwrap_or_default();
            (g, v, bytes)
        })
        .collect()
}

pub(crate) async fn dispatch(
    state: &State,
    r: Route,
    req: Request<Incoming>,
    query: &Query,
    ua: &str,
    ctx: &Ctx,
) -> Response<Body> {
    let store = &state.store;
    match r {
        Route::Version => json_response(200, &discovery::version(), ctx),
        Route::Health => {
            let mut resp = Response::new(body_of("ok"));
            resp.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            );
            resp
        }
        Route::Api => json_response(200, &discovery::core_versions(&state.addr), ctx),
        Route::Apis => json_response(200, &discovery::group_list(&store.resources()), ctx),
        Route::Group(g) => match discovery::group(&store.resources(), &g) {
            Some(doc) => json_response(200, &doc, ctx),
            None => text_404(),
        },
        Route::ResourceList(g, v) => match discovery::resource_list(&store.resources(), &g, &v) {
            Some(doc) => json_response(200, &doc, ctx),
            None => text_404(),
        },
        Route::OpenApiRoot => {
            let mut paths = Map::new();
            for (g, v, bytes) in openapi_docs(store) {
                let p = discovery::openapi_path(&g, &v);
                paths.insert(
                    p.clone(),
                    json!({"serverRelativeURL": format!("/openapi/v3/{p}?hash={}", discovery::hash(&bytes))}),
                );
            }
            let mut resp = Response::new(body_of(
                serde_json::to_vec(&json!({"paths": paths})).unwrap_or_default(),
            ));
            resp.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            );
            audit_headers(&mut resp);
            resp
        }
        Route::OpenApiDoc(g, v) => {
            let Some((_, _, bytes)) = openapi_docs(store)
                .into_iter()
                .find(|(dg, dv, _)| *dg == g && *dv == v)
            else {
                return text_404();
            };
            let want = discovery::hash(&bytes);
            let mut resp = match query.get("hash") {
                Some(h) if h != want => {
                    let mut resp = Response::new(body_of(Bytes::new()));
                    *resp.status_mut() = StatusCode::MOVED_PERMANENTLY;
                    let loc = format!(
                        "/openapi/v3/{}?hash={want}",
                        discovery::openapi_path(&g, &v)
                    );
                    if let Ok(l) = HeaderValue::from_str(&loc) {
                        resp.headers_mut().insert(header::LOCATION, l);
                    }
                    return resp;
                }
                Some(_) => {
                    let mut resp = Response::new(body_of(bytes));
                    resp.headers_mut().insert(
                        header::CACHE_CONTROL,
                        HeaderValue::from_static("public, immutable"),
                    );
                    resp
                }
                None => {
                    let mut resp = Response::new(body_of(bytes));
                    resp.headers_mut().insert(
                        header::CACHE_CONTROL,
                        HeaderValue::from_static("no-cache, private"),
                    );
                    resp
                }
            };
            resp.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            resp
        }
        Route::NotFound => text_404(),
        Route::UnknownResource => status_response(&Status::resource_not_found(), ctx),
        Route::Resource {
            res,
            namespace,
            name,
            sub,
        } => {
            let method = req.method().clone();
            let ct = req
                .headers()
                .get(header::CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            let mut body = read_body(req).await;
            let mut ct = ct;
            // kubectl's imperative creates send protobuf: the kinds decoded
            // here go on as JSON.
            if ct.contains("protobuf")
                && let Ok(object) = protobuf::to_json(&body)
            {
                body = object.to_string().into_bytes().into();
                ct = "application/json".to_string();
            }
            if ct.contains("protobuf") || ct.contains("cbor") {
                return status_response(
                    &Status {
                        code: 415,
                        reason: "UnsupportedMediaType".into(),
                        message: "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml".into(),
                        details: None,
                    },
                    ctx,
                );
            }
            // Every request to a deprecated version of a custom resource
            // is warned about, as the real server's CRD handler does.
            let mut warnings: Vec<String> = res
                .custom
                .as_ref()
                .and_then(|custom| custom.deprecation_warning(&res.version))
                .map(str::to_string)
                .into_iter()
                .collect();
            let (mut method, mut ct, mut body) = (method, ct, body.to_vec());
            if let Some(admission) = state.admission.get() {
                let write = super::admission::Write {
                    res: &res,
                    namespace: namespace.as_deref(),
                    name: name.as_deref(),
                    sub: sub.as_deref(),
                    method: &method,
                    content_type: &ct,
                    body: &body,
                    query,
                    ua,
                };
                match super::admission::review(state, admission.as_ref(), write).await {
                    Ok(None) => {}
                    Ok(Some(reviewed)) => {
                        (method, ct, body) =
                            (reviewed.method, reviewed.content_type, reviewed.body);
                        warnings.extend(reviewed.warnings);
                    }
                    Err(st) => return status_response(&st, ctx),
                }
            }
            let result = rest(
                state,
                &res,
                namespace.as_deref(),
                name.as_deref(),
                sub,
                &method,
                &ct,
                &body,
                query,
                ua,
                ctx,
            );
            let response = match result {
                Ok(resp) => resp,
                Err(st) => status_response(&st, ctx),
            };
            super::admission::with_warnings(response, &warnings)
        }
    }
}
