//! A claim's spec as Go's `encoding/json` writes the real server's
//! internal `core.PersistentVolumeClaimSpec` (no JSON tags: Go's field
//! names, every field, in the struct's order), the way its immutability
//! refusal shows the spec before and after (`diff.Diff`).

use serde_json::Value;

use crate::go::json::encode::{go_json, go_struct_json};

/// The internal spec of v1 `spec`, compact.
pub(super) fn go_internal_claim_spec(spec: &Value) -> String {
    let field = |key: &str| spec.get(key).filter(|v| !v.is_null());
    let or_null = |value: Option<String>| value.unwrap_or_else(|| "null".into());
    let resources = spec.get("resources").filter(|r| r.is_object());
    let list = |key: &str| {
        or_null(
            resources
                .and_then(|r| r.get(key))
                .filter(|v| !v.is_null())
                .map(go_json),
        )
    };
    let fields = [
        ("AccessModes", or_null(field("accessModes").map(go_json))),
        ("Selector", or_null(field("selector").map(selector))),
        (
            "Resources",
            format!(
                "{{\"Limits\":{},\"Requests\":{}}}",
                list("limits"),
                list("requests")
            ),
        ),
        (
            "VolumeName",
            go_json(field("volumeName").unwrap_or(&Value::String(String::new()))),
        ),
        (
            "StorageClassName",
            or_null(field("storageClassName").map(go_json)),
        ),
        ("VolumeMode", or_null(field("volumeMode").map(go_json))),
        (
            "DataSource",
            or_null(field("dataSource").map(|r| reference(r, &["apiGroup", "kind", "name"]))),
        ),
        (
            "DataSourceRef",
            or_null(
                field("dataSourceRef")
                    .map(|r| reference(r, &["apiGroup", "kind", "name", "namespace"])),
            ),
        ),
        (
            "VolumeAttributesClassName",
            or_null(field("volumeAttributesClassName").map(go_json)),
        ),
    ];
    let written: Vec<String> = fields
        .iter()
        .map(|(name, value)| format!("\"{name}\":{value}"))
        .collect();
    format!("{{{}}}", written.join(","))
}

/// A `metav1.LabelSelector` (its JSON tags kept), in its fields' order
/// (a requirement's, `key`, `operator`, `values`, are sorted already).
fn selector(value: &Value) -> String {
    go_struct_json(value, &["matchLabels", "matchExpressions"])
}

/// A typed reference: `APIGroup` and `Namespace` are pointers (`null`
/// when absent), `Kind` and `Name` strings.
fn reference(value: &Value, keys: &[&str]) -> String {
    let written: Vec<String> = keys
        .iter()
        .map(|key| {
            let mut name = key.to_string();
            name.replace_range(0..1, &name[0..1].to_uppercase());
            if *key == "apiGroup" {
                name = "APIGroup".into();
            }
            let given = value.get(*key).filter(|v| !v.is_null());
            let text = match (given, *key) {
                (Some(v), _) => go_json(v),
                (None, "kind" | "name") => "\"\"".into(),
                (None, _) => "null".into(),
            };
            format!("\"{name}\":{text}")
        })
        .collect();
    format!("{{{}}}", written.join(","))
}
