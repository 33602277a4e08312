//! The field set of an object (`TypedValue.ToFieldSet`), and the check
//! that its map and set lists are keyed as their type says.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::fieldpath::{FieldPath, FieldSet, display, field};
use super::typed::{ListKind, Ty, element_display, item_element, item_elements};

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
