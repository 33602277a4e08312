//! Objects the tests write: ConfigMaps and Namespaces.

use serde_json::{Value, json};

/// A ConfigMap `ns/name` with `annotations` and `data`.
pub fn configmap(ns: &str, name: &str, annotations: Value, data: Value) -> Value {
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": { "name": name, "namespace": ns, "annotations": annotations },
        "data": data,
    })
}

/// A Namespace `name`.
pub fn namespace(name: &str) -> Value {
    json!({ "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": name } })
}
