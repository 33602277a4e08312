//! Conversion checked before anything is written: every object, read in
//! the storage version, converted to each other served version and back,
//! must come back as it was. A conversion that loses a field would lose it
//! for good once the object is written back.

use serde_json::Value;

/// Converts one object to another version of its kind (the module's
/// conversion, as the API server would call it).
#[async_trait::async_trait]
pub trait Converter: Send + Sync {
    /// `object` in `api_version`, or why it cannot be converted.
    async fn convert(&self, object: &Value, api_version: &str) -> Result<Value, String>;

    /// Whether this converter converts `kind` of `group` between its
    /// versions (checked even where the CRD does not say `Webhook`, as in
    /// `rekon dev`, whose API server asks the module in process).
    fn converts(&self, _group: &str, _kind: &str) -> bool {
        false
    }
}

/// Checks that `object` (in `storage`) survives a trip through each
/// version of `served`; the first loss found, worded for a log line.
pub async fn round_trip(
    converter: &dyn Converter,
    object: &Value,
    group: &str,
    storage: &str,
    served: &[String],
) -> Result<(), String> {
    let name = describe(object);
    let home = format!("{group}/{storage}");
    for version in served.iter().filter(|v| *v != storage) {
        let there = format!("{group}/{version}");
        let converted = converter
            .convert(object, &there)
            .await
            .map_err(|why| format!("{name}: converting to {there} failed: {why}"))?;
        let back = converter
            .convert(&converted, &home)
            .await
            .map_err(|why| format!("{name}: converting back from {there} failed: {why}"))?;
        if let Some(path) = first_difference(object, &back, "") {
            return Err(format!(
                "{name}: converted to {there} and back, {path} is not what it was"
            ));
        }
    }
    Ok(())
}

/// `namespace/name` of an object, or its name.
pub(crate) fn describe(object: &Value) -> String {
    let name = object
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("?");
    match object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
    {
        Some(namespace) => format!("{namespace}/{name}"),
        None => name.to_string(),
    }
}

/// The first field where `a` and `b` differ (`.spec.size`), if any.
fn first_difference(a: &Value, b: &Value, at: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter().find_map(|key| {
                let here = format!("{at}.{key}");
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) => first_difference(x, y, &here),
                    _ => Some(here),
                }
            })
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => a
            .iter()
            .zip(b)
            .enumerate()
            .find_map(|(i, (x, y))| first_difference(x, y, &format!("{at}[{i}]"))),
        _ if a == b => None,
        _ => Some(if at.is_empty() {
            ".".to_string()
        } else {
            at.to_string()
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// v1 has `size`; v2 calls it `replicas`. `lossy` forgets `color` in v1.
    struct Sizes {
        lossy: bool,
    }

    #[async_trait::async_trait]
    impl Converter for Sizes {
        async fn convert(&self, object: &Value, api_version: &str) -> Result<Value, String> {
            let mut out = object.clone();
            out["apiVersion"] = api_version.into();
            let spec = out["spec"].as_object_mut().ok_or("no spec")?;
            if api_version.ends_with("/v1") {
                let replicas = spec.remove("replicas").unwrap_or(Value::Null);
                spec.insert("size".into(), replicas);
                if self.lossy {
                    spec.remove("color");
                }
            } else {
                let size = spec.remove("size").unwrap_or(Value::Null);
                spec.insert("replicas".into(), size);
            }
            Ok(out)
        }
    }

    fn app() -> Value {
        json!({"apiVersion": "demo/v2", "metadata": {"name": "a", "namespace": "n"},
               "spec": {"replicas": 2, "color": "blue"}})
    }

    #[tokio::test]
    async fn a_lossless_conversion_round_trips() {
        let served = ["v1".to_string(), "v2".to_string()];
        round_trip(&Sizes { lossy: false }, &app(), "demo", "v2", &served)
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn a_conversion_that_drops_a_field_is_named_with_the_field() {
        let served = ["v1".to_string(), "v2".to_string()];
        let why = round_trip(&Sizes { lossy: true }, &app(), "demo", "v2", &served)
            .await
            .unwrap_err();
        assert_eq!(
            why,
            "n/a: converted to demo/v1 and back, .spec.color is not what it was"
        );
    }
}
