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
}
