//! The index that holds an informer's objects ([`Objects`]): ordered by
//! namespace then name, keyed by the objects themselves (no second copy
//! of the names), with the secondary indexes modules declare.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::ops::Bound;
use std::sync::Arc;

use serde_json::Value;

use super::cached::Cached;

/// A (namespace, name) key; the namespace is "" when cluster-scoped.
pub(crate) trait ObjectKey {
    /// Namespace and name.
    fn parts(&self) -> (&str, &str);
}

impl ObjectKey for (&str, &str) {
    fn parts(&self) -> (&str, &str) {
        *self
    }
}

/// A cached object as an entry of [`Objects`], ordered by its key.
#[derive(Clone, Debug)]
struct Entry(Arc<Cached>);

impl ObjectKey for Entry {
    fn parts(&self) -> (&str, &str) {
        (self.0.namespace().unwrap_or_default(), self.0.name())
    }
}

impl<'a> Borrow<dyn ObjectKey + 'a> for Entry {
    fn borrow(&self) -> &(dyn ObjectKey + 'a) {
        self
    }
}

impl PartialEq for dyn ObjectKey + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.parts() == other.parts()
    }
}

impl Eq for dyn ObjectKey + '_ {}

impl PartialOrd for dyn ObjectKey + '_ {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for dyn ObjectKey + '_ {
    fn cmp(&self, other: &Self) -> Ordering {
        self.parts().cmp(&other.parts())
    }
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.parts() == other.parts()
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        self.parts().cmp(&other.parts())
    }
}

/// What an index keys objects by (a manifest's `index-key`, owned).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum IndexSpec {
    /// The value at a dotted field path.
    Field(String),
    /// A label's value.
    Label(String),
}

/// An object's place in an index: namespace ("" when cluster-scoped), name.
type Place = (Box<str>, Box<str>);

/// One index the cache keeps up to date: each key to the objects that
/// have it.
#[derive(Debug)]
struct Index {
    spec: IndexSpec,
    by_key: std::collections::HashMap<String, BTreeSet<Place>>,
}

impl Index {
    fn keys(&self, object: &Value) -> Vec<String> {
        let key = match &self.spec {
            IndexSpec::Field(path) => rekon_rules::IndexKeyRef::Field(path),
            IndexSpec::Label(label) => rekon_rules::IndexKeyRef::Label(label),
        };
        rekon_rules::index_keys(object, key)
    }

    fn add(&mut self, object: &Cached, parsed: &Value) {
        for key in self.keys(parsed) {
            self.by_key.entry(key).or_default().insert((
                object.namespace().unwrap_or_default().into(),
                object.name().into(),
            ));
        }
    }

    fn remove(&mut self, object: &Cached, parsed: &Value) {
        let at = (
            Box::<str>::from(object.namespace().unwrap_or_default()),
            Box::<str>::from(object.name()),
        );
        for key in self.keys(parsed) {
            if let Some(objects) = self.by_key.get_mut(&key) {
                objects.remove(&at);
                if objects.is_empty() {
                    self.by_key.remove(&key);
                }
            }
        }
    }
}

/// An object's JSON, parsed for the indexes (an object the cache wrote
/// always parses).
fn parsed(object: &Cached) -> Value {
    serde_json::from_str(&object.json).unwrap_or(Value::Null)
}

/// Cached objects ordered by namespace then name, with the indexes asked
/// for, kept up to date as objects come and go.
#[derive(Debug, Default)]
pub(crate) struct Objects {
    set: BTreeSet<Entry>,
    indexes: Vec<Index>,
}

impl Objects {
    /// The object `name` in `namespace` ("" when cluster-scoped).
    pub fn get(&self, namespace: &str, name: &str) -> Option<&Arc<Cached>> {
        self.set
            .get(&(namespace, name) as &dyn ObjectKey)
            .map(|e| &e.0)
    }

    /// Adds or replaces an object.
    pub fn insert(&mut self, object: Arc<Cached>) {
        if !self.indexes.is_empty() {
            let now = parsed(&object);
            let before = self
                .get(object.namespace().unwrap_or_default(), object.name())
                .map(|held| (held.clone(), parsed(held)));
            for index in &mut self.indexes {
                if let Some((held, was)) = &before {
                    index.remove(held, was);
                }
                index.add(&object, &now);
            }
        }
        self.set.replace(Entry(object));
    }

    /// Removes the object with the same key as `object`.
    pub fn remove(&mut self, object: &Cached) {
        let key = (object.namespace().unwrap_or_default(), object.name());
        if let Some(held) = self.set.take(&key as &dyn ObjectKey)
            && !self.indexes.is_empty()
        {
            let was = parsed(&held.0);
            for index in &mut self.indexes {
                index.remove(&held.0, &was);
            }
        }
    }

    /// Keeps an index by `spec` from now on (built now if new).
    pub fn ensure_index(&mut self, spec: &IndexSpec) {
        if self.indexes.iter().any(|i| i.spec == *spec) {
            return;
        }
        let mut index = Index {
            spec: spec.clone(),
            by_key: std::collections::HashMap::new(),
        };
        for entry in &self.set {
            index.add(&entry.0, &parsed(&entry.0));
        }
        self.indexes.push(index);
    }

    /// Keeps the indexes `other` keeps (a relist replacing it).
    pub fn adopt_indexes(&mut self, other: &Objects) {
        for index in &other.indexes {
            self.ensure_index(&index.spec);
        }
    }

    /// Whether an index by `spec` is kept.
    #[cfg(test)]
    pub fn has_index(&self, spec: &IndexSpec) -> bool {
        self.indexes.iter().any(|i| i.spec == *spec)
    }

    /// The objects whose key in the index `spec` is `key` (in `namespace`,
    /// or all), in order: O(matches). None if no such index is kept.
    pub fn by_index(
        &self,
        spec: &IndexSpec,
        key: &str,
        namespace: Option<&str>,
    ) -> Option<Vec<Arc<Cached>>> {
        let index = self.indexes.iter().find(|i| i.spec == *spec)?;
        let Some(objects) = index.by_key.get(key) else {
            return Some(Vec::new());
        };
        Some(
            objects
                .iter()
                .filter(|(ns, _)| namespace.is_none_or(|n| **ns == *n))
                .filter_map(|(ns, name)| self.get(ns, name).cloned())
                .collect(),
        )
    }

    /// Every object, in order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<Cached>> {
        self.set.iter().map(|e| &e.0)
    }

    /// The objects of one namespace, in order.
    pub fn in_namespace<'a>(&'a self, namespace: &'a str) -> impl Iterator<Item = &'a Arc<Cached>> {
        let from = (namespace, "");
        self.set
            .range::<dyn ObjectKey, _>((Bound::Included(&from as &dyn ObjectKey), Bound::Unbounded))
            .take_while(move |e| e.0.namespace().unwrap_or_default() == namespace)
            .map(|e| &e.0)
    }

    /// How many objects.
    pub fn len(&self) -> usize {
        self.set.len()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::Objects;
    use crate::informer::cached::tests::{cached_object, config_maps};

    #[test]
    fn objects_are_ordered_by_namespace_then_name() {
        let mut objects = Objects::default();
        for (ns, name) in [("a-b", "x"), ("a", "y"), ("a", "x"), ("b", "a")] {
            objects.insert(Arc::new(cached_object(
                json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": { "name": name, "namespace": ns },
                }),
                &config_maps(),
            )));
        }
        let order: Vec<(String, String)> = objects
            .iter()
            .map(|o| (o.namespace().unwrap().into(), o.name().into()))
            .collect();
        assert_eq!(
            order,
            [("a", "x"), ("a", "y"), ("a-b", "x"), ("b", "a")]
                .map(|(n, m)| (n.to_string(), m.to_string()))
        );
        let in_a: Vec<&str> = objects.in_namespace("a").map(|o| o.name()).collect();
        assert_eq!(in_a, ["x", "y"]);
        assert_eq!(objects.get("a-b", "x").map(|o| o.name()), Some("x"));
        let gone = objects.get("a", "x").unwrap().clone();
        objects.remove(&gone);
        assert!(objects.get("a", "x").is_none());
        assert_eq!(objects.len(), 3);
    }
}
