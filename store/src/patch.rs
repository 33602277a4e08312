//! Patch application: JSON merge patch, strategic merge patch (list merge by
//! key for the common built-in lists).

use std::collections::BTreeSet;

use serde_json::Value;

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
                    let order = p
                        .get(&format!("$setElementOrder/{k}"))
                        .and_then(Value::as_array);
                    merge_list_by_key(existing, items, key, order);
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

/// Merges `items` into `existing` by `key`, then orders the result as
/// the real server does (`normalizeElementOrder`): the patch's items in
/// the patch's order (or `$setElementOrder`'s), merged with the items only
/// the server had, in their order; of two items the server had, the one it
/// had first goes first, and a new item goes before a server-only one.
fn merge_list_by_key(
    existing: &mut Vec<Value>,
    items: &[Value],
    key: &str,
    set_order: Option<&Vec<Value>>,
) {
    let original: Vec<Option<Value>> = existing.iter().map(|e| e.get(key).cloned()).collect();
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
    let order: Vec<Value> = match set_order {
        Some(order) => order.iter().filter_map(|o| o.get(key).cloned()).collect(),
        None => items
            .iter()
            .filter(|i| i.get("$patch").and_then(Value::as_str) != Some("delete"))
            .filter_map(|i| i.get(key).cloned())
            .collect(),
    };
    let server_index = |item: &Value| {
        item.get(key)
            .and_then(|id| original.iter().position(|o| o.as_ref() == Some(id)))
    };
    let (mut patched, mut server_only): (Vec<Value>, Vec<Value>) =
        existing.drain(..).partition(|e| {
            e.get(key).is_some_and(|id| order.contains(id)) || server_index(e).is_none()
        });
    patched.sort_by_key(|e| {
        e.get(key)
            .and_then(|id| order.iter().position(|o| o == id))
            .unwrap_or(usize::MAX)
    });
    server_only.sort_by_key(|e| server_index(e).unwrap_or(usize::MAX));
    let (mut left, mut right) = (
        patched.into_iter().peekable(),
        server_only.into_iter().peekable(),
    );
    loop {
        let take_left = match (left.peek(), right.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(l), Some(r)) => match (server_index(l), server_index(r)) {
                (Some(li), Some(ri)) => li < ri,
                _ => true,
            },
        };
        let next = if take_left { left.next() } else { right.next() };
        existing.extend(next);
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

    /// As a real kube-apiserver 1.36 orders a Deployment's containers
    /// `[a, b]` after a strategic merge patch of the given ones.
    #[test]
    fn strategic_merge_orders_lists_as_the_real_server() {
        for (patch, names) in [
            (json!([{"name": "c"}]), vec!["c", "a", "b"]),
            (
                json!([{"name": "b", "image": "x"}, {"name": "c"}]),
                vec!["a", "b", "c"],
            ),
            (
                json!([{"name": "c"}, {"name": "a", "image": "y"}]),
                vec!["c", "a", "b"],
            ),
            (
                json!([{"name": "c"}, {"name": "d"}]),
                vec!["c", "d", "a", "b"],
            ),
            (
                json!([{"name": "b", "image": "x"}, {"name": "a", "image": "y"}]),
                vec!["b", "a"],
            ),
        ] {
            let mut target = json!({"containers": [{"name": "a"}, {"name": "b"}]});
            strategic_merge(&mut target, &json!({"containers": patch}));
            let got: Vec<&str> = target["containers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["name"].as_str().unwrap())
                .collect();
            assert_eq!(got, names, "{patch}");
        }
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
}
