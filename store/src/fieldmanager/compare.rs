//! Two objects compared (`TypedValue.Compare`): the fields added, changed
//! and removed.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::fieldpath::{FieldPath, FieldSet, field};
use super::typed::{ListKind, Ty, item_elements};

/// What changed from one object to another (`typed.Comparison`).
#[derive(Clone, Debug, Default)]
pub(crate) struct Comparison {
    /// Paths only the old object has.
    pub(crate) removed: FieldSet,
    /// Paths both have, with different values.
    pub(crate) modified: FieldSet,
    /// Paths only the new object has.
    pub(crate) added: FieldSet,
}

/// Compares `lhs` with `rhs` (`TypedValue.Compare`).
pub(crate) fn compare(lhs: Option<&Value>, rhs: Option<&Value>, ty: Ty<'_>) -> Comparison {
    let mut out = Comparison::default();
    if lhs.is_some() || rhs.is_some() {
        compare_walk(lhs, rhs, ty, &mut Vec::new(), &mut out);
    }
    for set in [&mut out.removed, &mut out.modified, &mut out.added] {
        set.remove(&Vec::new());
    }
    out
}

fn compare_walk(
    lhs: Option<&Value>,
    rhs: Option<&Value>,
    ty: Ty<'_>,
    path: &mut FieldPath,
    out: &mut Comparison,
) {
    // A null the old object held (a built-in kind's zero value encodes an
    // unset list or map so) is there: what the new one sets below it is
    // added, not the list or map itself.
    let empty;
    let lhs = match (lhs, rhs) {
        (Some(Value::Null), Some(Value::Object(m))) if !m.is_empty() => {
            empty = Value::Object(Map::new());
            Some(&empty)
        }
        (Some(Value::Null), Some(Value::Array(a))) if !a.is_empty() => {
            empty = Value::Array(Vec::new());
            Some(&empty)
        }
        _ => lhs,
    };
    let leaf = |out: &mut Comparison, path: &FieldPath| match (lhs, rhs) {
        (None, _) => {
            out.added.insert(path.clone());
        }
        (_, None) => {
            out.removed.insert(path.clone());
        }
        (Some(l), Some(r)) if l != r => {
            out.modified.insert(path.clone());
        }
        _ => {}
    };
    let container = |out: &mut Comparison, path: &FieldPath| match (lhs, rhs) {
        (None, _) => {
            out.added.insert(path.clone());
        }
        (_, None) => {
            out.removed.insert(path.clone());
        }
        _ => {}
    };
    let is_map = |v: Option<&Value>| v.is_none_or(Value::is_object);
    let is_list = |v: Option<&Value>| v.is_none_or(Value::is_array);
    if is_map(lhs) && is_map(rhs) && !ty.atomic_map() {
        let l = lhs.and_then(Value::as_object);
        let r = rhs.and_then(Value::as_object);
        if l.is_none_or(Map::is_empty) && r.is_none_or(Map::is_empty) {
            return leaf(out, path);
        }
        let keys: BTreeSet<&String> = l
            .into_iter()
            .flat_map(Map::keys)
            .chain(r.into_iter().flat_map(Map::keys))
            .collect();
        for key in keys {
            path.push(field(key));
            compare_walk(
                l.and_then(|l| l.get(key)),
                r.and_then(|r| r.get(key)),
                ty.field(key),
                path,
                out,
            );
            path.pop();
        }
        return container(out, path);
    }
    if is_list(lhs) && is_list(rhs) {
        let l = lhs
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let r = rhs
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let list = ty.list();
        if list == ListKind::Atomic || (l.is_empty() && r.is_empty()) {
            return leaf(out, path);
        }
        let (Some(l_elements), Some(r_elements)) =
            (item_elements(&list, ty, l), item_elements(&list, ty, r))
        else {
            return leaf(out, path);
        };
        let mut order: Vec<&String> = Vec::new();
        let mut l_values: BTreeMap<&String, Vec<&Value>> = BTreeMap::new();
        for (element, item) in l_elements.iter().zip(l) {
            let entry = l_values.entry(element).or_default();
            if entry.is_empty() {
                order.push(element);
            }
            entry.push(item);
        }
        let mut r_values: BTreeMap<&String, Vec<&Value>> = BTreeMap::new();
        for (element, item) in r_elements.iter().zip(r) {
            let entry = r_values.entry(element).or_default();
            if entry.is_empty() && !l_values.contains_key(element) {
                order.push(element);
            }
            entry.push(item);
        }
        let item_ty = ty.item();
        for element in order {
            let l_list = l_values.get(element).cloned().unwrap_or_default();
            let r_list = r_values.get(element).cloned().unwrap_or_default();
            path.push(element.clone());
            match (l_list.len(), r_list.len()) {
                (0..=1, 0..=1) => compare_walk(
                    l_list.first().copied(),
                    r_list.first().copied(),
                    item_ty,
                    path,
                    out,
                ),
                (2.., 2..) => {
                    if l_list != r_list {
                        out.modified.insert(path.clone());
                    }
                }
                (2.., _) => {
                    if let Some(r_item) = r_list.first() {
                        compare_walk(None, Some(r_item), item_ty, path, out);
                    }
                    out.removed.insert(path.clone());
                }
                (_, _) => {
                    if let Some(l_item) = l_list.first() {
                        compare_walk(Some(l_item), None, item_ty, path, out);
                    }
                    out.added.insert(path.clone());
                }
            }
            path.pop();
        }
        return container(out, path);
    }
    leaf(out, path)
}
