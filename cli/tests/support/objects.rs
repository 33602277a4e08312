//! Objects the tests write: ConfigMaps, Namespaces and Apps as YAML.

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

/// An App `default/name` of the example guest as YAML, with `spec`.
pub fn app_yaml(name: &str, spec: &str) -> String {
    format!(
        "apiVersion: demo.rekon.dev/v1\nkind: App\nmetadata: {{name: {name}, namespace: default}}\nspec: {spec}\n"
    )
}
