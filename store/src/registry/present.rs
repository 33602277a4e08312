//! What a client reads: an object in the resource's version, its fields
//! in the order the real server writes them (`apiVersion`, `kind`,
//! `metadata` in `ObjectMeta`'s order, then the rest).

use serde_json::{Map, Value, json};

use super::storage::{try_view, view};
use crate::machinery::object::META_ORDER;
use crate::meta::status::Status;
use crate::resource::info::ResourceInfo;

/// The object as clients see it: `kind`, `apiVersion`, `metadata` first.
pub(crate) fn present(res: &ResourceInfo, o: &Value) -> Value {
    arrange(res, &view(res, o))
}

/// [`present`], or the 500 of a conversion that failed.
pub(crate) fn present_checked(res: &ResourceInfo, o: &Value) -> Result<Value, Status> {
    Ok(arrange(res, &*try_view(res, o)?))
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
    let converted = match view(res, &o) {
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
