//! Several versions of one kind combined into one CustomResourceDefinition.

use serde_json::{Value, json};

/// Combines the CRDs of several versions of one kind (as
/// [`CustomResource::crd`](super::CustomResource::crd) makes them) into one CRD with all their
/// versions, in the order given.
///
/// They must agree on the group, the scope and the names (kind, plural,
/// singular, list kind); their short names and categories are joined.
/// Exactly one version may be the storage version, and no version may
/// come twice.
///
/// ```
/// use rekon_sdk::crd::{Crd, merge};
/// use rekon_sdk::serde_json::json;
///
/// let v1 = Crd::new("demo.rekon.dev", "v1", "Thing").spec_schema(json!({"type": "object"}));
/// let v2 = Crd::new("demo.rekon.dev", "v2", "Thing")
///     .storage(false)
///     .spec_schema(json!({"type": "object"}));
/// let crd = merge([v1.build()?, v2.build()?])?;
/// assert_eq!(crd["spec"]["versions"][1]["name"], "v2");
/// # Ok::<(), String>(())
/// ```
pub fn merge(crds: impl IntoIterator<Item = Value>) -> Result<Value, String> {
    let mut crds = crds.into_iter();
    let Some(mut merged) = crds.next() else {
        return Err("no CRD to merge".into());
    };
    let describe = |crd: &Value| {
        let versions: Vec<&str> = versions_of(crd)
            .iter()
            .filter_map(|v| v.get("name").and_then(Value::as_str))
            .collect();
        format!(
            "{} {}",
            crd.pointer("/spec/names/kind")
                .and_then(Value::as_str)
                .unwrap_or("?"),
            versions.join("+")
        )
    };
    check_is_crd(&merged, 1)?;
    for (i, crd) in crds.enumerate() {
        check_is_crd(&crd, i + 2)?;
        let (first, this) = (describe(&merged), describe(&crd));
        for pointer in [
            "/spec/group",
            "/spec/scope",
            "/spec/names/kind",
            "/spec/names/plural",
            "/spec/names/singular",
            "/spec/names/listKind",
        ] {
            let (a, b) = (merged.pointer(pointer), crd.pointer(pointer));
            if a != b {
                let show =
                    |v: Option<&Value>| v.map_or_else(|| "nothing".to_owned(), Value::to_string);
                return Err(format!(
                    "cannot merge the CRD of {this} into that of {first}: {} differs ({} and {})",
                    pointer.trim_start_matches("/spec/").replace('/', "."),
                    show(a),
                    show(b)
                ));
            }
        }
        for list in ["shortNames", "categories"] {
            let more = crd
                .pointer(&format!("/spec/names/{list}"))
                .and_then(Value::as_array)
                .cloned();
            if let Some(more) = more {
                let names = &mut merged["spec"]["names"];
                let mut all = names
                    .get(list)
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                for name in more {
                    if !all.contains(&name) {
                        all.push(name);
                    }
                }
                names[list] = Value::Array(all);
            }
        }
        let existing: Vec<Value> = versions_of(&merged)
            .iter()
            .filter_map(|v| v.get("name").cloned())
            .collect();
        for version in versions_of(&crd) {
            if let Some(name) = version.get("name").filter(|n| existing.contains(n)) {
                return Err(format!(
                    "cannot merge the CRD of {this} into that of {first}: version {name} comes twice"
                ));
            }
            if let Some(Value::Array(versions)) = merged.pointer_mut("/spec/versions") {
                versions.push(version.clone());
            }
        }
    }
    let storage: Vec<String> = versions_of(&merged)
        .iter()
        .filter(|v| v.get("storage") == Some(&json!(true)))
        .filter_map(|v| v.get("name").and_then(Value::as_str).map(str::to_owned))
        .collect();
    match storage.as_slice() {
        [_] => Ok(merged),
        [] => Err(format!(
            "the CRD of {} has no storage version: exactly one version needs storage = true",
            describe(&merged)
        )),
        several => Err(format!(
            "the CRD of {} has {} storage versions ({}): exactly one may have storage = true",
            describe(&merged),
            several.len(),
            several.join(", ")
        )),
    }
}

fn versions_of(crd: &Value) -> &[Value] {
    crd.pointer("/spec/versions")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn check_is_crd(crd: &Value, position: usize) -> Result<(), String> {
    if crd.get("kind").and_then(Value::as_str) != Some("CustomResourceDefinition")
        || !crd.pointer("/spec/versions").is_some_and(Value::is_array)
    {
        return Err(format!(
            "CRD #{position} to merge is not a CustomResourceDefinition with spec.versions"
        ));
    }
    Ok(())
}

#[cfg(test)]
pub(super) mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::crd::Crd;

    pub(crate) fn version(kind: &str, version: &str, storage: bool) -> Value {
        Crd::new("demo.rekon.dev", version, kind)
            .namespaced(true)
            .storage(storage)
            .spec_schema(json!({"type": "object"}))
            .build()
            .expect("valid")
    }

    #[test]
    fn merge_joins_versions_in_order() {
        let mut v1 = version("App", "v1", true);
        v1["spec"]["names"]["shortNames"] = json!(["ap"]);
        let mut v2 = version("App", "v2", false);
        v2["spec"]["names"]["shortNames"] = json!(["ap", "a"]);
        let merged = merge([version("App", "v1beta1", false), v1, v2]).expect("merges");
        let names: Vec<&Value> = versions_of(&merged).iter().map(|v| &v["name"]).collect();
        assert_eq!(names, [&json!("v1beta1"), &json!("v1"), &json!("v2")]);
        assert_eq!(merged["spec"]["names"]["shortNames"], json!(["ap", "a"]));
        assert_eq!(merged["metadata"]["name"], "apps.demo.rekon.dev");
    }

    #[test]
    fn merge_errors_say_what_differs() {
        let mut cluster = version("App", "v2", false);
        cluster["spec"]["scope"] = json!("Cluster");
        let cases = [
            ("nothing", vec![], "no CRD to merge"),
            (
                "two storage versions",
                vec![version("App", "v1", true), version("App", "v2", true)],
                "the CRD of App v1+v2 has 2 storage versions (v1, v2): exactly one may have storage = true",
            ),
            (
                "no storage version",
                vec![version("App", "v1", false)],
                "has no storage version",
            ),
            (
                "different kinds",
                vec![version("App", "v1", true), version("Thing", "v2", false)],
                "cannot merge the CRD of Thing v2 into that of App v1: names.kind differs (\"App\" and \"Thing\")",
            ),
            (
                "different scopes",
                vec![version("App", "v1", true), cluster],
                "scope differs (\"Namespaced\" and \"Cluster\")",
            ),
            (
                "a version twice",
                vec![version("App", "v1", true), version("App", "v1", false)],
                "version \"v1\" comes twice",
            ),
            (
                "not a CRD",
                vec![version("App", "v1", true), json!({"kind": "ConfigMap"})],
                "CRD #2 to merge is not a CustomResourceDefinition",
            ),
        ];
        for (name, crds, expected) in cases {
            let err = merge(crds).expect_err(name);
            assert!(err.contains(expected), "{name}: {err}");
        }
    }
}
