//! Responses and requests: query strings, headers, the request context,
//! and JSON, Status and 404 responses with the headers a real server sends.

use std::convert::Infallible;

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Request, Response, StatusCode, header};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};
use rekon_store::Status;
use rekon_store::field::go_quote;
use serde_json::Value;

/// A query string's component decoded (`%XX` escapes, `+` as space).
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => match u8::from_str_radix(&s[i + 1..i + 3], 16) {
                Ok(b) => {
                    out.push(b);
                    i += 2;
                }
                Err(_) => out.push(b'%'),
            },
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A request header as text (empty when missing or not text).
pub(crate) fn header_text<B>(req: &Request<B>, name: HeaderName) -> String {
    req.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string()
}

/// A request's query parameters, in order.
pub(crate) struct Query(pub(crate) Vec<(String, String)>);

impl Query {
    /// The parameters of a raw query string.
    pub(crate) fn parse(q: &str) -> Query {
        Query(
            q.split('&')
                .filter(|p| !p.is_empty())
                .map(|p| match p.split_once('=') {
                    Some((k, v)) => (percent_decode(k), percent_decode(v)),
                    None => (percent_decode(p), String::new()),
                })
                .collect(),
        )
    }

    /// The first value of a parameter.
    pub(crate) fn get(&self, k: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    }

    /// Whether a boolean parameter is set (`true`, `1`, or no value).
    pub(crate) fn flag(&self, k: &str) -> bool {
        matches!(self.get(k), Some("true" | "1" | ""))
    }
}

/// How to write an answer, from the request's headers and query.
pub(crate) struct Ctx {
    /// Indented JSON (`pretty=true`, or a browser or curl asking).
    pub(crate) pretty: bool,
    /// YAML (`Accept: application/yaml`).
    pub(crate) yaml: bool,
    /// A Table (`Accept: ...;as=Table`), as `kubectl get` asks.
    pub(crate) table: bool,
    /// `as=PartialObjectMetadata`: metadata-only objects (kube-rs metadata watches).
    pub(crate) metadata_only: bool,
}

/// The headers every answer of the real server carries (an audit id, no caching).
pub(crate) fn audit_headers(resp: &mut Response<Body>) {
    let h = resp.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&uuid::Uuid::new_v4().to_string()) {
        h.insert("audit-id", v);
    }
    h.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, private"),
    );
}

/// A whole body.
pub(crate) fn body_of(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into()).boxed_unsync()
}

/// An answer with a JSON (or YAML) document.
pub(crate) fn json_response(code: u16, v: &Value, ctx: &Ctx) -> Response<Body> {
    let (bytes, ctype) = if ctx.yaml {
        (
            serde_yaml_ng::to_string(v).unwrap_or_default().into_bytes(),
            "application/yaml",
        )
    } else if ctx.pretty {
        (
            serde_json::to_vec_pretty(v).unwrap_or_default(),
            "application/json",
        )
    } else {
        (
            serde_json::to_vec(v).unwrap_or_default(),
            "application/json",
        )
    };
    let mut resp = Response::new(body_of(bytes));
    *resp.status_mut() = StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    resp.headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(ctype));
    audit_headers(&mut resp);
    resp
}

/// An answer with a Status (with Retry-After for 429 and 504).
pub(crate) fn status_response(st: &Status, ctx: &Ctx) -> Response<Body> {
    let mut resp = json_response(st.code, &st.to_json(), ctx);
    if st.code == 429 || st.code == 504 {
        let secs = st
            .details
            .as_ref()
            .and_then(|d| d.get("retryAfterSeconds"))
            .and_then(Value::as_u64)
            .unwrap_or(1);
        if let Ok(v) = HeaderValue::from_str(&secs.to_string()) {
            resp.headers_mut().insert(header::RETRY_AFTER, v);
        }
    }
    resp
}

/// The plain-text 404 of a path the server does not serve.
pub(crate) fn text_404() -> Response<Body> {
    let mut resp = Response::new(body_of("404 page not found\n"));
    *resp.status_mut() = StatusCode::NOT_FOUND;
    let h = resp.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    audit_headers(&mut resp);
    resp
}

/// The body of every response: a whole body or a stream.
pub(crate) type Body = UnsyncBoxBody<Bytes, Infallible>;

/// Adds warnings (the admission chain's, the store's) to a response, as kube-apiserver does
/// (`Warning: 299 - "text"`).
pub(crate) fn with_warnings(mut response: Response<Body>, warnings: &[String]) -> Response<Body> {
    for warning in warnings {
        // The text quoted as Go quotes it; a header holds no line breaks.
        let quoted = go_quote(warning);
        if let Ok(value) = HeaderValue::from_str(&format!("299 - {quoted}")) {
            response.headers_mut().append(header::WARNING, value);
        }
    }
    response
}
