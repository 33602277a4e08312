//! Helpers on objects as JSON: metadata, names, resourceVersions, continue tokens, field order.

use base64::Engine as _;
use serde_json::{Map, Value, json};

use crate::api::status::Status;
use crate::machinery::object::META_ORDER;
use crate::resource::info::ResourceInfo;

/// The object as clients see it: `kind`, `apiVersion`, `metadata` first.
pub(crate) fn present(res: &ResourceInfo, o: &Value) -> Value {
    arrange(res, &res.view(o))
}

/// [`present`], or the 500 of a conversion that failed.
pub(crate) fn present_checked(res: &ResourceInfo, o: &Value) -> Result<Value, Status> {
    Ok(arrange(res, &*res.try_view(o)?))
}

/// An object already in `res`'s field names ([`ResourceInfo::view`]), in
/// the order clients see: `kind`, `apiVersion`, `metadata` first.
pub(crate) fn arrange(res: &ResourceInfo, o: &Value) -> Value {
    // What the store keeps is in order already ([`put_in_order`]).
    if is_arranged(res, o) {
        return o.clone();
    }
    let mut out = Map::new();
    out.insert("kind".into(), json!(res.kind));
    out.insert("apiVersion".into(), json!(res.api_version()));
    if let Some(Value::Object(md)) = o.get("metadata") {
        let mut m = Map::new();
        for k in META_ORDER {
            if let Some(v) = md.get(*k) {
                m.insert((*k).into(), v.clone());
            }
        }
        for (k, v) in md {
            if !m.contains_key(k) {
                m.insert(k.clone(), v.clone());
            }
        }
        out.insert("metadata".into(), Value::Object(m));
    }
    if let Some(map) = o.as_object() {
        for (k, v) in map {
            if k != "kind" && k != "apiVersion" && k != "metadata" {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(out)
}

/// Whether `o` is as [`arrange`] gives it: `res`'s kind and apiVersion,
/// in order.
pub(crate) fn is_arranged(res: &ResourceInfo, o: &Value) -> bool {
    o.as_object().is_some_and(|map| {
        map.get("kind").and_then(Value::as_str) == Some(res.kind.as_str())
            && map
                .get("apiVersion")
                .and_then(Value::as_str)
                .is_some_and(|v| res.is_api_version(v))
            && in_order(map)
    })
}

/// [`present`] of an object the caller gives away: no copy when it is
/// already in `res`'s version and order.
pub(crate) fn present_owned(res: &ResourceInfo, o: Value) -> Value {
    let converted = match res.view(&o) {
        std::borrow::Cow::Borrowed(_) => None,
        std::borrow::Cow::Owned(view) => Some(view),
    };
    let o = converted.unwrap_or(o);
    if is_arranged(res, &o) {
        o
    } else {
        arrange(res, &o)
    }
}

/// Whether `map` is in the order [`arrange`] gives: `kind`, `apiVersion`,
/// `metadata` first, the metadata's fields in [`META_ORDER`] then the rest.
fn in_order(map: &Map<String, Value>) -> bool {
    let mut keys = map.keys();
    if keys.next().map(String::as_str) != Some("kind")
        || keys.next().map(String::as_str) != Some("apiVersion")
    {
        return false;
    }
    let Some(metadata) = map.get("metadata") else {
        return true;
    };
    if keys.next().map(String::as_str) != Some("metadata") {
        return false;
    }
    let Some(metadata) = metadata.as_object() else {
        return true;
    };
    let mut at = 0;
    let mut others = false;
    for key in metadata.keys() {
        match META_ORDER[at..].iter().position(|k| k == key) {
            Some(offset) if !others => at += offset + 1,
            Some(_) => return false,
            None if META_ORDER[..at].contains(&key.as_str()) => return false,
            None => others = true,
        }
    }
    true
}

/// Puts `o` in the order [`arrange`] gives, keeping its own `kind` and
/// `apiVersion` (what the store keeps, so that reads need not reorder it).
pub(crate) fn put_in_order(o: &mut Value) {
    let Some(map) = o.as_object_mut() else {
        return;
    };
    if !map.contains_key("kind") || !map.contains_key("apiVersion") || in_order(map) {
        return;
    }
    let mut head: [Option<Value>; 3] = [None, None, None];
    let mut rest = Vec::new();
    for (key, value) in std::mem::take(map) {
        match key.as_str() {
            "kind" => head[0] = Some(value),
            "apiVersion" => head[1] = Some(value),
            "metadata" => head[2] = Some(value),
            _ => rest.push((key, value)),
        }
    }
    let [kind, api_version, metadata] = head;
    map.extend(kind.map(|v| ("kind".to_string(), v)));
    map.extend(api_version.map(|v| ("apiVersion".to_string(), v)));
    if let Some(metadata) = metadata {
        let metadata = match metadata {
            Value::Object(md) => {
                let mut fields: Vec<(String, Option<Value>)> =
                    md.into_iter().map(|(k, v)| (k, Some(v))).collect();
                let mut ordered = Map::new();
                for name in META_ORDER {
                    if let Some((k, v)) = fields.iter_mut().find(|(k, _)| k == name)
                        && let Some(v) = v.take()
                    {
                        ordered.insert(k.clone(), v);
                    }
                }
                ordered.extend(fields.into_iter().filter_map(|(k, v)| v.map(|v| (k, v))));
                Value::Object(ordered)
            }
            other => other,
        };
        map.insert("metadata".into(), metadata);
    }
    map.extend(rest);
}

pub(crate) fn parse_rv(s: &str) -> Result<u64, Status> {
    s.parse::<u64>()
        .map_err(|_| Status::bad_request(format!("invalid resource version \"{s}\"")))
}

pub(crate) fn encode_continue(rv: u64, start: &str) -> String {
    let tok = json!({"v": "meta.k8s.io/v1", "rv": rv, "start": format!("{start}\u{0}")});
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(tok.to_string())
}

pub(crate) fn decode_continue(s: &str) -> Result<(i64, String), Status> {
    let bad = || Status::bad_request("invalid continue token: continue key is not valid");
    let trimmed = s.trim_end_matches('=');
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(trimmed)
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

/// Whether `a` and `b` differ outside `metadata` and `status` (what
/// raises the generation).
pub(crate) fn spec_differs(a: &Value, b: &Value) -> bool {
    !equal_except(
        a,
        b,
        &["metadata", "status", "apiVersion", "kind"],
        |_, _, _| None,
    )
}

/// Whether `a` and `b` are the same object but for resourceVersion and
/// managedFields times (a write that changes nothing).
pub(crate) fn same_object(a: &Value, b: &Value) -> bool {
    equal_except(a, b, &["apiVersion", "kind"], |key, a, b| {
        (key == "metadata").then(|| {
            equal_except(a, b, &["resourceVersion"], |key, a, b| {
                (key == "managedFields").then(|| match (a.as_array(), b.as_array()) {
                    (Some(a), Some(b)) => {
                        a.len() == b.len()
                            && a.iter()
                                .zip(b)
                                .all(|(a, b)| equal_except(a, b, &["time"], |_, _, _| None))
                    }
                    _ => a == b,
                })
            })
        })
    })
}

/// Whether objects `a` and `b` have the same fields, those named in `skip`
/// left out; `field` compares a field its own way when it answers.
fn equal_except(
    a: &Value,
    b: &Value,
    skip: &[&str],
    field: impl Fn(&str, &Value, &Value) -> Option<bool>,
) -> bool {
    let (Some(a), Some(b)) = (a.as_object(), b.as_object()) else {
        return a == b;
    };
    let kept = |m: &Map<String, Value>| m.keys().filter(|k| !skip.contains(&k.as_str())).count();
    kept(a) == kept(b)
        && a.iter()
            .filter(|(k, _)| !skip.contains(&k.as_str()))
            .all(|(k, va)| {
                b.get(k)
                    .is_some_and(|vb| field(k, va, vb).unwrap_or_else(|| va == vb))
            })
}

/// Drops the metadata lists and maps that are empty, as the real server's
/// `omitempty` encoding does: a patch that removes the last finalizer
/// leaves no `finalizers: []` behind.
pub(crate) fn omit_empty_metadata(obj: &mut Value) {
    if let Some(Value::Object(md)) = obj.get_mut("metadata") {
        md.retain(|key, value| {
            let listed = matches!(
                key.as_str(),
                "labels" | "annotations" | "finalizers" | "ownerReferences" | "managedFields"
            );
            let empty = match value {
                Value::Null => true,
                Value::Array(a) => a.is_empty(),
                Value::Object(o) => o.is_empty(),
                _ => false,
            };
            !(listed && empty)
        });
    }
}

/// Byte fields (ConfigMap `binaryData`, Secret `data`) are `[]byte` in the
/// real server: base64 with line breaks (as kustomize writes it) is decoded
/// and served back canonical, without them.
pub(crate) fn canonical_bytes(res: &ResourceInfo, obj: &mut Value) {
    let field = match (res.group.as_str(), res.kind.as_str()) {
        ("", "ConfigMap") => "binaryData",
        ("", "Secret") => "data",
        _ => return,
    };
    if let Some(Value::Object(bytes)) = obj.get_mut(field) {
        for value in bytes.values_mut() {
            if let Value::String(text) = value
                && text.contains(|c: char| c.is_ascii_whitespace())
            {
                text.retain(|c| !c.is_ascii_whitespace());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_are_kept_in_the_order_clients_see() {
        let mut o = json!({
            "spec": {"a": 1},
            "metadata": {"labels": {"x": "y"}, "zeta": 1, "name": "n", "uid": "u"},
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "data": {"k": "v"},
        });
        put_in_order(&mut o);
        let keys: Vec<&String> = o.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["kind", "apiVersion", "metadata", "spec", "data"]);
        let meta: Vec<&String> = o["metadata"].as_object().unwrap().keys().collect();
        assert_eq!(meta, ["name", "uid", "labels", "zeta"]);
        // What is in order reads back as it is.
        let res = ResourceInfo::new("", "v1", "ConfigMap", "configmaps", true);
        assert_eq!(
            serde_json::to_string(&arrange(&res, &o)).unwrap(),
            serde_json::to_string(&o).unwrap()
        );
    }
}
