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
    /// A Table (`Accept: application/json;as=Table;v=v1;g=meta.k8s.io`),
    /// as `kubectl get` asks: its `meta.k8s.io` version.
    pub(crate) table: Option<&'static str>,
    /// `as=PartialObjectMetadata`: metadata-only objects (kube-rs metadata watches).
    pub(crate) metadata_only: bool,
    /// Which metadata-only shape was asked for, in which `meta.k8s.io`
    /// version.
    pub(crate) metadata_as: Option<MetadataAs>,
    /// The request's Accept header, negotiated again where the resource
    /// matters ([`negotiate`]).
    pub(crate) accept: String,
}

/// What an Accept header asks of a resource's endpoint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Media {
    /// YAML rather than JSON.
    pub(crate) yaml: bool,
    /// A Table in this `meta.k8s.io` version.
    pub(crate) table: Option<&'static str>,
    /// PartialObjectMetadata(List).
    pub(crate) metadata_only: bool,
    /// Which of the two, in which version.
    pub(crate) metadata_as: Option<MetadataAs>,
}

/// `as=PartialObjectMetadata` or `as=PartialObjectMetadataList`, and the
/// `meta.k8s.io` version asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct MetadataAs {
    /// `PartialObjectMetadataList` (a list) rather than one object.
    pub(crate) list: bool,
    /// `v1` or `v1beta1`.
    pub(crate) version: &'static str,
}

/// The media types a resource's endpoints write, as the real server lists
/// them when none is acceptable.
const SERVED: [(&str, &str); 3] = [
    ("application", "json"),
    ("application", "yaml"),
    ("application", "vnd.kubernetes.protobuf"),
];

/// One clause of an Accept header (goautoneg's `Accept`).
struct Clause<'a> {
    kind: &'a str,
    sub: &'a str,
    q: f64,
    params: Vec<(&'a str, &'a str)>,
}

/// An Accept header's clauses, as goautoneg's `ParseAccept` reads and
/// sorts them (by its `Less`, an insertion sort for headers this short).
fn clauses(header: &str) -> Vec<Clause<'_>> {
    let mut out: Vec<Clause<'_>> = Vec::new();
    for part in header.split(',') {
        let part = part.trim_matches(' ');
        let (media, params) = part.split_once(';').unwrap_or((part, ""));
        let (kind, sub) = match media.split_once('/') {
            None if media.trim_matches(' ') == "*" => ("*", "*"),
            None => continue,
            Some((kind, "")) if kind.trim_matches(' ') == "*" => ("*", "*"),
            Some((_, sub)) if sub.is_empty() || sub.contains('/') => continue,
            Some((kind, sub)) => (kind.trim_matches(' '), sub.trim_matches(' ')),
        };
        let mut clause = Clause {
            kind,
            sub,
            q: 1.0,
            params: Vec::new(),
        };
        for param in params.split(';').filter(|p| !p.is_empty()) {
            let Some((key, value)) = param.split_once('=') else {
                continue;
            };
            if value.is_empty() || value.contains('=') {
                continue;
            }
            match key.trim_matches(' ') {
                "q" => clause.q = value.parse().unwrap_or(0.0),
                key => clause.params.push((key, value.trim_matches(' '))),
            }
        }
        out.push(clause);
    }
    let less = |a: &Clause<'_>, b: &Clause<'_>| {
        a.q > b.q || (a.kind != "*" && b.kind == "*") || (a.sub != "*" && b.sub == "*")
    };
    for i in 1..out.len() {
        let mut j = i;
        while j > 0 && less(&out[j], &out[j - 1]) {
            out.swap(j, j - 1);
            j -= 1;
        }
    }
    out
}

/// The answer an Accept header asks of a resource's endpoint, negotiated
/// as the real server does (`NegotiateMediaTypeOptions` in apiserver's
/// `endpoints/handlers/negotiation/negotiate.go`, with the endpoint's
/// `RequestScope.AllowsMediaTypeTransform`): the first clause naming a
/// served media type whose conversion (`as`, `g`, `v`) is a
/// `meta.k8s.io/v1` or `v1beta1` Table (JSON or YAML) or
/// PartialObjectMetadata(List). `protobuf` says whether the endpoint writes
/// protobuf without a conversion (a custom resource's does not). `None`
/// when no clause is acceptable (406); an empty header is JSON.
pub(crate) fn negotiate(header: &str, protobuf: bool) -> Option<Media> {
    if header.is_empty() {
        return Some(Media::default());
    }
    for clause in clauses(header) {
        for (kind, sub) in SERVED {
            let matches = (clause.kind == kind && (clause.sub == sub || clause.sub == "*"))
                || (clause.kind == "*" && clause.sub == "*");
            if let Some(media) = matches.then(|| accepts(&clause, sub, protobuf)).flatten() {
                return Some(media);
            }
        }
    }
    None
}

/// A clause's parameters for the served media type `sub`
/// (`acceptMediaTypeOptions`), if the endpoint allows them.
fn accepts(clause: &Clause<'_>, sub: &str, protobuf: bool) -> Option<Media> {
    let (mut convert, mut kind, mut group, mut version) = (false, "", "", "");
    for &(key, value) in &clause.params {
        match key {
            "as" => (convert, kind) = (true, value),
            "g" => (convert, group) = (true, value),
            "v" => (convert, version) = (true, value),
            "stream" if !value.is_empty() && (value != "watch" || sub == "yaml") => return None,
            "sv" if !value.is_empty() && value != "v1" => return None,
            _ => {}
        }
    }
    let yaml = sub == "yaml";
    if !convert {
        return (protobuf || sub != "vnd.kubernetes.protobuf").then_some(Media {
            yaml,
            ..Media::default()
        });
    }
    let version: &'static str = match (group, version) {
        ("meta.k8s.io", "v1") => "v1",
        ("meta.k8s.io", "v1beta1") => "v1beta1",
        _ => return None,
    };
    match kind {
        "Table" if sub != "vnd.kubernetes.protobuf" => Some(Media {
            yaml,
            table: Some(version),
            ..Media::default()
        }),
        "PartialObjectMetadata" | "PartialObjectMetadataList" => Some(Media {
            yaml,
            table: None,
            metadata_only: true,
            metadata_as: Some(MetadataAs {
                list: kind == "PartialObjectMetadataList",
                version,
            }),
        }),
        _ => None,
    }
}

/// 406 NotAcceptable: no media type of the Accept header is served
/// (`NewNotAcceptableError` with the serializer's media types).
pub(crate) fn not_acceptable() -> Status {
    let served: Vec<String> = SERVED.iter().map(|(k, s)| format!("{k}/{s}")).collect();
    Status::new(
        406,
        "NotAcceptable",
        format!(
            "only the following media types are accepted: {}",
            served.join(", ")
        ),
    )
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

/// An answer with a Status (with Retry-After for 429 and 504: the delay
/// its details give, none when they give none, as `ErrorNegotiated` in
/// the real server's `responsewriters/writers.go` writes it; 1 s for an
/// injected fault without details).
pub(crate) fn status_response(st: &Status, ctx: &Ctx) -> Response<Body> {
    let mut resp = json_response(st.code, &st.to_json(), ctx);
    if st.code == 429 || st.code == 504 {
        let secs = st
            .details
            .as_ref()
            .map_or(Some(1), |d| {
                d.get("retryAfterSeconds").and_then(Value::as_u64)
            })
            .filter(|s| *s > 0);
        if let Some(secs) = secs
            && let Ok(v) = HeaderValue::from_str(&secs.to_string())
        {
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

#[cfg(test)]
mod tests {
    use super::{Media, negotiate};

    #[test]
    fn accept_headers_are_negotiated_as_the_real_server_does() {
        let kubectl = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        assert_eq!(negotiate(kubectl, true).and_then(|m| m.table), Some("v1"));
        let beta = "application/json;as=Table;v=v1beta1;g=meta.k8s.io";
        assert_eq!(negotiate(beta, true).and_then(|m| m.table), Some("v1beta1"));
        let fallback = "application/json;as=Tabular;v=v1;g=meta.k8s.io, application/json";
        assert_eq!(negotiate(fallback, true), Some(Media::default()));
        assert_eq!(
            negotiate("application/json;as=Tabular;v=v1;g=meta.k8s.io", true),
            None
        );
        assert_eq!(negotiate("application/json;as=Table", true), None);
        let metadata = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io";
        assert!(negotiate(metadata, false).is_some_and(|m| m.metadata_only));
        assert!(negotiate("application/yaml", true).is_some_and(|m| m.yaml));
        assert_eq!(negotiate("*/*", true), Some(Media::default()));
        assert_eq!(negotiate("", false), Some(Media::default()));
        // A custom resource's endpoints write no protobuf.
        assert!(negotiate("application/vnd.kubernetes.protobuf", true).is_some());
        assert_eq!(
            negotiate("application/vnd.kubernetes.protobuf", false),
            None
        );
        assert_eq!(negotiate("text/html", true), None);
    }
}
