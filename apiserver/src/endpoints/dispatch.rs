//! A route to its answer: discovery and OpenAPI documents, or a
//! resource's REST handlers, after the admission chain.

use bytes::Bytes;
use http::{HeaderValue, Request, Response, StatusCode, header};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use rekon_store::Status;
use serde_json::{Map, json};

use super::routes::Route;
use super::state::State;
use crate::admission::review;
use crate::discovery::groups::{core_versions, group, group_list, resource_list, version};
use crate::discovery::openapi::{hash, openapi_docs, openapi_path};
use crate::handlers::request::Request as ResourceRequest;
use crate::handlers::rest::serve;
use crate::protobuf::to_json;
use crate::respond::{
    Body, Ctx, Query, audit_headers, body_of, header_text, json_response, status_response,
    text_404, with_warnings,
};

/// Answers a request to a route.
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
        Route::Version => json_response(200, &version(), ctx),
        Route::Health => {
            let mut resp = Response::new(body_of("ok"));
            resp.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            );
            resp
        }
        Route::Api => json_response(200, &core_versions(&state.addr), ctx),
        Route::Apis => json_response(200, &group_list(&store.resources()), ctx),
        Route::Group(g) => match group(&store.resources(), &g) {
            Some(doc) => json_response(200, &doc, ctx),
            None => text_404(),
        },
        Route::ResourceList(g, v) => match resource_list(&store.resources(), &g, &v) {
            Some(doc) => json_response(200, &doc, ctx),
            None => text_404(),
        },
        Route::OpenApiRoot => {
            let mut paths = Map::new();
            for (g, v, bytes) in openapi_docs(store) {
                let p = openapi_path(&g, &v);
                paths.insert(
                    p.clone(),
                    json!({"serverRelativeURL": format!("/openapi/v3/{p}?hash={}", hash(&bytes))}),
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
            let want = hash(&bytes);
            let mut resp = match query.get("hash") {
                Some(h) if h != want => {
                    let mut resp = Response::new(body_of(Bytes::new()));
                    *resp.status_mut() = StatusCode::MOVED_PERMANENTLY;
                    let loc = format!("/openapi/v3/{}?hash={want}", openapi_path(&g, &v));
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
        Route::NoSuchSubresource(res, name) => {
            status_response(&Status::not_found(&res, &name), ctx)
        }
        Route::Resource {
            res,
            namespace,
            name,
            sub,
        } => {
            let method = req.method().clone();
            let mut ct = header_text(&req, header::CONTENT_TYPE);
            let mut body = read_body(req).await;
            // kubectl's imperative creates send protobuf: the kinds decoded
            // here go on as JSON.
            if ct.contains("protobuf")
                && let Ok(object) = to_json(&body)
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
            // is warned about, as the real server's CRD handler does, and
            // to a deprecated built-in one, as its installer does.
            let mut warnings: Vec<String> = res
                .deprecation_warning()
                .map(str::to_string)
                .into_iter()
                .collect();
            let mut request = ResourceRequest {
                store,
                res: &res,
                namespace: namespace.as_deref(),
                name: name.as_deref(),
                sub: sub.as_deref(),
                method,
                content_type: ct,
                body: body.to_vec(),
                query,
                user_agent: ua,
                ctx,
                bookmark_interval: state.bookmark_interval,
            };
            if let Some(admission) = state.admission.get() {
                match review(admission.as_ref(), &request).await {
                    Ok(None) => {}
                    Ok(Some(reviewed)) => {
                        request.method = reviewed.method;
                        request.content_type = reviewed.content_type;
                        request.body = reviewed.body;
                        warnings.extend(reviewed.warnings);
                    }
                    Err(st) => return status_response(&st, ctx),
                }
            }
            let response = match serve(&request) {
                Ok(resp) => resp,
                Err(st) => status_response(&st, ctx),
            };
            with_warnings(response, &warnings)
        }
    }
}

/// The whole body of a request (empty when it cannot be read).
pub(crate) async fn read_body(req: Request<Incoming>) -> Bytes {
    match req.into_body().collect().await {
        Ok(c) => c.to_bytes(),
        Err(_) => Bytes::new(),
    }
}
