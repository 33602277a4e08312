//! A list's pages: `continue` tokens as the real server writes them, and
//! the resourceVersions a read or watch names.

use base64::Engine as _;
use serde_json::{Value, json};

use crate::meta::status::Status;

pub(crate) fn parse_rv(s: &str) -> Result<u64, Status> {
    s.parse::<u64>()
        .map_err(|_| Status::bad_request(format!("invalid resource version \"{s}\"")))
}

pub(crate) fn encode_continue(rv: u64, start: &str) -> String {
    let tok = json!({"v": "meta.k8s.io/v1", "rv": rv, "start": format!("{start}\u{0}")});
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

pub(crate) fn decode_continue(s: &str) -> Result<(i64, String), Status> {
    let bad = || Status::bad_request("invalid continue token: continue key is not valid");
    if let Some(at) = corrupt_at(s) {
        return Err(Status::bad_request(format!(
            "invalid continue token: continue key is not valid: illegal base64 data at input byte {at}"
        )));
    }
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(s)
        .map_err(|_| bad())?;
    let v: Value = serde_json::from_slice(&bytes).map_err(|_| bad())?;
    let rv = v.get("rv").and_then(Value::as_i64).ok_or_else(bad)?;
    let start = v
        .get("start")
        .and_then(Value::as_str)
        .ok_or_else(bad)?
        .trim_end_matches('\u{0}')
        .to_string();
    Ok((rv, start))
}

pub(crate) fn list_key(ns: &str, name: &str) -> String {
    if ns.is_empty() {
        name.to_string()
    } else {
        format!("{ns}/{name}")
    }
}
