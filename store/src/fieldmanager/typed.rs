//! What a value's type says of its lists and maps (`typed.TypedValue`):
//! a list's kind (atomic, set, map by keys), and each item's path element.

use serde_json::{Map, Value};

use crate::go::json::encode::{write_go_json, write_go_string};
use crate::go::strconv::go_quote;
use crate::machinery::field::go_value;
use crate::schema::{Additional, Schema};

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
    Builtin(&'static super::builtin::Node),
    /// No schema: maps field by field, lists atomic.
    Untyped,
    /// A struct owned as one field (an owner reference).
    Atomic,
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
            Ty::Builtin(node) => node.field(name).map_or(Ty::Untyped, Ty::Builtin),
            _ => Ty::Untyped,
        }
    }

    /// The type of a built-in kind's objects: its shape, if its lists are
    /// typed.
    pub(crate) fn builtin(group: &str, version: &str, kind: &str) -> Ty<'static> {
        super::builtin::shape(group, version, kind).map_or(Ty::Root(None), Ty::Builtin)
    }

    /// The zero value of a built-in kind's objects (see
    /// [`super::builtin::Node::zero`]); `None` for other kinds.
    pub(crate) fn zero(self) -> Option<Value> {
        match self {
            Ty::Builtin(node) => Some(node.zero()),
            _ => None,
        }
    }

    /// Whether `name` is a declared field (a struct's), not a key of a map.
    pub(crate) fn named(self, name: &str) -> bool {
        match self {
            Ty::Root(Some(schema)) => {
                matches!(name, "apiVersion" | "kind" | "metadata")
                    || schema.properties.contains_key(name)
            }
            Ty::Schema(schema) => schema.properties.contains_key(name),
            Ty::Builtin(node) => {
                matches!(name, "apiVersion" | "kind" | "metadata") || node.named(name)
            }
            // Without a schema, fields are taken for a struct's.
            _ => true,
        }
    }

    /// The type of a list's items.
    pub(crate) fn item(self) -> Ty<'a> {
        match self {
            Ty::Schema(schema) => schema.items.as_deref().map_or(Ty::Untyped, Ty::Schema),
            Ty::Builtin(node) => node.item().map_or(Ty::Untyped, Ty::Builtin),
            Ty::OwnerReferences => Ty::Atomic,
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
            Ty::Builtin(node) => node.list(),
            _ => ListKind::Atomic,
        }
    }

    /// Whether a map of this type is owned as a whole.
    pub(crate) fn atomic_map(self) -> bool {
        match self {
            Ty::Schema(schema) => schema.map_type.as_deref() == Some("atomic"),
            Ty::Builtin(node) => node.atomic(),
            Ty::Atomic => true,
            _ => false,
        }
    }

    /// The default of the key field `key` of this list's items.
    pub(crate) fn key_default(self, key: &str) -> Option<Value> {
        if let Ty::Builtin(node) = self {
            return node.key_default(key);
        }
        match self.item() {
            Ty::Schema(item) => item.properties.get(key).and_then(|p| p.default.clone()),
            _ => None,
        }
    }

    /// The type at `path` below this one.
    pub(crate) fn at(self, path: &[String]) -> Ty<'a> {
        path.iter()
            .fold(self, |ty, element| match element.strip_prefix("f:") {
                Some(name) => ty.field(name),
                None => ty.item(),
            })
    }
}

/// The path element of a list item (`k:{"name":"x"}`, `v:"x"`), or why it
/// has none (structured-merge-diff's words).
pub(crate) fn item_element(list: &ListKind, ty: Ty<'_>, item: &Value) -> Result<String, String> {
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
pub(crate) fn item_elements(list: &ListKind, ty: Ty<'_>, items: &[Value]) -> Option<Vec<String>> {
    items
        .iter()
        .map(|item| item_element(list, ty, item).ok())
        .collect()
}

/// One path element as structured-merge-diff prints it: `.name`,
/// `[name="x"]`, `[="x"]`.
pub(crate) fn element_display(element: &str) -> String {
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
