//! A manifest as JSON, as `rekon check` prints it.

use serde_json::{Value, json};

use crate::contract::{Gvk, IndexKey, Manifest, Mapping, Predicate, Verbs, verb_names};
use crate::names::api_version;

fn kind_json(kind: &Gvk) -> Value {
    json!({ "apiVersion": api_version(kind), "kind": kind.kind })
}

fn verbs_json(verbs: Verbs) -> Vec<&'static str> {
    verb_names(verbs).collect()
}

fn predicates_json(predicates: &[Predicate]) -> Vec<&'static str> {
    predicates
        .iter()
        .map(|p| match p {
            Predicate::GenerationChanged => "generationChanged",
            Predicate::LabelsChanged => "labelsChanged",
            Predicate::AnnotationsChanged => "annotationsChanged",
            Predicate::ResourceVersionChanged => "resourceVersionChanged",
        })
        .collect()
}

/// A manifest as JSON, as `rekon check` prints it.
pub fn manifest_json(manifest: &Manifest) -> Value {
    json!({
        "name": manifest.name,
        "version": manifest.version,
        "primary": kind_json(&manifest.primary),
        "primarySelector": manifest.primary_selector,
        "primaryNamespaces": manifest.primary_namespaces,
        "primaryPredicates": predicates_json(&manifest.primary_predicates),
        "owns": manifest.owns.iter().map(|o| {
            let mut owned = kind_json(&o.kind);
            owned["predicates"] = json!(predicates_json(&o.predicates));
            owned
        }).collect::<Vec<_>>(),
        "watches": manifest.watches.iter().map(|w| {
            let mut watch = kind_json(&w.kind);
            watch["mapping"] = match &w.mapping {
                Mapping::OwnerReference => json!("ownerReference"),
                Mapping::Label(key) => json!({ "label": key }),
                Mapping::SameName => json!("sameName"),
                Mapping::AllPrimaries => json!("allPrimaries"),
            };
            watch["labelSelector"] = json!(w.label_selector);
            watch["predicates"] = json!(predicates_json(&w.predicates));
            watch
        }).collect::<Vec<_>>(),
        "finalizer": manifest.finalizer,
        "permissions": manifest.permissions.iter().map(|p| {
            let mut permission = kind_json(&p.kind);
            permission["verbs"] = json!(verbs_json(p.verbs));
            permission["namespaces"] = json!(p.namespaces);
            permission
        }).collect::<Vec<_>>(),
        "maxConcurrency": manifest.max_concurrency,
        "timeoutMs": manifest.timeout_ms,
        "resyncPeriodMs": manifest.resync_period_ms,
        "indexes": manifest.indexes.iter().map(|i| {
            let mut index = kind_json(&i.kind);
            index["name"] = json!(i.name);
            index["key"] = match &i.key {
                IndexKey::Field(path) => json!({ "field": path }),
                IndexKey::Label(key) => json!({ "label": key }),
            };
            index
        }).collect::<Vec<_>>(),
    })
}
