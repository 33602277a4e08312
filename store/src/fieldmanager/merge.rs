//! Two objects merged as server-side apply merges them (`TypedValue.Merge`:
//! map and set lists item by item), and the fields of a set removed.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde_json::{Map, Value};

use super::fieldpath::{FieldSet, Tree, field};
use super::typed::{ListKind, Ty, item_element, item_elements};

/// `lhs` and `rhs` merged, `rhs` winning (`TypedValue.Merge`): maps field
/// by field, map and set lists item by item (in `rhs`'s order where both
/// have them), the rest replaced.
pub(crate) fn merge(lhs: Option<&Value>, rhs: Option<&Value>, ty: Ty<'_>) -> Option<Value> {
    let is_map = |v: Option<&Value>| v.is_none_or(Value::is_object);
    let is_list = |v: Option<&Value>| v.is_none_or(Value::is_array);
    if lhs.is_none() && rhs.is_none() {
        return None;
    }
    if is_map(lhs) && is_map(rhs) && !ty.atomic_map() {
        let l = lhs.and_then(Value::as_object);
        let r = rhs.and_then(Value::as_object);
        if l.is_none_or(Map::is_empty) && r.is_none_or(Map::is_empty) {
            return rhs.or(lhs).cloned();
        }
        let mut out = Map::new();
        let keys = l.into_iter().flat_map(Map::keys).chain(
            r.into_iter()
                .flat_map(Map::keys)
                .filter(|k| l.is_none_or(|l| !l.contains_key(k.as_str()))),
        );
        for key in keys {
            let merged = merge(
                l.and_then(|l| l.get(key)),
                r.and_then(|r| r.get(key)),
                ty.field(key),
            );
            if let Some(merged) = merged {
                out.insert(key.clone(), merged);
            }
        }
        return (!out.is_empty()).then_some(Value::Object(out));
    }
    if is_list(lhs) && is_list(rhs) {
        let l = lhs.and_then(Value::as_array).map(Vec::as_slice);
        let r = rhs.and_then(Value::as_array).map(Vec::as_slice);
        let list = ty.list();
        let empty = l.is_none_or(<[Value]>::is_empty) && r.is_none_or(<[Value]>::is_empty);
        if list == ListKind::Atomic || empty {
            return rhs.or(lhs).cloned();
        }
        return merge_items(&list, ty, l.unwrap_or_default(), r.unwrap_or_default())
            .unwrap_or_else(|| rhs.or(lhs).cloned());
    }
    rhs.or(lhs).cloned()
}

/// The items of two map or set lists merged (`mergingWalker.visitListItems`);
/// `None` when an item has no key or `rhs` gives one twice.
fn merge_items(list: &ListKind, ty: Ty<'_>, lhs: &[Value], rhs: &[Value]) -> Option<Option<Value>> {
    let r_elements = item_elements(list, ty, rhs)?;
    let l_elements = item_elements(list, ty, lhs)?;
    let mut observed_r: BTreeMap<&String, &Value> = BTreeMap::new();
    for (element, item) in r_elements.iter().zip(rhs) {
        if observed_r.insert(element, item).is_some() {
            return None;
        }
    }
    // Items `lhs` has twice are not merged with the new value.
    let mut observed_l: BTreeMap<&String, Option<&Value>> = BTreeMap::new();
    for (element, item) in l_elements.iter().zip(lhs) {
        observed_l
            .entry(element)
            .and_modify(|v| *v = None)
            .or_insert(Some(item));
    }
    let mut shared: VecDeque<&String> = r_elements
        .iter()
        .filter(|e| observed_l.contains_key(e))
        .collect();
    let mut next_shared = shared.pop_front();
    let mut merged_r: BTreeSet<&String> = BTreeSet::new();
    let mut out = Vec::new();
    let item_ty = ty.item();
    let (l_len, r_len) = (l_elements.len(), r_elements.len());
    let (mut li, mut ri) = (0, 0);
    while li < l_len || ri < r_len {
        if li < l_len && ri < r_len {
            let element = &l_elements[li];
            if *element == r_elements[ri] {
                merged_r.insert(element);
                let l_child = observed_l.get(element).copied().flatten();
                let r_child = observed_r.get(element).copied();
                out.extend(merge(l_child, r_child, item_ty));
                li += 1;
                ri += 1;
                next_shared = shared.pop_front();
                continue;
            }
            if observed_r.contains_key(element) && next_shared.is_some_and(|n| n != element) {
                li += 1;
                continue;
            }
        }
        if li < l_len {
            let element = &l_elements[li];
            if !observed_r.contains_key(element) {
                out.extend(merge(Some(&lhs[li]), None, item_ty));
                li += 1;
                continue;
            } else if merged_r.contains(element) {
                li += 1;
            }
        }
        if ri < r_len {
            let element = &r_elements[ri];
            merged_r.insert(element);
            let l_child = observed_l.get(element).copied().flatten();
            let r_child = observed_r.get(element).copied();
            out.extend(merge(l_child, r_child, item_ty));
            ri += 1;
            if next_shared.is_some_and(|n| n == element) {
                next_shared = shared.pop_front();
            }
        }
    }
    Some((!out.is_empty()).then_some(Value::Array(out)))
}

/// `value` without the fields and items `set` names (`TypedValue.RemoveItems`):
/// a map or list left empty by it stays, empty.
pub(crate) fn remove(value: &Value, set: &FieldSet, ty: Ty<'_>) -> Value {
    remove_walk(value, &Tree::of(set), ty).unwrap_or(Value::Null)
}

fn remove_walk(value: &Value, tree: &Tree, ty: Ty<'_>) -> Option<Value> {
    match value {
        Value::Object(map) if !map.is_empty() && !ty.atomic_map() => {
            let mut out = Map::new();
            let mut matched = false;
            for (key, child) in map {
                let mut child = child.clone();
                if let Some(node) = tree.children.get(&field(key)) {
                    if node.member {
                        continue;
                    }
                    if !node.children.is_empty() {
                        matched = true;
                        child = match remove_walk(&child, node, ty.field(key)) {
                            Some(v) => v,
                            None if child.is_object() => Value::Object(Map::new()),
                            None if child.is_array() => Value::Array(Vec::new()),
                            None => Value::Null,
                        };
                    }
                }
                out.insert(key.clone(), child);
            }
            (!out.is_empty() || matched).then_some(Value::Object(out))
        }
        Value::Array(items) if !items.is_empty() => {
            let list = ty.list();
            if list == ListKind::Atomic {
                return Some(value.clone());
            }
            let mut out = Vec::new();
            let mut matched = false;
            for item in items {
                let mut item = item.clone();
                if let Ok(element) = item_element(&list, ty, &item)
                    && let Some(node) = tree.children.get(&element)
                {
                    if node.member {
                        continue;
                    }
                    if !node.children.is_empty() {
                        matched = true;
                        item = match remove_walk(&item, node, ty.item()) {
                            Some(v) => v,
                            None if item.is_object() => Value::Object(Map::new()),
                            None if item.is_array() => Value::Array(Vec::new()),
                            None => Value::Null,
                        };
                    }
                }
                out.push(item);
            }
            (!out.is_empty() || matched).then_some(Value::Array(out))
        }
        other => Some(other.clone()),
    }
}
