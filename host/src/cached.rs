//! The informers' compact form of an object, and the index that holds them.
//!
//! A cached object is its JSON text (what guests read, with managedFields
//! and the last-applied annotation stripped) plus the few fields the
//! controller indexes. Namespace, name, resourceVersion and labels are not
//! copied out of the text: they are spans into it, so an object costs its
//! JSON and about a hundred bytes more. The index ([`Objects`]) is ordered
//! by namespace then name, keyed by the objects themselves (no second copy
//! of the names).

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::ops::Bound;
use std::sync::Arc;

use kube::api::{ApiResource, DynamicObject};
use serde_json::Value;

/// One owner reference of a cached object.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Owner {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub controller: bool,
}

/// Where a string sits: in the JSON text, or (when the text holds it
/// escaped) in the object's side buffer.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Span {
    start: u32,
    end: u32,
}

/// Marks a span into the side buffer rather than the JSON text.
const SIDE: u32 = 1 << 31;

/// An object in an informer's cache.
#[derive(Debug)]
pub(crate) struct Cached {
    /// The object as compact JSON, managedFields and last-applied stripped.
    pub json: Box<str>,
    /// Namespace (empty when cluster-scoped), name, resourceVersion, then
    /// the labels as key and value, sorted by key.
    spans: Box<[Span]>,
    /// Strings that needed escaping in the JSON text (none, for objects a
    /// real API server validated).
    side: Box<str>,
    pub owners: Box<[Owner]>,
    pub finalizers: Box<[Box<str>]>,
    pub deleting: bool,
}

/// Writes a JSON string to `out` and returns where its contents are, or
/// appends them to `side` if the JSON form is escaped.
fn push_string(out: &mut String, side: &mut String, text: &str) -> Span {
    let encoded = serde_json::to_string(text).expect("a string serializes");
    let start = out.len() + 1;
    out.push_str(&encoded);
    if encoded.len() == text.len() + 2 {
        Span {
            start: start as u32,
            end: (start + text.len()) as u32,
        }
    } else {
        let start = side.len();
        side.push_str(text);
        Span {
            start: start as u32 | SIDE,
            end: side.len() as u32 | SIDE,
        }
    }
}

fn push_value(out: &mut String, value: &Value) {
    out.push_str(&serde_json::to_string(value).expect("a JSON value serializes"));
}

impl Cached {
    /// The cached form of `object`, served as `resource`.
    pub fn from_object(mut object: DynamicObject, resource: &ApiResource) -> Cached {
        let meta = &mut object.metadata;
        meta.managed_fields = None;
        if let Some(annotations) = meta.annotations.as_mut() {
            annotations.remove("kubectl.kubernetes.io/last-applied-configuration");
            if annotations.is_empty() {
                meta.annotations = None;
            }
        }
        let owners = meta
            .owner_references
            .iter()
            .flatten()
            .map(|o| Owner {
                api_version: o.api_version.clone(),
                kind: o.kind.clone(),
                name: o.name.clone(),
                controller: o.controller.unwrap_or(false),
            })
            .collect();
        let finalizers = meta
            .finalizers
            .iter()
            .flatten()
            .map(|f| f.as_str().into())
            .collect();
        let deleting = meta.deletion_timestamp.is_some();

        // The same text as serde_json gives for the object (keys sorted
        // within metadata and the body), with the indexed strings located.
        let mut out = String::with_capacity(1024);
        let mut side = String::new();
        let mut spans = vec![Span::default(); 3];
        out.push_str("{\"apiVersion\":");
        push_string(&mut out, &mut side, &resource.api_version);
        out.push_str(",\"kind\":");
        push_string(&mut out, &mut side, &resource.kind);
        out.push_str(",\"metadata\":{");
        let Value::Object(fields) =
            serde_json::to_value(&object.metadata).expect("metadata serializes")
        else {
            unreachable!("metadata serializes to an object")
        };
        for (i, (key, value)) in fields.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_string(&mut out, &mut side, key);
            out.push(':');
            match (key.as_str(), value) {
                ("namespace", Value::String(s)) => spans[0] = push_string(&mut out, &mut side, s),
                ("name", Value::String(s)) => spans[1] = push_string(&mut out, &mut side, s),
                ("resourceVersion", Value::String(s)) => {
                    spans[2] = push_string(&mut out, &mut side, s);
                }
                ("labels", Value::Object(labels)) => {
                    out.push('{');
                    for (j, (k, v)) in labels.iter().enumerate() {
                        if j > 0 {
                            out.push(',');
                        }
                        let key = push_string(&mut out, &mut side, k);
                        out.push(':');
                        match v {
                            Value::String(v) => {
                                let value = push_string(&mut out, &mut side, v);
                                spans.extend([key, value]);
                            }
                            other => push_value(&mut out, other),
                        }
                    }
                    out.push('}');
                }
                (_, value) => push_value(&mut out, value),
            }
        }
        out.push('}');
        if let Value::Object(body) = &object.data {
            for (key, value) in body {
                if matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
                    continue;
                }
                out.push(',');
                push_string(&mut out, &mut side, key);
                out.push(':');
                push_value(&mut out, value);
            }
        }
        out.push('}');
        Cached {
            json: out.into_boxed_str(),
            spans: spans.into_boxed_slice(),
            side: side.into_boxed_str(),
            owners,
            finalizers,
            deleting,
        }
    }

    fn text(&self, span: Span) -> &str {
        if span.start & SIDE != 0 {
            &self.side[(span.start & !SIDE) as usize..(span.end & !SIDE) as usize]
        } else {
            &self.json[span.start as usize..span.end as usize]
        }
    }

    /// The namespace, if namespaced.
    pub fn namespace(&self) -> Option<&str> {
        Some(self.text(self.spans[0])).filter(|n| !n.is_empty())
    }

    /// The name.
    pub fn name(&self) -> &str {
        self.text(self.spans[1])
    }

    /// The resourceVersion.
    pub fn resource_version(&self) -> &str {
        self.text(self.spans[2])
    }

    /// The value of a label.
    pub fn label(&self, key: &str) -> Option<&str> {
        let labels = &self.spans[3..];
        let count = labels.len() / 2;
        let mut low = 0;
        let mut high = count;
        while low < high {
            let mid = (low + high) / 2;
            match self.text(labels[2 * mid]).cmp(key) {
                Ordering::Equal => return Some(self.text(labels[2 * mid + 1])),
                Ordering::Less => low = mid + 1,
                Ordering::Greater => high = mid,
            }
        }
        None
    }

    /// Whether `finalizer` is among the object's finalizers.
    pub fn has_finalizer(&self, finalizer: &str) -> bool {
        self.finalizers.iter().any(|f| **f == *finalizer)
    }
}

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

/// Cached objects ordered by namespace then name.
#[derive(Debug, Default)]
pub(crate) struct Objects {
    set: BTreeSet<Entry>,
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
        self.set.replace(Entry(object));
    }

    /// Removes the object with the same key as `object`.
    pub fn remove(&mut self, object: &Cached) {
        let key = (object.namespace().unwrap_or_default(), object.name());
        self.set.remove(&key as &dyn ObjectKey);
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
    use super::*;
    use serde_json::json;

    fn config_maps() -> ApiResource {
        ApiResource {
            group: String::new(),
            version: "v1".into(),
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            plural: "configmaps".into(),
        }
    }

    fn cached(value: Value) -> Cached {
        Cached::from_object(serde_json::from_value(value).unwrap(), &config_maps())
    }

    #[test]
    fn the_text_is_what_serde_json_writes_without_managed_fields() {
        let object = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {
                "name": "web", "namespace": "shop", "resourceVersion": "42",
                "labels": { "b": "2", "a": "1" },
                "annotations": {
                    "kubectl.kubernetes.io/last-applied-configuration": "{}",
                    "note": "say \"hi\"\n",
                },
                "finalizers": ["demo.rekon.dev/cleanup"],
                "ownerReferences": [{ "apiVersion": "demo.rekon.dev/v1", "kind": "App",
                    "name": "web", "uid": "u1", "controller": true }],
                "managedFields": [{ "manager": "kubectl" }],
            },
            "data": { "z": "last", "a": "first" },
        });
        let cached = cached(object.clone());
        let mut expected: DynamicObject = serde_json::from_value(object).unwrap();
        expected.metadata.managed_fields = None;
        expected
            .metadata
            .annotations
            .as_mut()
            .unwrap()
            .remove("kubectl.kubernetes.io/last-applied-configuration");
        assert_eq!(&*cached.json, serde_json::to_string(&expected).unwrap());
        assert_eq!(cached.namespace(), Some("shop"));
        assert_eq!(cached.name(), "web");
        assert_eq!(cached.resource_version(), "42");
        assert_eq!(cached.label("a"), Some("1"));
        assert_eq!(cached.label("b"), Some("2"));
        assert_eq!(cached.label("c"), None);
        assert!(cached.has_finalizer("demo.rekon.dev/cleanup"));
        assert!(cached.owners[0].controller);
    }

    #[test]
    fn strings_that_need_escaping_read_back_unescaped() {
        let cached = cached(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": { "name": "we\"ird", "labels": { "k\\": "v\"" } },
        }));
        assert_eq!(cached.name(), "we\"ird");
        assert_eq!(cached.namespace(), None);
        assert_eq!(cached.label("k\\"), Some("v\""));
        let back: Value = serde_json::from_str(&cached.json).unwrap();
        assert_eq!(back["metadata"]["name"], "we\"ird");
    }

    #[test]
    fn objects_are_ordered_by_namespace_then_name() {
        let mut objects = Objects::default();
        for (ns, name) in [("a-b", "x"), ("a", "y"), ("a", "x"), ("b", "a")] {
            objects.insert(Arc::new(cached(json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": { "name": name, "namespace": ns },
            }))));
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
