//! What `apiextensions.k8s.io/v1` fills in a CRD
//! (`SetDefaults_CustomResourceDefinition` and its spec's), and the stored
//! versions its status keeps.

use serde_json::{Value, json};

/// Fills in what `apiextensions.k8s.io/v1` defaults (and drops what its
/// decoding drops: `default: null` in a schema): `names.singular`
/// (the kind in lower case), `names.listKind` (the kind + `List`), the
/// conversion strategy `None`, port 443 of a conversion webhook's
/// service, and `status.storedVersions` (the storage version) when empty.
pub fn default_crd(crd: &mut Value) {
    let Some(spec) = crd.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if let Some(names) = spec.get_mut("names").and_then(Value::as_object_mut) {
        let kind = names
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if names
            .get("singular")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            names.insert("singular".into(), json!(kind.to_lowercase()));
        }
        if names
            .get("listKind")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
            && !kind.is_empty()
        {
            names.insert("listKind".into(), json!(format!("{kind}List")));
        }
    }
    if let Some(Value::Array(versions)) = spec.get_mut("versions") {
        for version in versions {
            if let Some(schema) = version.pointer_mut("/schema/openAPIV3Schema") {
                drop_null_defaults(schema);
            }
        }
    }
    match spec.get_mut("conversion") {
        Some(Value::Object(conversion)) => {
            if let Some(Value::Object(service)) = conversion
                .get_mut("webhook")
                .and_then(|w| w.get_mut("clientConfig"))
                .and_then(|c| c.get_mut("service"))
                && !service.contains_key("port")
            {
                service.insert("port".into(), json!(443));
            }
        }
        _ => {
            spec.insert("conversion".into(), json!({"strategy": "None"}));
        }
    }
    let storage = spec
        .get("versions")
        .and_then(Value::as_array)
        .and_then(|vs| vs.iter().find(|v| v["storage"] == true))
        .and_then(|v| v["name"].as_str())
        .map(str::to_string);
    if let (Some(storage), Some(crd)) = (storage, crd.as_object_mut()) {
        let status = crd.entry("status").or_insert_with(|| json!({}));
        if let Some(status) = status.as_object_mut() {
            let empty = status
                .get("storedVersions")
                .and_then(Value::as_array)
                .is_none_or(Vec::is_empty);
            if empty {
                status.insert("storedVersions".into(), json!([storage]));
            }
        }
    }
}

/// The stored versions of a CRD replacing `old`: the old ones, and the new
/// storage version if it is not among them (`PrepareForUpdate`).
pub fn stored_versions(crd: &Value, old: Option<&Value>) -> Vec<String> {
    let mut stored: Vec<String> = old
        .and_then(|o| o.pointer("/status/storedVersions"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let storage = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .and_then(|vs| vs.iter().find(|v| v["storage"] == true))
        .and_then(|v| v["name"].as_str());
    if let Some(storage) = storage
        && !stored.iter().any(|s| s == storage)
    {
        stored.push(storage.to_string());
    }
    stored
}

/// Drops `default: null` and `example: null` from a schema and the
/// schemas beneath it: Go reads them into a nil `*JSON`, as if absent.
fn drop_null_defaults(schema: &mut Value) {
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    for key in ["default", "example"] {
        if map.get(key).is_some_and(Value::is_null) {
            map.remove(key);
        }
    }
    for key in ["items", "additionalProperties", "not", "additionalItems"] {
        if let Some(child) = map.get_mut(key) {
            match child {
                Value::Array(list) => list.iter_mut().for_each(drop_null_defaults),
                other => drop_null_defaults(other),
            }
        }
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(list)) = map.get_mut(key) {
            list.iter_mut().for_each(drop_null_defaults);
        }
    }
    for key in [
        "properties",
        "patternProperties",
        "definitions",
        "dependencies",
    ] {
        if let Some(Value::Object(children)) = map.get_mut(key) {
            children.values_mut().for_each(drop_null_defaults);
        }
    }
}
