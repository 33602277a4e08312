//! How server-side apply types the built-in kinds, as a real
//! kube-apiserver 1.36 publishes them in its OpenAPI v3 documents
//! (`types.json`, written by `tools/managed-fields.py`): which lists are
//! sets, which are maps by which keys (a Deployment's containers by
//! `name`, a container's ports by `containerPort` and `protocol`, `TCP`
//! when absent), which structs and maps are atomic — owned as one field,
//! as `f:selector: {}` for a Deployment's LabelSelector, a RoleBinding's
//! `roleRef`, a Service's `selector`. Every other list is atomic, every
//! other map and struct is owned field by field.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde_json::Value;

use super::typed::ListKind;
use crate::machinery::object::strings;

/// One node of a built-in kind's type.
#[derive(Debug)]
pub(crate) enum Node {
    /// A scalar, or a value not looked into (a quantity, RawExtension).
    Leaf,
    /// A struct: an index into the types.
    Struct(usize),
    /// A list: its items, how it is owned, its keys' defaults.
    List {
        item: Box<Node>,
        kind: ListKind,
        defaults: Vec<(String, Value)>,
    },
    /// A map of values, owned entry by entry unless atomic.
    Map { value: Box<Node>, atomic: bool },
}

/// A struct type: whether it is atomic, its fields, and those that hold
/// a struct by value (not a pointer: there in the type's zero value).
#[derive(Debug, Default)]
pub(super) struct Type {
    atomic: bool,
    pub(super) fields: HashMap<String, Node>,
    by_value: Vec<String>,
    /// What its zero value holds of its other fields (null pointers,
    /// lists and maps, zero scalars, null times).
    zeros: Vec<(String, Value)>,
    /// Its scalars held by value with `omitempty`: not written when zero.
    pub(super) omitted: Vec<String>,
}

/// Every type of `types.json`, and each kind's.
#[derive(Debug, Default)]
pub(super) struct Types {
    pub(super) types: Vec<Type>,
    kinds: HashMap<String, Node>,
}

pub(super) fn types() -> &'static Types {
    static TYPES: OnceLock<Types> = OnceLock::new();
    TYPES.get_or_init(|| {
        let doc: Value = serde_json::from_str(include_str!("types.json")).unwrap_or_default();
        let empty = serde_json::Map::new();
        let defs = doc
            .get("types")
            .and_then(Value::as_object)
            .unwrap_or(&empty);
        let index: HashMap<&str, usize> = defs
            .keys()
            .enumerate()
            .map(|(i, name)| (name.as_str(), i))
            .collect();
        let types = defs
            .values()
            .map(|def| Type {
                atomic: def.get("a").is_some_and(|a| a == 1),
                fields: def
                    .get("f")
                    .and_then(Value::as_object)
                    .map(|fields| {
                        fields
                            .iter()
                            .map(|(name, node)| (name.clone(), parse(node, &index)))
                            .collect()
                    })
                    .unwrap_or_default(),
                by_value: strings(def.get("v")),
                zeros: entries(def.get("z")),
                omitted: strings(def.get("e")),
            })
            .collect();
        let kinds = doc
            .get("kinds")
            .and_then(Value::as_object)
            .unwrap_or(&empty)
            .iter()
            .map(|(kind, node)| (kind.clone(), parse(node, &index)))
            .collect();
        Types { types, kinds }
    })
}

/// The entries of a JSON object (none when it is absent or not one).
fn entries(object: Option<&Value>) -> Vec<(String, Value)> {
    object
        .and_then(Value::as_object)
        .map(|o| o.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
        .unwrap_or_default()
}

/// A node of `types.json` (see the tool for the forms).
fn parse(node: &Value, index: &HashMap<&str, usize>) -> Node {
    match node {
        Value::String(name) => index
            .get(name.as_str())
            .map_or(Node::Leaf, |i| Node::Struct(*i)),
        Value::Object(map) if map.contains_key("l") => {
            let kind = match map.get("t").and_then(Value::as_str) {
                Some("set") => ListKind::Set,
                Some("map") => ListKind::Map(strings(map.get("k"))),
                _ => ListKind::Atomic,
            };
            let defaults = entries(map.get("d"));
            Node::List {
                item: Box::new(parse(&map["l"], index)),
                kind,
                defaults,
            }
        }
        Value::Object(map) if map.contains_key("m") => Node::Map {
            value: Box::new(parse(&map["m"], index)),
            atomic: map.get("a").is_some_and(|a| a == 1),
        },
        _ => Node::Leaf,
    }
}

impl Node {
    /// The node of the field (or map entry) `name` below this one.
    pub(crate) fn field(&'static self, name: &str) -> Option<&'static Node> {
        match self {
            Node::Struct(i) => types().types[*i].fields.get(name),
            Node::Map { value, .. } => Some(value),
            _ => None,
        }
    }

    /// Whether `name` is a declared field of this struct (not a map's key).
    pub(crate) fn named(&self, name: &str) -> bool {
        match self {
            Node::Struct(i) => types().types[*i].fields.contains_key(name),
            Node::Map { .. } => false,
            _ => true,
        }
    }

    /// The node of a list's items.
    pub(crate) fn item(&'static self) -> Option<&'static Node> {
        match self {
            Node::List { item, .. } => Some(item),
            _ => None,
        }
    }

    /// How a list of this node is owned.
    pub(crate) fn list(&self) -> ListKind {
        match self {
            Node::List { kind, .. } => kind.clone(),
            _ => ListKind::Atomic,
        }
    }

    /// Whether a struct or map of this node is owned as one field: an
    /// atomic one, or a value the types declare no fields of (a
    /// ControllerRevision's RawExtension `data`, owned as `f:data: {}`).
    pub(crate) fn atomic(&self) -> bool {
        match self {
            Node::Struct(i) => types().types[*i].atomic,
            Node::Map { atomic, .. } => *atomic,
            Node::Leaf => true,
            Node::List { .. } => false,
        }
    }

    /// The default of the key field `key` of this list's items.
    pub(crate) fn key_default(&self, key: &str) -> Option<Value> {
        match self {
            Node::List { defaults, .. } => defaults
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.clone()),
            _ => None,
        }
    }
}

impl Node {
    /// The zero value of this struct as the real server encodes it: the
    /// structs it holds by value are there (`{}`), and the pointers, lists
    /// and maps it does not omit (null); the rest is absent.
    /// An object created is compared with it, so a struct held by value is
    /// never owned as a member of its own.
    pub(crate) fn zero(&self) -> Value {
        let Node::Struct(i) = self else {
            return Value::Null;
        };
        let ty = &types().types[*i];
        let mut out = serde_json::Map::new();
        for (name, value) in &ty.zeros {
            out.insert(name.clone(), value.clone());
        }
        for name in &ty.by_value {
            if let Some(node) = ty.fields.get(name) {
                out.insert(name.clone(), node.zero());
            }
        }
        Value::Object(out)
    }
}

impl Node {
    /// `value` (of this node) as the real server encodes what it decoded
    /// into the Go type: in each struct, the fields Go writes even when
    /// zero (a condition's `lastTransitionTime: null`, an Event's
    /// `reportingComponent: ""`) are there.
    pub(crate) fn fill_zeros(&'static self, value: &mut Value) {
        match (self, value) {
            (Node::Struct(i), Value::Object(map)) => {
                let ty = &types().types[*i];
                for (name, zero) in &ty.zeros {
                    if !map.contains_key(name) {
                        map.insert(name.clone(), zero.clone());
                    }
                }
                // A struct held by value is written even when zero (an
                // endpoint's `conditions: {}`).
                for name in &ty.by_value {
                    if !map.contains_key(name)
                        && let Some(node) = ty.fields.get(name)
                    {
                        map.insert(name.clone(), node.zero());
                    }
                }
                drop_omitted(ty, map);
                for (name, value) in map.iter_mut() {
                    if let Some(node) = ty.fields.get(name) {
                        node.fill_zeros(value);
                    }
                }
            }
            (Node::List { item, .. }, Value::Array(items)) => {
                items.iter_mut().for_each(|v| item.fill_zeros(v));
            }
            (Node::Map { value: node, .. }, Value::Object(map)) => {
                map.values_mut().for_each(|v| node.fill_zeros(v));
            }
            _ => {}
        }
    }
}

/// Drops the empty maps and lists of `map` (a struct of type `ty`) that Go
/// omits (`omitempty`: not among the zeros it writes), and its zero
/// scalars that `omitempty` leaves out.
fn drop_omitted(ty: &Type, map: &mut serde_json::Map<String, Value>) {
    super::omitempty::drop_zeros(ty, map);
    map.retain(|name, value| {
        let empty = match value {
            Value::Object(m) => m.is_empty(),
            Value::Array(a) => a.is_empty(),
            _ => false,
        };
        let collection = matches!(
            ty.fields.get(name),
            Some(Node::Map { .. } | Node::List { .. })
        );
        name == "metadata" || !(empty && collection && !ty.zeros.iter().any(|(n, _)| n == name))
    });
}

/// An object of a built-in kind as the real server encodes it once
/// decoded ([`Node::fill_zeros`]), but its metadata (the server's own).
pub(crate) fn encoded(object: &mut Value) {
    let Some(api_version) = object.get("apiVersion").and_then(Value::as_str) else {
        return;
    };
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let Some(kind) = object.get("kind").and_then(Value::as_str) else {
        return;
    };
    let Some(Node::Struct(i)) = shape(group, version, kind) else {
        return;
    };
    let ty = &types().types[*i];
    let Some(map) = object.as_object_mut() else {
        return;
    };
    for (name, value) in map.iter_mut() {
        if name != "metadata"
            && let Some(node) = ty.fields.get(name)
        {
            node.fill_zeros(value);
        }
    }
    drop_omitted(ty, map);
}

impl Node {
    /// `value` (of this node) as it reads back from the real server's
    /// protobuf storage, where an empty list or map is no value: in each
    /// struct, a list or map Go writes even when empty (not `omitempty`:
    /// a Role's `rules`) is `null` when it was sent empty.
    fn stored(&'static self, value: &mut Value) {
        match (self, value) {
            (Node::Struct(i), Value::Object(map)) => stored_fields(&types().types[*i], map, false),
            (Node::List { item, .. }, Value::Array(items)) => {
                items.iter_mut().for_each(|v| item.stored(v));
            }
            (Node::Map { value: node, .. }, Value::Object(map)) => {
                map.values_mut().for_each(|v| node.stored(v));
            }
            _ => {}
        }
    }
}

/// [`Node::stored`] on the fields of a struct of type `ty` (an object's
/// own metadata, the server's, left alone).
fn stored_fields(ty: &'static Type, map: &mut serde_json::Map<String, Value>, object: bool) {
    for (name, value) in map.iter_mut() {
        let Some(node) = ty
            .fields
            .get(name)
            .filter(|_| !(object && name == "metadata"))
        else {
            continue;
        };
        let empty = match value {
            Value::Object(m) => m.is_empty(),
            Value::Array(a) => a.is_empty(),
            _ => false,
        };
        let written = ty.zeros.iter().any(|(n, zero)| n == name && zero.is_null());
        if empty && written && matches!(node, Node::Map { .. } | Node::List { .. }) {
            *value = Value::Null;
        } else {
            node.stored(value);
        }
    }
}

/// An object of a built-in kind as the real server's storage gives it
/// back ([`Node::stored`]): what a client reads, after the field manager
/// saw the object as it was sent (an empty `rules: []` is owned, and
/// reads back `null`). The kinds kept as JSON (the aggregator's
/// APIServices, as CRDs) keep their empty lists.
pub(crate) fn stored(object: &mut Value) {
    let Some(api_version) = object.get("apiVersion").and_then(Value::as_str) else {
        return;
    };
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let Some(kind) = object.get("kind").and_then(Value::as_str) else {
        return;
    };
    if group == "apiregistration.k8s.io" {
        return;
    }
    let Some(Node::Struct(i)) = shape(group, version, kind) else {
        return;
    };
    if let Some(map) = object.as_object_mut() {
        let ty = &types().types[*i];
        stored_fields(ty, map, true);
        // The kind's own lists and maps Go writes even when nil (an
        // EndpointSlice's `ports: null`): there, owned by no one.
        for (name, zero) in &ty.zeros {
            if zero.is_null() && !map.contains_key(name) {
                map.insert(name.clone(), Value::Null);
            }
        }
    }
}

/// The type of the built-in kind `group/version/kind`, if it is one.
pub(crate) fn shape(group: &str, version: &str, kind: &str) -> Option<&'static Node> {
    let key = if group.is_empty() {
        format!("{version}/{kind}")
    } else {
        format!("{group}/{version}/{kind}")
    };
    types().kinds.get(&key)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(node: &'static Node, path: &[&str]) -> &'static Node {
        path.iter().fold(node, |node, name| match *name {
            "[]" => node.item().unwrap(),
            name => node.field(name).unwrap(),
        })
    }

    #[test]
    fn a_deployments_lists_and_atomic_structs_are_typed_as_the_real_server_types_them() {
        let deployment = shape("apps", "v1", "Deployment").unwrap();
        let containers = at(deployment, &["spec", "template", "spec", "containers"]);
        assert_eq!(containers.list(), ListKind::Map(vec!["name".into()]));
        let ports = at(containers, &["[]", "ports"]);
        assert_eq!(
            ports.list(),
            ListKind::Map(vec!["containerPort".into(), "protocol".into()])
        );
        assert_eq!(
            ports.key_default("protocol"),
            Some(serde_json::json!("TCP"))
        );
        assert!(at(deployment, &["spec", "selector"]).atomic());
        assert!(!at(deployment, &["spec", "template"]).atomic());
        let service = shape("", "v1", "Service").unwrap();
        assert!(at(service, &["spec", "selector"]).atomic());
        let binding = shape("rbac.authorization.k8s.io", "v1", "RoleBinding").unwrap();
        assert!(at(binding, &["roleRef"]).atomic());
        // Created, it is compared with its zero value: the structs it
        // holds by value are there already.
        let zero = deployment.zero();
        assert!(zero["spec"]["template"]["spec"].is_object(), "{zero}");
        assert!(zero["spec"]["strategy"].is_object(), "{zero}");
        assert!(zero["spec"]["selector"].is_null(), "{zero}");
        assert!(zero["spec"].get("replicas").is_none(), "{zero}");
        let config_map = shape("", "v1", "ConfigMap").unwrap();
        assert!(!at(config_map, &["data"]).atomic());
        assert!(!config_map.named("nothing"));
    }
}
