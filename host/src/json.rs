//! JSON views of contract types, for the CLI and logs.

use serde_json::{Value, json};

use crate::bindings::{
    Gvk, Manifest, Mapping, ObjectRef, VERBS, Verbs, api_version, split_api_version,
};

fn kind_json(kind: &Gvk) -> Value {
    json!({ "apiVersion": api_version(kind), "kind": kind.kind })
}

fn verbs_json(verbs: Verbs) -> Vec<&'static str> {
    VERBS
        .into_iter()
        .filter(|(v, _)| verbs.contains(*v))
        .map(|(_, name)| name)
        .collect()
}

/// A manifest as JSON, as `rekon check` prints it.
pub fn manifest_json(manifest: &Manifest) -> Value {
    json!({
        "name": manifest.name,
        "version": manifest.version,
        "primary": kind_json(&manifest.primary),
        "owns": manifest.owns.iter().map(kind_json).collect::<Vec<_>>(),
        "watches": manifest.watches.iter().map(|w| {
            let mut watch = kind_json(&w.kind);
            watch["mapping"] = match &w.mapping {
                Mapping::OwnerReference => json!("ownerReference"),
                Mapping::Label(key) => json!({ "label": key }),
                Mapping::SameName => json!("sameName"),
                Mapping::AllPrimaries => json!("allPrimaries"),
            };
            watch["labelSelector"] = json!(w.label_selector);
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
    })
}

/// The [`ObjectRef`] naming a Kubernetes object given as JSON, if it has
/// apiVersion, kind and metadata.name.
pub fn object_ref_of(object: &Value) -> Option<ObjectRef> {
    let api_version = object["apiVersion"].as_str()?;
    let (group, version) = split_api_version(api_version);
    Some(ObjectRef {
        kind: Gvk {
            group: group.to_string(),
            version: version.to_string(),
            kind: object["kind"].as_str()?.to_string(),
        },
        namespace: object["metadata"]["namespace"].as_str().map(str::to_string),
        name: object["metadata"]["name"].as_str()?.to_string(),
    })
}
