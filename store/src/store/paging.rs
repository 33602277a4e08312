//! A list's pages: `continue` tokens as the real server writes and reads
//! them (apiserver's `storage/continue.go`), and the resourceVersions a
//! read or watch names.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use base64::Engine as _;
use serde_json::{Value, json};

use crate::go::json::decode::json_kind;
use crate::go::json::syntax::syntax_error;
use crate::go::strconv::go_quote;
use crate::meta::status::Status;
use crate::registry::registry::ObjKey;

pub(crate) fn parse_rv(s: &str) -> Result<u64, Status> {
    s.parse::<u64>()
        .map_err(|_| Status::bad_request(format!("invalid resource version \"{s}\"")))
}

/// A `resourceVersion` read as the storage's versioner reads it
/// (`APIObjectVersioner.ParseResourceVersion`: `""` and `"0"` are 0, any
/// other must be an unsigned number), or why not, in its words
/// (`resourceVersion: Invalid value: "abc": strconv.ParseUint: ...`).
pub(crate) fn parse_list_rv(s: &str) -> Result<u64, String> {
    if s.is_empty() {
        return Ok(0);
    }
    let why = if !s.bytes().all(|b| b.is_ascii_digit()) {
        "invalid syntax"
    } else {
        match s.parse::<u64>() {
            Ok(rv) => return Ok(rv),
            Err(_) => "value out of range",
        }
    };
    Err(format!(
        "resourceVersion: Invalid value: {}: strconv.ParseUint: parsing {}: {why}",
        go_quote(s),
        go_quote(s)
    ))
}

/// The token of the page after `key` (the last key read, relative to the
/// list's prefix) at `rv` (`EncodeContinue` of `key` and a NUL byte, so the
/// next page starts just after it).
pub(crate) fn encode_continue(rv: u64, key: &str) -> String {
    let tok = json!({"v": "meta.k8s.io/v1", "rv": rv, "start": format!("{key}\u{0}")});
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(tok.to_string())
}

/// Where Go's `base64.RawURLEncoding` finds `s` corrupt, if it does: the
/// first byte outside the alphabet, or the last one of a lone final byte.
fn corrupt_at(s: &str) -> Option<usize> {
    let valid = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_');
    if let Some(at) = s.bytes().position(|b| !valid(&b)) {
        return Some(at);
    }
    (s.len() % 4 == 1).then(|| s.len() - 1)
}

/// The field `name` of a decoded token, matched as Go's `encoding/json`
/// matches a struct field (exactly, else ignoring case).
fn token_field<'a>(token: &'a serde_json::Map<String, Value>, name: &str) -> Option<&'a Value> {
    token.get(name).or_else(|| {
        token
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    })
}

/// Why Go cannot decode `value` into the token's field `field` of type
/// `go_type`, if it cannot (null leaves the field as it is).
fn type_error(value: &Value, field: &str, go_type: &str) -> String {
    let kind = match value {
        Value::Number(n) => format!("number {n}"),
        other => json_kind(other).to_string(),
    };
    format!(
        "json: cannot unmarshal {kind} into Go struct field continueToken.{field} of type {go_type}"
    )
}

/// The continue token's fields as Go decodes them into `continueToken`:
/// its version, resourceVersion and start key, or the decoder's error.
fn decode_token(bytes: &[u8]) -> Result<(String, i64, String), String> {
    if let Some(error) = syntax_error(bytes) {
        return Err(error);
    }
    let value: Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    let token = match value {
        Value::Object(token) => token,
        Value::Null => serde_json::Map::new(),
        other => {
            return Err(format!(
                "json: cannot unmarshal {} into Go value of type storage.continueToken",
                json_kind(&other)
            ));
        }
    };
    let text = |field: &str| match token_field(&token, field) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(type_error(other, field, "string")),
    };
    let version = text("v")?;
    let rv = match token_field(&token, "rv") {
        None | Some(Value::Null) => 0,
        Some(Value::Number(n)) if n.as_i64().is_some() => n.as_i64().unwrap_or_default(),
        Some(other) => return Err(type_error(other, "rv", "int64")),
    };
    Ok((version, rv, text("start")?))
}

/// Whether `key` (rooted) is as Go's `path.Clean` leaves it: no empty,
/// `.` or `..` element, no trailing slash.
fn is_clean(key: &str) -> bool {
    key == "/"
        || key[1..]
            .split('/')
            .all(|part| !part.is_empty() && part != "." && part != "..")
}

/// The resourceVersion and start key (relative to the list's prefix) of a
/// continue token (`DecodeContinue`), or the 400 the real server answers,
/// `invalid continue token: ...` with its reason.
pub(crate) fn decode_continue(s: &str) -> Result<(i64, String), Status> {
    let invalid = |why: String| Status::bad_request(format!("invalid continue token: {why}"));
    let generic = |why: String| invalid(format!("continue key is not valid: {why}"));
    if let Some(at) = corrupt_at(s) {
        return Err(generic(format!("illegal base64 data at input byte {at}")));
    }
    // Go's decoder does not look at the bits a last symbol leaves over.
    let lenient = base64::engine::GeneralPurpose::new(
        &base64::alphabet::URL_SAFE,
        base64::engine::GeneralPurposeConfig::new()
            .with_encode_padding(false)
            .with_decode_allow_trailing_bits(true)
            .with_decode_padding_mode(base64::engine::DecodePaddingMode::RequireNone),
    );
    let bytes = lenient.decode(s).map_err(|e| generic(e.to_string()))?;
    let (version, rv, start) = decode_token(&bytes).map_err(generic)?;
    if version != "meta.k8s.io/v1" {
        return Err(invalid(format!(
            "continue key is not valid: server does not recognize this encoded version {version}"
        )));
    }
    if rv == 0 {
        return Err(invalid(
            "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)".into(),
        ));
    }
    if start.is_empty() {
        return Err(invalid(
            "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)".into(),
        ));
    }
    // A start key cannot climb out of the list's prefix.
    let key = if start.starts_with('/') {
        start.clone()
    } else {
        format!("/{start}")
    };
    if !is_clean(&key) {
        return Err(generic(start));
    }
    Ok((rv, key[1..].to_string()))
}

/// An object's key relative to a list's prefix: its name in a list of
/// one namespace or of a cluster-scoped resource, `namespace/name` in a
/// list across namespaces.
pub(crate) fn list_key(ns: &str, name: &str, across_namespaces: bool) -> String {
    if across_namespaces {
        format!("{ns}/{name}")
    } else {
        name.to_string()
    }
}

/// The objects of one resource from `lower` on, in the order of their
/// storage keys (`<namespace>/<name>` compared byte by byte across
/// namespaces, so `a-b/x` comes before `a/x`), as etcd ranges over them.
pub(crate) fn in_key_order<'a>(
    objects: &'a BTreeMap<ObjKey, Arc<Value>>,
    lower: ObjKey,
    across_namespaces: bool,
) -> Box<dyn Iterator<Item = (&'a ObjKey, &'a Arc<Value>)> + 'a> {
    if !across_namespaces {
        return Box::new(objects.range((Bound::Included(lower), Bound::Unbounded)));
    }
    // The namespaces held, each found by a seek past the one before.
    let mut namespaces: Vec<&'a str> = Vec::new();
    let mut next = objects.keys().next();
    while let Some((ns, _)) = next {
        namespaces.push(ns);
        let past = (format!("{ns}\0"), String::new());
        next = objects
            .range((Bound::Included(past), Bound::Unbounded))
            .next()
            .map(|(k, _)| k);
    }
    namespaces.sort_by(|a, b| a.bytes().chain(*b"/").cmp(b.bytes().chain(*b"/")));
    let (start_ns, start_name) = lower;
    namespaces.retain(|ns| ns.bytes().chain(*b"/").ge(start_ns.bytes().chain(*b"/")));
    Box::new(namespaces.into_iter().flat_map(move |ns| {
        let first = if ns == start_ns {
            start_name.clone()
        } else {
            String::new()
        };
        objects.range((
            Bound::Included((ns.to_string(), first)),
            Bound::Excluded((format!("{ns}\0"), String::new())),
        ))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(json: &str) -> String {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
    }

    #[test]
    fn continue_tokens_are_refused_with_the_real_reasons() {
        let error = |json: &str| decode_continue(&token(json)).unwrap_err().message;
        assert_eq!(
            error(r#"{"v":"meta.k8s.io/v1","rv":0,"start":"a\u0000"}"#),
            "invalid continue token: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"
        );
        assert_eq!(
            error(r#"{"v":"meta.k8s.io/v1","rv":5,"start":""}"#),
            "invalid continue token: continue key is not valid: encoded start key empty (version meta.k8s.io/v1)"
        );
        assert_eq!(
            error(r#"{"v":"meta.k8s.io/v1","rv":5,"start":"../other/a"}"#),
            "invalid continue token: continue key is not valid: ../other/a"
        );
        assert_eq!(
            error(r#"{"v":"meta.k8s.io/v2","rv":5,"start":"a"}"#),
            "invalid continue token: continue key is not valid: server does not recognize this encoded version meta.k8s.io/v2"
        );
        assert_eq!(
            error(r#"{"v":"meta.k8s.io/v1","rv":"5","start":"a"}"#),
            "invalid continue token: continue key is not valid: json: cannot unmarshal string into Go struct field continueToken.rv of type int64"
        );
        assert_eq!(
            decode_continue("a!").unwrap_err().message,
            "invalid continue token: continue key is not valid: illegal base64 data at input byte 1"
        );
        let (rv, start) = decode_continue(&encode_continue(7, "ns/a")).unwrap();
        assert_eq!((rv, start.as_str()), (7, "ns/a\u{0}"));
    }

    #[test]
    fn list_resource_versions_are_unsigned_numbers() {
        assert_eq!(parse_list_rv(""), Ok(0));
        assert_eq!(parse_list_rv("12"), Ok(12));
        assert_eq!(
            parse_list_rv("+1").unwrap_err(),
            "resourceVersion: Invalid value: \"+1\": strconv.ParseUint: parsing \"+1\": invalid syntax"
        );
        assert!(
            parse_list_rv("99999999999999999999")
                .unwrap_err()
                .ends_with("value out of range")
        );
    }
}
