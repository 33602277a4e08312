//! Server-side apply's field sets and merges, as
//! `sigs.k8s.io/structured-merge-diff` computes them: paths made of field
//! names, the keys of `x-kubernetes-list-type: map` items and the values of
//! `set` items (`f:name`, `k:{"name":"x"}`, `v:"x"`, as `fieldsV1` writes
//! them); an object's field set ([`field_set`]), two objects merged
//! ([`merge`]), compared ([`compare`]), items removed ([`remove`]).
//!
//! What a list is comes from a [`Ty`]: a custom resource's structural
//! schema (its list types; a list without one is atomic), the object's
//! metadata (`finalizers` a set, `ownerReferences` a map by `uid`), and
//! no schema elsewhere (the built-in kinds): maps field by field, lists
//! atomic.

mod builtin;

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde_json::{Map, Value};

use crate::go::json::encode::write_go_json;
use crate::go::json::encode::write_go_string;
use crate::go::strconv::go_quote;
use crate::machinery::field::go_value;
use crate::schema::{Additional, Schema};

/// A path: each element as `fieldsV1` writes it (`f:spec`, `k:{...}`, `v:...`).
pub(crate) type FieldPath = Vec<String>;

/// A set of paths, each one owned as a whole (a field, a list item).
pub(crate) type FieldSet = BTreeSet<FieldPath>;

/// The element of the field `name`.
pub(crate) fn field(name: &str) -> String {
    format!("f:{name}")
}

/// The type of a value, as far as apply cares.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Ty<'a> {
    /// An object of a kind: `metadata` is ObjectMeta, the rest follows the
    /// schema, if any.
    Root(Option<&'a Schema>),
    /// A node of a custom resource's schema.
    Schema(&'a Schema),
    /// `metadata`.
    ObjectMeta,
    /// `metadata.finalizers`: a set.
    Finalizers,
    /// `metadata.ownerReferences`: a map by `uid`.
    OwnerReferences,
    /// A node of a built-in kind's shape ([`builtin`]): its typed lists;
    /// maps field by field, other lists atomic.
    Builtin(&'static builtin::Node),
    /// No schema: maps field by field, lists atomic.
    Untyped,
}

/// How a list's items are owned.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum ListKind {
    /// As a whole.
    Atomic,
    /// Each value (`v:`).
    Set,
    /// Each item by its keys (`k:`).
    Map(Vec<String>),
}

impl<'a> Ty<'a> {
    /// The type of the field `name` of a map of this type.
    pub(crate) fn field(self, name: &str) -> Ty<'a> {
        match self {
            Ty::Root(_) if name == "metadata" => Ty::ObjectMeta,
            Ty::Root(Some(schema)) => Ty::Schema(schema).field(name),
            Ty::Schema(schema) => match schema.properties.get(name) {
                Some(child) => Ty::Schema(child),
                None => match &schema.additional_properties {
                    Some(Additional::Schema(child)) => Ty::Schema(child),
                    _ => Ty::Untyped,
                },
            },
            Ty::ObjectMeta => match name {
                "finalizers" => Ty::Finalizers,
                "ownerReferences" => Ty::OwnerReferences,
                _ => Ty::Untyped,
            },
            Ty::Builtin(_) if name == "metadata" => Ty::ObjectMeta,
            Ty::Builtin(node) => node.fields.get(name).map_or(Ty::Untyped, Ty::Builtin),
            _ => Ty::Untyped,
        }
    }

    /// The type of a built-in kind's objects: its shape, if its lists are
    /// typed.
    pub(crate) fn builtin(group: &str, kind: &str) -> Ty<'static> {
        builtin::shape(group, kind).map_or(Ty::Root(None), Ty::Builtin)
    }

    /// Whether `name` is a declared field (a struct's), not a key of a map.
    fn named(self, name: &str) -> bool {
        match self {
            Ty::Root(Some(schema)) => {
                matches!(name, "apiVersion" | "kind" | "metadata")
                    || schema.properties.contains_key(name)
            }
            Ty::Schema(schema) => schema.properties.contains_key(name),
            // Without a schema, fields are taken for a struct's.
            _ => true,
        }
    }

    /// The type of a list's items.
    pub(crate) fn item(self) -> Ty<'a> {
        match self {
            Ty::Schema(schema) => schema.items.as_deref().map_or(Ty::Untyped, Ty::Schema),
            Ty::Builtin(node) => node.item.as_deref().map_or(Ty::Untyped, Ty::Builtin),
            _ => Ty::Untyped,
        }
    }

    /// How a list of this type is owned.
    pub(crate) fn list(self) -> ListKind {
        match self {
            Ty::Schema(schema) => match schema.list_type.as_deref() {
                Some("map") if !schema.list_map_keys.is_empty() => {
                    ListKind::Map(schema.list_map_keys.clone())
                }
                Some("set") => ListKind::Set,
                _ => ListKind::Atomic,
            },
            Ty::Finalizers => ListKind::Set,
            Ty::OwnerReferences => ListKind::Map(vec!["uid".into()]),
            Ty::Builtin(node) => node.list.clone().unwrap_or(ListKind::Atomic),
            _ => ListKind::Atomic,
        }
    }

    /// Whether a map of this type is owned as a whole.
    fn atomic_map(self) -> bool {
        matches!(self, Ty::Schema(schema) if schema.map_type.as_deref() == Some("atomic"))
    }

    /// The default of the key field `key` of this list's items.
    fn key_default(self, key: &str) -> Option<Value> {
        if let Ty::Builtin(node) = self {
            return node.key_default(key);
        }
        match self.item() {
            Ty::Schema(item) => item.properties.get(key).and_then(|p| p.default.clone()),
            _ => None,
        }
    }

    /// The type at `path` below this one.
    fn at(self, path: &[String]) -> Ty<'a> {
        path.iter()
            .fold(self, |ty, element| match element.strip_prefix("f:") {
                Some(name) => ty.field(name),
                None => ty.item(),
            })
    }
}

/// The path element of a list item (`k:{"name":"x"}`, `v:"x"`), or why it
/// has none (structured-merge-diff's words).
fn item_element(list: &ListKind, ty: Ty<'_>, item: &Value) -> Result<String, String> {
    match list {
        ListKind::Map(keys) => {
            let fields = match item {
                Value::Null => {
                    return Err("associative list with keys may not have a null element".into());
                }
                Value::Object(fields) => fields,
                _ => {
                    return Err("associative list with keys may not have non-map elements".into());
                }
            };
            let mut key: Vec<(&str, std::borrow::Cow<'_, Value>)> = Vec::new();
            for name in keys {
                if let Some(value) = fields.get(name) {
                    key.push((name, std::borrow::Cow::Borrowed(value)));
                } else if let Some(default) = ty.key_default(name) {
                    key.push((name, std::borrow::Cow::Owned(default)));
                }
            }
            if key.is_empty() {
                let quoted: Vec<String> = keys.iter().map(|k| go_quote(k)).collect();
                return Err(format!(
                    "associative list with keys has an element that omits all key fields [{}] (and doesn't have default values for any key fields)",
                    quoted.join(" ")
                ));
            }
            // `k:` and the key fields as one JSON object, sorted by name.
            key.sort_by(|a, b| a.0.cmp(b.0));
            key.dedup_by(|a, b| a.0 == b.0);
            let mut element = String::from("k:{");
            for (i, (name, value)) in key.iter().enumerate() {
                if i > 0 {
                    element.push(',');
                }
                write_go_string(name, &mut element);
                element.push(':');
                write_go_json(value, &mut element);
            }
            element.push('}');
            Ok(element)
        }
        ListKind::Set => match item {
            Value::Object(_) => {
                Err("associative list without keys has an element that's a map type".into())
            }
            Value::Array(_) => Err("not supported: associative list with lists as elements".into()),
            Value::Null => {
                Err("associative list without keys has an element that's an explicit null".into())
            }
            scalar => {
                let mut element = String::from("v:");
                write_go_json(scalar, &mut element);
                Ok(element)
            }
        },
        ListKind::Atomic => Err("invalid indexing of non-associative list".into()),
    }
}

/// The path elements of a list's items, if each has one.
fn item_elements(list: &ListKind, ty: Ty<'_>, items: &[Value]) -> Option<Vec<String>> {
    items
        .iter()
        .map(|item| item_element(list, ty, item).ok())
        .collect()
}

/// One path element as structured-merge-diff prints it: `.name`,
/// `[name="x"]`, `[="x"]`.
fn element_display(element: &str) -> String {
    if let Some(name) = element.strip_prefix("f:") {
        return format!(".{name}");
    }
    if let Some(key) = element.strip_prefix("k:") {
        let fields: Vec<String> = serde_json::from_str::<Map<String, Value>>(key)
            .unwrap_or_default()
            .iter()
            .map(|(name, value)| format!("{name}={}", go_value(value)))
            .collect();
        return format!("[{}]", fields.join(","));
    }
    if let Some(value) = element.strip_prefix("v:") {
        let value: Value = serde_json::from_str(value).unwrap_or(Value::Null);
        return format!("[={}]", go_value(&value));
    }
    if let Some(index) = element.strip_prefix("i:") {
        return format!("[{index}]");
    }
    element.to_string()
}

/// A path as structured-merge-diff prints it: `.spec.users[name="x"].roles`.
pub(crate) fn display(path: &[String]) -> String {
    path.iter().map(|e| element_display(e)).collect()
}

/// The paths of `value` of type `ty` (`TypedValue.ToFieldSet`): each
/// scalar, atomic list or map, empty map, null, and each item of a set or
/// map list.
pub(crate) fn field_set(value: &Value, ty: Ty<'_>) -> FieldSet {
    let mut out = FieldSet::new();
    set_walk(value, ty, &mut Vec::new(), &mut out);
    out
}

fn set_walk(value: &Value, ty: Ty<'_>, path: &mut FieldPath, out: &mut FieldSet) {
    match value {
        Value::Object(map) if !ty.atomic_map() => {
            for (key, child) in map {
                path.push(field(key));
                set_walk(child, ty.field(key), path, out);
                let empty = child.is_null() || child.as_object().is_some_and(Map::is_empty);
                if empty || !ty.named(key) {
                    out.insert(path.clone());
                }
                path.pop();
            }
        }
        Value::Array(items) => {
            let list = ty.list();
            let elements = match list {
                ListKind::Atomic => None,
                _ => item_elements(&list, ty, items),
            };
            let Some(elements) = elements else {
                out.insert(path.clone());
                return;
            };
            let mut seen = BTreeSet::new();
            let mut duplicates = BTreeSet::new();
            for element in &elements {
                if !seen.insert(element) && duplicates.insert(element) {
                    path.push(element.clone());
                    out.insert(path.clone());
                    path.pop();
                }
            }
            for (element, item) in elements.iter().zip(items) {
                if duplicates.contains(element) {
                    continue;
                }
                path.push(element.clone());
                set_walk(item, ty.item(), path, out);
                out.insert(path.clone());
                path.pop();
            }
        }
        _ => {
            if !path.is_empty() {
                out.insert(path.clone());
            }
        }
    }
}

/// Why an applied object cannot be typed: its map and set lists' items
/// without keys, or given twice (`TypedValue.Validate`), as
/// structured-merge-diff words it.
pub(crate) fn check(value: &Value, ty: Ty<'_>) -> Vec<String> {
    let mut errors = Vec::new();
    check_walk(value, ty, &mut Vec::new(), &mut errors);
    errors
}

fn check_walk(value: &Value, ty: Ty<'_>, path: &mut FieldPath, errors: &mut Vec<String>) {
    match value {
        Value::Object(map) if !ty.atomic_map() => {
            for (key, child) in map {
                path.push(field(key));
                check_walk(child, ty.field(key), path, errors);
                path.pop();
            }
        }
        Value::Array(items) => {
            let list = ty.list();
            if list == ListKind::Atomic {
                return;
            }
            let mut seen = BTreeSet::new();
            for (index, item) in items.iter().enumerate() {
                match item_element(&list, ty, item) {
                    Err(why) => {
                        errors.push(format!("{}: element {index}: {why}", display(path)));
                        return;
                    }
                    Ok(element) => {
                        if !seen.insert(element.clone()) {
                            errors.push(format!(
                                "{}: duplicate entries for key {}",
                                display(path),
                                element_display(&element)
                            ));
                        }
                        path.push(element);
                        check_walk(item, ty.item(), path, errors);
                        path.pop();
                    }
                }
            }
        }
        _ => {}
    }
}

/// `set` with the declared fields above each path as paths of their own
/// (`Set.EnsureNamedFieldsAreMembers`).
pub(crate) fn with_named_fields(set: &FieldSet, ty: Ty<'_>) -> FieldSet {
    let mut out = set.clone();
    for path in set {
        let mut parent = ty;
        for (i, element) in path.iter().enumerate() {
            if let Some(name) = element.strip_prefix("f:")
                && parent.named(name)
            {
                out.insert(path[..=i].to_vec());
            }
            parent = parent.at(std::slice::from_ref(element));
        }
    }
    out
}

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

/// What changed from one object to another (`typed.Comparison`).
#[derive(Debug, Default)]
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

/// A field set as a tree: whether each node is in the set, and below it.
#[derive(Debug, Default)]
struct Tree {
    member: bool,
    children: BTreeMap<String, Tree>,
}

impl Tree {
    fn of(set: &FieldSet) -> Tree {
        let mut root = Tree::default();
        for path in set {
            let node = path.iter().fold(&mut root, |node, element| {
                node.children.entry(element.clone()).or_default()
            });
            node.member = true;
        }
        root
    }
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

/// The paths of `set` in the order structured-merge-diff iterates them:
/// at each level the paths that end there, then those below.
pub(crate) fn ordered(set: &FieldSet) -> Vec<FieldPath> {
    fn go(tree: &Tree, path: &mut FieldPath, out: &mut Vec<FieldPath>) {
        for (element, node) in &tree.children {
            if node.member {
                path.push(element.clone());
                out.push(path.clone());
                path.pop();
            }
        }
        for (element, node) in &tree.children {
            if !node.children.is_empty() {
                path.push(element.clone());
                go(node, path, out);
                path.pop();
            }
        }
    }
    let mut out = Vec::new();
    go(&Tree::of(set), &mut Vec::new(), &mut out);
    out
}

/// A field set as a `fieldsV1` document: `{}` for a path in the set, `.`
/// for one in the set with paths below it.
pub(crate) fn fields_v1(set: &FieldSet) -> Value {
    fn render(tree: &Tree) -> Value {
        let mut out = Map::new();
        if tree.member && !tree.children.is_empty() {
            out.insert(".".into(), Value::Object(Map::new()));
        }
        for (element, node) in &tree.children {
            out.insert(element.clone(), render(node));
        }
        Value::Object(out)
    }
    render(&Tree::of(set))
}

/// A `fieldsV1` document read back into a field set.
pub(crate) fn parse_fields_v1(doc: &Value) -> FieldSet {
    fn go(node: &Value, path: &mut FieldPath, out: &mut FieldSet) {
        let Some(map) = node.as_object() else { return };
        for (element, child) in map {
            if element == "." {
                continue;
            }
            path.push(element.clone());
            let children = child.as_object();
            if children.is_none_or(|c| c.is_empty() || c.contains_key(".")) {
                out.insert(path.clone());
            }
            go(child, path, out);
            path.pop();
        }
    }
    let mut out = FieldSet::new();
    go(doc, &mut Vec::new(), &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn users_schema() -> Schema {
        Schema::from_json(&json!({
            "type": "object",
            "properties": {
                "spec": {"type": "object", "properties": {
                    "users": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name"],
                        "items": {"type": "object", "properties": {
                            "name": {"type": "string"},
                            "roles": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                        }},
                    },
                    "args": {"type": "array", "items": {"type": "string"}},
                }},
            },
        }))
    }

    fn paths(set: &FieldSet) -> Vec<String> {
        ordered(set).iter().map(|p| display(p)).collect()
    }

    #[test]
    fn map_and_set_list_items_are_paths_of_their_own() {
        let schema = users_schema();
        let ty = Ty::Root(Some(&schema));
        let object = json!({"metadata": {"labels": {"a": "b"}, "finalizers": ["x"]},
            "spec": {"users": [{"name": "shop", "roles": ["read"]}], "args": ["1"]}});
        let set = field_set(&object, ty);
        assert_eq!(
            paths(&set),
            [
                ".metadata.finalizers[=\"x\"]",
                ".metadata.labels.a",
                ".spec.args",
                ".spec.users[name=\"shop\"]",
                ".spec.users[name=\"shop\"].name",
                ".spec.users[name=\"shop\"].roles[=\"read\"]",
            ]
        );
        let doc = fields_v1(&set);
        assert_eq!(
            doc["f:spec"]["f:users"]["k:{\"name\":\"shop\"}"],
            json!({".": {}, "f:name": {}, "f:roles": {"v:\"read\"": {}}})
        );
        assert_eq!(parse_fields_v1(&doc), set);
    }

    #[test]
    fn map_lists_merge_by_key_and_atomic_lists_are_replaced() {
        let schema = users_schema();
        let ty = Ty::Root(Some(&schema));
        let live = json!({"spec": {"users": [{"name": "shop", "roles": ["read"]}], "args": ["1"]}});
        let config = json!({"spec": {"users": [{"name": "report", "roles": ["write"]}, {"name": "shop", "roles": ["write"]}], "args": ["2"]}});
        let merged = merge(Some(&live), Some(&config), ty).unwrap();
        assert_eq!(
            merged,
            json!({"spec": {"users": [
                {"name": "report", "roles": ["write"]},
                {"name": "shop", "roles": ["read", "write"]},
            ], "args": ["2"]}})
        );
        let changes = compare(Some(&live), Some(&merged), ty);
        assert_eq!(
            paths(&changes.added),
            [
                ".spec.users[name=\"report\"]",
                ".spec.users[name=\"report\"].name",
                ".spec.users[name=\"report\"].roles",
                ".spec.users[name=\"report\"].roles[=\"write\"]",
                ".spec.users[name=\"shop\"].roles[=\"write\"]",
            ]
        );
        assert_eq!(paths(&changes.modified), [".spec.args"]);
        let removed = remove(
            &merged,
            &FieldSet::from([vec![
                field("spec"),
                field("users"),
                "k:{\"name\":\"shop\"}".into(),
            ]]),
            ty,
        );
        assert_eq!(
            removed["spec"]["users"],
            json!([{"name": "report", "roles": ["write"]}])
        );
    }

    #[test]
    fn items_without_keys_or_given_twice_cannot_be_typed() {
        let schema = users_schema();
        let ty = Ty::Root(Some(&schema));
        let object = json!({"spec": {"users": [{"name": "a"}, {"name": "a"}, {"roles": []}]}});
        assert_eq!(
            check(&object, ty),
            [
                ".spec.users: duplicate entries for key [name=\"a\"]",
                ".spec.users: element 2: associative list with keys has an element that omits all key fields [\"name\"] (and doesn't have default values for any key fields)",
            ]
        );
    }
}
