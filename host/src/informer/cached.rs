//! The informers' compact form of an object: its JSON text (what guests
//! read, with managedFields and the last-applied annotation stripped) plus
//! the few fields the controller indexes. Namespace, name,
//! resourceVersion and labels are not copied out of the text: they are
//! spans into it, so an object costs its JSON and about a hundred bytes
//! more.

use std::cmp::Ordering;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{ApiResource, DynamicObject};
use serde_json::Value;

use super::incoming::Incoming;

/// One owner reference of a cached object.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Owner {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub uid: String,
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
    /// Namespace (empty when cluster-scoped), name, resourceVersion, uid,
    /// then the labels as key and value, sorted by key.
    spans: Box<[Span]>,
    /// Strings that needed escaping in the JSON text (none, for objects a
    /// real API server validated).
    side: Box<str>,
    pub owners: Box<[Owner]>,
    pub finalizers: Box<[Box<str>]>,
    pub deleting: bool,
    /// `metadata.generation` (0 for kinds without one).
    pub generation: i64,
    /// A digest of the annotations (0 without any), so a change of them
    /// is seen without keeping them twice.
    pub annotations_digest: u64,
}

/// Writes JSON text, locating strings as it goes.
struct Writer {
    out: Vec<u8>,
    side: String,
}

impl Writer {
    /// Writes a JSON string and returns where its contents are (in the
    /// side buffer if the JSON form is escaped).
    fn string(&mut self, text: &str) -> Span {
        let start = self.out.len() + 1;
        self.value(text);
        if self.out.len() == start + text.len() + 1 {
            Span {
                start: start as u32,
                end: (start + text.len()) as u32,
            }
        } else {
            let start = self.side.len();
            self.side.push_str(text);
            Span {
                start: start as u32 | SIDE,
                end: self.side.len() as u32 | SIDE,
            }
        }
    }

    fn value<T: serde::Serialize + ?Sized>(&mut self, value: &T) {
        serde_json::to_writer(&mut self.out, value).expect("a JSON value serializes");
    }

    /// Writes `,"key":` (no comma before the first field of an object).
    fn key(&mut self, key: &str, first: &mut bool) {
        if !std::mem::take(first) {
            self.out.push(b',');
        }
        self.string(key);
        self.out.push(b':');
    }

    /// Writes an optional field, as serde would (absent when `None`).
    fn field<T: serde::Serialize>(&mut self, key: &str, value: &Option<T>, first: &mut bool) {
        if let Some(value) = value {
            self.key(key, first);
            self.value(value);
        }
    }

    /// Writes an optional string field and returns where it is.
    fn string_field(&mut self, key: &str, value: &Option<String>, first: &mut bool) -> Span {
        match value {
            Some(value) => {
                self.key(key, first);
                self.string(value)
            }
            None => Span::default(),
        }
    }
}

/// The same text as serde_json gives for an object of `resource` with
/// `meta` and the top-level fields `body` (fields in the order k8s-openapi
/// and serde_json write them), with the indexed strings located on the
/// way: the JSON, the spans (namespace, name, resourceVersion, uid, then
/// label keys and values) and the side text spans may point into.
fn write_object<'a, V: serde::Serialize + 'a>(
    meta: &ObjectMeta,
    body: impl Iterator<Item = (&'a str, &'a V)>,
    resource: &ApiResource,
) -> (Box<str>, Box<[Span]>, Box<str>) {
    let mut w = Writer {
        out: Vec::with_capacity(1024),
        side: String::new(),
    };
    w.out.extend_from_slice(b"{\"apiVersion\":");
    w.string(&resource.api_version);
    w.out.extend_from_slice(b",\"kind\":");
    w.string(&resource.kind);
    w.out.extend_from_slice(b",\"metadata\":{");
    let first = &mut true;
    w.field("annotations", &meta.annotations, first);
    w.field("creationTimestamp", &meta.creation_timestamp, first);
    w.field(
        "deletionGracePeriodSeconds",
        &meta.deletion_grace_period_seconds,
        first,
    );
    w.field("deletionTimestamp", &meta.deletion_timestamp, first);
    w.field("finalizers", &meta.finalizers, first);
    w.field("generateName", &meta.generate_name, first);
    w.field("generation", &meta.generation, first);
    let mut labels = Vec::new();
    if let Some(map) = &meta.labels {
        w.key("labels", first);
        w.out.push(b'{');
        for (i, (key, value)) in map.iter().enumerate() {
            if i > 0 {
                w.out.push(b',');
            }
            let key = w.string(key);
            w.out.push(b':');
            labels.extend([key, w.string(value)]);
        }
        w.out.push(b'}');
    }
    let name = w.string_field("name", &meta.name, first);
    let namespace = w.string_field("namespace", &meta.namespace, first);
    w.field("ownerReferences", &meta.owner_references, first);
    let resource_version = w.string_field("resourceVersion", &meta.resource_version, first);
    w.field("selfLink", &meta.self_link, first);
    let uid = w.string_field("uid", &meta.uid, first);
    w.out.push(b'}');
    for (key, value) in body {
        if matches!(key, "apiVersion" | "kind" | "metadata") {
            continue;
        }
        w.out.push(b',');
        w.string(key);
        w.out.push(b':');
        w.value(value);
    }
    w.out.push(b'}');
    let mut spans = vec![namespace, name, resource_version, uid];
    spans.extend(labels);
    let json = String::from_utf8(w.out).expect("serde_json writes UTF-8");
    (
        json.into_boxed_str(),
        spans.into_boxed_slice(),
        w.side.into_boxed_str(),
    )
}

impl Cached {
    /// The cached form of `object`, served as `resource`.
    pub fn from_object(object: DynamicObject, resource: &ApiResource) -> Cached {
        let body = match &object.data {
            Value::Object(body) => Some(body.iter().map(|(key, value)| (key.as_str(), value))),
            _ => None,
        };
        Cached::build(object.metadata, body.into_iter().flatten(), resource)
    }

    /// The cached form of an object as a list or watch delivered it.
    pub fn from_incoming(object: Incoming, resource: &ApiResource) -> Cached {
        let body = object.body.iter().map(|(key, value)| (&**key, value));
        Cached::build(object.metadata, body, resource)
    }

    fn build<'a, V: serde::Serialize + 'a>(
        mut meta: ObjectMeta,
        body: impl Iterator<Item = (&'a str, &'a V)>,
        resource: &ApiResource,
    ) -> Cached {
        // Never written: managedFields (big, and of no use to reconcilers)
        // and the last-applied annotation (a copy of the object).
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
                uid: o.uid.clone(),
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
        let generation = meta.generation.unwrap_or(0);
        let annotations_digest = meta.annotations.as_ref().map_or(0, |annotations| {
            use std::hash::{Hash, Hasher};
            let mut hasher = std::collections::hash_map::DefaultHasher::new();
            annotations.hash(&mut hasher);
            hasher.finish() | 1
        });

        let (json, spans, side) = write_object(&meta, body, resource);
        Cached {
            json,
            spans,
            side,
            owners,
            finalizers,
            deleting,
            generation,
            annotations_digest,
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

    /// The uid (empty if the object has none).
    pub fn uid(&self) -> &str {
        self.text(self.spans[3])
    }

    /// The value of a label.
    pub fn label(&self, key: &str) -> Option<&str> {
        let labels = &self.spans[4..];
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

    /// The labels, as (key, value), sorted by key.
    pub fn labels(&self) -> impl Iterator<Item = (&str, &str)> {
        self.spans[4..]
            .as_chunks::<2>()
            .0
            .iter()
            .map(|[key, value]| (self.text(*key), self.text(*value)))
    }

    /// Whether `finalizer` is among the object's finalizers.
    pub fn has_finalizer(&self, finalizer: &str) -> bool {
        self.finalizers.iter().any(|f| **f == *finalizer)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    pub(crate) fn config_maps() -> ApiResource {
        ApiResource {
            group: String::new(),
            version: "v1".into(),
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            plural: "configmaps".into(),
        }
    }

    /// A cached object of `resource` from its JSON, decoded as the
    /// informers decode it.
    pub(crate) fn cached_object(value: Value, resource: &ApiResource) -> Cached {
        Cached::from_incoming(
            serde_json::from_str(&value.to_string()).expect("a Kubernetes object"),
            resource,
        )
    }

    fn cached(value: Value) -> Cached {
        cached_object(value, &config_maps())
    }

    #[test]
    fn the_text_is_what_serde_json_writes_without_managed_fields() {
        let object = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {
                "name": "web", "namespace": "shop", "resourceVersion": "42",
                "uid": "u0", "generation": 3, "generateName": "we",
                "creationTimestamp": "2026-01-01T00:00:00Z",
                "deletionTimestamp": "2026-01-02T00:00:00Z",
                "deletionGracePeriodSeconds": 30, "selfLink": "/api/v1/x",
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
        assert_eq!(cached.uid(), "u0");
        assert_eq!(cached.label("a"), Some("1"));
        assert_eq!(cached.label("b"), Some("2"));
        assert_eq!(cached.label("c"), None);
        assert!(cached.has_finalizer("demo.rekon.dev/cleanup"));
        assert!(cached.owners[0].controller);
        assert!(cached.deleting);
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
}
