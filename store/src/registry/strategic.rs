//! Strategic merge patch, as the real server applies it to the built-in
//! kinds (their lists' merge keys from `apis::fields`).

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::apis::fields::Shape;
use crate::go::fmt::go_print;
use crate::meta::status::Status;

/// Applies a strategic merge patch to `target`, an object of the shape
/// `shape` (a built-in kind's, [`Shape`]; `None` when it is not known:
/// lists are then replaced). A list is merged as the kind declares it:
/// item by item by its merge key, as a set of scalars, or replaced.
/// `$patch` (`replace`, `delete`, on objects and in lists), `$retainKeys`,
/// `$setElementOrder/...` and `$deleteFromPrimitiveList/...` directives are
/// understood; another `$patch` fails the patch as the real server's
/// `mergeMap` and `mergeSliceWithSpecialElements` fail it (a 500 without
/// a reason: their errors are not Statuses).
pub(crate) fn strategic_merge(
    target: &mut Value,
    patch: &Value,
    shape: Option<Shape>,
) -> Result<(), Status> {
    let (Some(t), Some(p)) = (target.as_object_mut(), patch.as_object()) else {
        *target = remove_directives(patch).unwrap_or(Value::Null);
        return Ok(());
    };
    // `handleDirectiveInMergeMap`.
    match p.get("$patch") {
        Some(Value::String(directive)) if directive == "replace" => {
            let mut rep = p.clone();
            rep.remove("$patch");
            *target = strip_directives(&Value::Object(rep));
            return Ok(());
        }
        Some(Value::String(directive)) if directive == "delete" => {
            *target = Value::Object(Map::new());
            return Ok(());
        }
        Some(directive) => return Err(bad_patch_type(directive, patch)),
        None => {}
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
        if v.is_null() || v.get("$patch").and_then(Value::as_str) == Some("delete") {
            t.remove(k);
            continue;
        }
        let field = shape.and_then(|s| s.field(k));
        let merge_key = field.and_then(Shape::merge_key);
        // A list merged by key: its special items first
        // (`mergeSliceWithSpecialElements`).
        let replaced = match (t.get(k), v, merge_key) {
            (Some(Value::Array(_)), Value::Array(items), Some(key)) if !key.is_empty() => {
                special_items(items, key)?
            }
            _ => false,
        };
        let merge_key = merge_key.filter(|_| !replaced);
        let order = || {
            p.get(&format!("$setElementOrder/{k}"))
                .and_then(Value::as_array)
        };
        match (t.get_mut(k), v, merge_key) {
            (Some(existing @ Value::Object(_)), Value::Object(_), _) => {
                strategic_merge(existing, v, field)?;
            }
            (Some(Value::Array(existing)), Value::Array(items), Some("")) => {
                merge_scalars(existing, items, order())?;
            }
            (Some(Value::Array(existing)), Value::Array(items), Some(key)) => {
                if items.iter().all(Value::is_object) && existing.iter().all(Value::is_object) {
                    merge_list_by_key(existing, items, key, order(), field.and_then(Shape::item))?;
                } else {
                    *existing = items.iter().map(strip_directives).collect();
                }
            }
            (Some(Value::Array(_)), Value::Array(items), None) => {
                let items = items
                    .iter()
                    .filter(|i| i.get("$patch").is_none())
                    .map(strip_directives)
                    .collect();
                t.insert(k.clone(), Value::Array(items));
            }
            // Not in the object, or of another type: the patch's value,
            // the maps that carry a directive left out (`removeDirectives`).
            _ => match remove_directives(v) {
                Some(value) => {
                    t.insert(k.clone(), value);
                }
                None => {
                    t.remove(k);
                }
            },
        }
    }
    if let Some(retain) = retain {
        t.retain(|k, _| retain.contains(k));
    }
    Ok(())
}

/// The special items of a patch's list merged by `key`, as
/// `mergeSliceWithSpecialElements` reads them: whether one replaces the
/// list; `delete` needs the merge key, `merge` and any other directive
/// fail.
fn special_items(items: &[Value], key: &str) -> Result<bool, Status> {
    let mut replace = false;
    for item in items {
        match item.get("$patch") {
            None => {}
            Some(Value::String(d)) if d == "delete" => {
                if item.get(key).is_none() {
                    return Err(Status::unknown(format!(
                        "map: {} does not contain declared merge key: {key}",
                        go_print(item)
                    )));
                }
            }
            Some(Value::String(d)) if d == "replace" => replace = true,
            Some(Value::String(d)) if d == "merge" => {
                return Err(Status::unknown(
                    "merging lists cannot yet be specified in the patch",
                ));
            }
            Some(directive) => return Err(bad_patch_type(directive, item)),
        }
    }
    Ok(replace)
}

/// `mergepatch.ErrBadPatchType`: a `$patch` the server does not know.
fn bad_patch_type(directive: &Value, map: &Value) -> Status {
    Status::unknown(format!(
        "unknown patch type: {} in map: {}",
        go_print(directive),
        go_print(map)
    ))
}

/// Merges the scalars `items` into `existing` as a set, ordered as keyed
/// items are (each value its own key).
fn merge_scalars(
    existing: &mut Vec<Value>,
    items: &[Value],
    set_order: Option<&Vec<Value>>,
) -> Result<(), Status> {
    let wrap = |v: &Value| serde_json::json!({ "v": v });
    let mut wrapped: Vec<Value> = existing.iter().map(wrap).collect();
    let items: Vec<Value> = items.iter().map(wrap).collect();
    let order = set_order.map(|o| o.iter().map(wrap).collect::<Vec<_>>());
    merge_list_by_key(&mut wrapped, &items, "v", order.as_ref(), None)?;
    *existing = wrapped.into_iter().map(|w| w["v"].clone()).collect();
    Ok(())
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
    item_shape: Option<Shape>,
) -> Result<(), Status> {
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
            (Some(i), _) => strategic_merge(&mut existing[i], item, item_shape)?,
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
    Ok(())
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

/// `removeDirectives`: a value the patch puts where the object has none
/// (or one of another type), without the maps that carry a `$patch`
/// (`None` when it is one); the other directives are not kept either.
fn remove_directives(v: &Value) -> Option<Value> {
    match v {
        Value::Object(m) if m.contains_key("$patch") => None,
        Value::Object(m) => Some(Value::Object(
            m.iter()
                .filter(|(k, _)| !k.starts_with('$'))
                .filter_map(|(k, v)| Some((k.clone(), remove_directives(v)?)))
                .collect(),
        )),
        Value::Array(a) => Some(Value::Array(
            a.iter().filter_map(remove_directives).collect(),
        )),
        other => Some(other.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The shape of a PodTemplate (its pod spec at `template.spec`).
    fn pod_template() -> Option<Shape> {
        let all = crate::resource::builtin::builtin_resources();
        let res = all.iter().find(|r| r.kind == "PodTemplate").unwrap();
        Shape::of(res)
    }

    fn spec(containers: Value) -> Value {
        json!({"template": {"spec": {"containers": containers}}})
    }

    #[test]
    fn strategic_merge_merges_containers_by_name() {
        let mut target =
            spec(json!([{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]));
        let patch = spec(json!([
            {"name": "b", "image": "b:2"}, {"name": "c", "image": "c:1"}, {"name": "a", "$patch": "delete"}]));
        strategic_merge(&mut target, &patch, pod_template()).unwrap();
        assert_eq!(
            target,
            spec(json!([{"name": "b", "image": "b:2"}, {"name": "c", "image": "c:1"}]))
        );
    }

    #[test]
    fn strategic_merge_merges_service_ports_by_port() {
        let all = crate::resource::builtin::builtin_resources();
        let service = Shape::of(all.iter().find(|r| r.kind == "Service").unwrap());
        let mut target = json!({"spec": {"ports": [
            {"name": "http", "port": 80, "targetPort": 8080}, {"name": "grpc", "port": 9090}]}});
        let patch = json!({"spec": {"ports": [
            {"port": 80, "targetPort": 8081}, {"port": 9090, "$patch": "delete"}]}});
        strategic_merge(&mut target, &patch, service).unwrap();
        assert_eq!(
            target,
            json!({"spec": {"ports": [{"name": "http", "port": 80, "targetPort": 8081}]}})
        );
    }

    #[test]
    fn a_replace_directive_replaces_the_list() {
        let mut target =
            spec(json!([{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]));
        let patch = spec(json!([{"$patch": "replace"}, {"name": "only", "image": "o:1"}]));
        strategic_merge(&mut target, &patch, pod_template()).unwrap();
        assert_eq!(target, spec(json!([{"name": "only", "image": "o:1"}])));
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
            let mut target = spec(json!([{"name": "a"}, {"name": "b"}]));
            strategic_merge(&mut target, &spec(patch.clone()), pod_template()).unwrap();
            let got: Vec<&str> = target["template"]["spec"]["containers"]
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
            None,
        )
        .unwrap();
        assert_eq!(target, json!({"data": {"b": "2"}, "args": ["y"]}));
    }

    #[test]
    fn directives_the_server_does_not_know_fail_and_new_maps_carrying_one_are_dropped() {
        let mut target = spec(json!([{"name": "a", "image": "a:1"}]));
        let bad = spec(json!([{"name": "a", "$patch": "explode"}]));
        let refused = strategic_merge(&mut target, &bad, pod_template()).unwrap_err();
        assert_eq!(refused.code, 500);
        assert_eq!(
            refused.message,
            "unknown patch type: explode in map: map[$patch:explode name:a]"
        );
        let keyless = spec(json!([{"image": "b:1", "$patch": "delete"}]));
        let refused = strategic_merge(&mut target, &keyless, pod_template()).unwrap_err();
        assert_eq!(
            refused.message,
            "map: map[$patch:delete image:b:1] does not contain declared merge key: name"
        );
        let mut object = json!({"metadata": {"name": "x"}});
        let patch = json!({"metadata": {"labels": {"$patch": "replace", "a": "b"},
            "annotations": {"kept": "yes", "gone": {"$patch": "delete"}}}});
        strategic_merge(&mut object, &patch, None).unwrap();
        assert_eq!(
            object,
            json!({"metadata": {"name": "x", "annotations": {"kept": "yes"}}})
        );
    }
}
