//! Patch application: JSON merge patch, strategic merge patch (list merge by
//! key for the common built-in lists), and the field sets of server-side apply.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

/// The merge key of a list field in the built-in kinds' strategic merge
/// patch schema, by field name. Lists not named here are replaced atomically.
fn merge_key(field: &str) -> Option<&'static str> {
    Some(match field {
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "env"
        | "volumes"
        | "imagePullSecrets"
        | "ownerReferences"
        | "conditions"
        | "secrets" => match field {
            "ownerReferences" => "uid",
            "conditions" => "type",
            _ => "name",
        },
        "ports" => "containerPort",
        "volumeMounts" => "mountPath",
        "volumeDevices" => "devicePath",
        "hostAliases" => "ip",
        "tolerations" | "topologySpreadConstraints" => return None,
        _ => return None,
    })
}

/// Lists of scalars that the built-in schema merges as sets.
fn is_set_list(field: &str) -> bool {
    matches!(field, "finalizers")
}

/// Applies a strategic merge patch to `target`. `$patch`, `$retainKeys`,
/// `$setElementOrder/...` and `$deleteFromPrimitiveList/...` directives are
/// understood; unknown lists are replaced.
pub(crate) fn strategic_merge(target: &mut Value, patch: &Value) {
    let (Some(t), Some(p)) = (target.as_object_mut(), patch.as_object()) else {
        *target = strip_directives(patch);
        return;
    };
    if p.get("$patch").and_then(Value::as_str) == Some("replace") {
        let mut rep = p.clone();
        rep.remove("$patch");
        *target = strip_directives(&Value::Object(rep));
        return;
    }
    let retain: Option<BTreeSet<String>> =
        p.get("$retainKeys").and_then(Value::as_array).map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        });
    for (k, v) in p {
        if k.starts_with('$') {
            if let Some(field) = k.strip_prefix("$deleteFromPrimitiveList/")
                && let (Some(Value::Array(list)), Some(del)) = (t.get_mut(field), v.as_array())
            {
                list.retain(|x| !del.contains(x));
            }
            continue;
        }
        if v.is_null() {
            t.remove(k);
            continue;
        }
        match (t.get_mut(k), v) {
            (Some(existing @ Value::Object(_)), Value::Object(_)) => strategic_merge(existing, v),
            (Some(Value::Array(existing)), Value::Array(items)) => {
                if let Some(key) = merge_key(k)
                    && items.iter().all(Value::is_object)
                    && existing.iter().all(Value::is_object)
                {
                    merge_list_by_key(existing, items, key);
                } else if is_set_list(k) {
                    for it in items {
                        if !existing.contains(it) {
                            existing.push(it.clone());
                        }
                    }
                } else {
                    t.insert(k.clone(), strip_directives(v));
                }
            }
            _ => {
                t.insert(k.clone(), strip_directives(v));
            }
        }
    }
    if let Some(retain) = retain {
        t.retain(|k, _| retain.contains(k));
    }
}

fn merge_list_by_key(existing: &mut Vec<Value>, items: &[Value], key: &str) {
    for item in items {
        let id = item.get(key);
        let directive = item.get("$patch").and_then(Value::as_str);
        let pos = existing
            .iter()
            .position(|e| e.get(key) == id && id.is_some());
        match (pos, directive) {
            (Some(i), Some("delete")) => {
                existing.remove(i);
            }
            (None, Some("delete")) => {}
            (Some(i), _) => strategic_merge(&mut existing[i], item),
            (None, _) => existing.push(strip_directives(item)),
        }
    }
}

fn strip_directives(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !k.starts_with('$'))
                .map(|(k, v)| (k.clone(), strip_directives(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip_directives).collect()),
        other => other.clone(),
    }
}

/// A field path as server-side apply sees it: map keys down to a leaf; lists
/// and scalars are leaves (lists are owned atomically here).
pub(crate) type FieldPath = Vec<String>;

/// The leaf paths of `v`, under `prefix`, skipping what apply never owns.
pub(crate) fn leaf_paths(v: &Value) -> BTreeSet<FieldPath> {
    let mut out = BTreeSet::new();
    if let Some(m) = v.as_object() {
        for (k, child) in m {
            if k == "apiVersion" || k == "kind" {
                continue;
            }
            if k == "metadata" {
                if let Some(md) = child.as_object() {
                    for mk in ["labels", "annotations", "finalizers", "ownerReferences"] {
                        if let Some(x) = md.get(mk) {
                            collect(x, &mut vec!["metadata".into(), mk.into()], &mut out);
                        }
                    }
                }
                continue;
            }
            collect(child, &mut vec![k.clone()], &mut out);
        }
    }
    out
}

fn collect(v: &Value, path: &mut FieldPath, out: &mut BTreeSet<FieldPath>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, child) in m {
                path.push(k.clone());
                collect(child, path, out);
                path.pop();
            }
        }
        _ => {
            out.insert(path.clone());
        }
    }
}

/// The value at `path` in `v`, if any.
pub(crate) fn get_path<'a>(v: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter().try_fold(v, |cur, k| cur.get(k))
}

/// Sets `path` in `v` to `val`, creating maps on the way.
pub(crate) fn set_path(v: &mut Value, path: &[String], val: Value) {
    let Some((last, parents)) = path.split_last() else {
        return;
    };
    let mut cur = v;
    for k in parents {
        if !cur.is_object() {
            *cur = Value::Object(Map::new());
        }
        let Value::Object(m) = cur else { return };
        cur = m
            .entry(k.clone())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    if !cur.is_object() {
        *cur = Value::Object(Map::new());
    }
    if let Value::Object(m) = cur {
        m.insert(last.clone(), val);
    }
}

/// Removes `path` from `v`, and any map it leaves empty on the way up.
pub(crate) fn remove_path(v: &mut Value, path: &[String]) {
    fn go(v: &mut Value, path: &[String]) -> bool {
        let Some((first, rest)) = path.split_first() else {
            return false;
        };
        let Value::Object(m) = v else { return false };
        if rest.is_empty() {
            m.remove(first);
        } else if let Some(child) = m.get_mut(first)
            && go(child, rest)
        {
            m.remove(first);
        }
        m.is_empty()
    }
    go(v, path);
}

/// Renders a field set as a `fieldsV1` document.
pub(crate) fn fields_v1(set: &BTreeSet<FieldPath>) -> Value {
    let mut root = Map::new();
    for path in set {
        let mut cur = &mut root;
        for (i, k) in path.iter().enumerate() {
            let key = format!("f:{k}");
            let entry = cur.entry(key).or_insert_with(|| Value::Object(Map::new()));
            let Value::Object(m) = entry else { break };
            if i + 1 < path.len() && !m.contains_key(".") {
                m.insert(".".into(), Value::Object(Map::new()));
            }
            cur = m;
        }
    }
    // The top level and the metadata map have no "." marker.
    if let Some(Value::Object(md)) = root.get_mut("f:metadata") {
        md.remove(".");
    }
    Value::Object(root)
}

/// Parses a `fieldsV1` document back into a field set.
pub(crate) fn parse_fields_v1(v: &Value) -> BTreeSet<FieldPath> {
    fn go(v: &Value, path: &mut FieldPath, out: &mut BTreeSet<FieldPath>) {
        let Some(m) = v.as_object() else { return };
        let children: Vec<_> = m.iter().filter(|(k, _)| k.starts_with("f:")).collect();
        if children.is_empty() {
            if !path.is_empty() {
                out.insert(path.clone());
            }
            return;
        }
        for (k, child) in children {
            path.push(k[2..].to_string());
            go(child, path, out);
            path.pop();
        }
    }
    let mut out = BTreeSet::new();
    go(v, &mut Vec::new(), &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strategic_merge_merges_containers_by_name() {
        let mut target = json!({"spec": {"containers": [
            {"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]}});
        let patch = json!({"spec": {"containers": [
            {"name": "b", "image": "b:2"}, {"name": "c", "image": "c:1"}, {"name": "a", "$patch": "delete"}]}});
        strategic_merge(&mut target, &patch);
        assert_eq!(
            target,
            json!({"spec": {"containers": [{"name": "b", "image": "b:2"}, {"name": "c", "image": "c:1"}]}})
        );
    }

    #[test]
    fn strategic_merge_null_deletes_and_unknown_lists_replace() {
        let mut target = json!({"data": {"a": "1", "b": "2"}, "args": ["x"]});
        strategic_merge(
            &mut target,
            &json!({"data": {"a": null}, "args": ["y"], "$setElementOrder/args": []}),
        );
        assert_eq!(target, json!({"data": {"b": "2"}, "args": ["y"]}));
    }

    #[test]
    fn fields_round_trip() {
        let obj = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "labels": {"a": "b"}}, "data": {"k": "v"}});
        let set = leaf_paths(&obj);
        let doc = fields_v1(&set);
        assert_eq!(
            doc,
            json!({"f:metadata": {"f:labels": {".": {}, "f:a": {}}}, "f:data": {".": {}, "f:k": {}}})
        );
        assert_eq!(parse_fields_v1(&doc), set);
    }
}
