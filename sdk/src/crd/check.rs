//! Keeping a checked-in CRD in step with the code: the YAML it is written
//! as, and the comparison (a line diff) or rewrite (`REKON_UPDATE_CRDS=1`).

use serde_json::Value;

/// The environment variable that makes [`check_file`] rewrite the file.
#[cfg(not(target_arch = "wasm32"))]
pub const UPDATE_ENV: &str = "REKON_UPDATE_CRDS";

/// A CRD as YAML, after one comment line saying it is generated and how to
/// regenerate it (by the running package's tests).
#[cfg(not(target_arch = "wasm32"))]
pub fn to_yaml(crd: &Value) -> String {
    let package = std::env::var("CARGO_PKG_NAME").unwrap_or_else(|_| "<package>".into());
    let yaml = serde_yaml_ng::to_string(crd).expect("a JSON value is YAML");
    format!(
        "# Generated from Rust types by rekon_sdk::crd: do not edit. \
         Regenerate: {UPDATE_ENV}=1 cargo test -p {package}\n{yaml}"
    )
}

/// Checks that the YAML file at `path` says the same as `crd` (as values:
/// key order and comments do not matter); on a mismatch, the error is a
/// line diff of the two (keys sorted) and how to regenerate the file. With
/// `REKON_UPDATE_CRDS=1` set, writes [`to_yaml`]`(crd)` to `path` instead.
#[cfg(not(target_arch = "wasm32"))]
pub fn check_file(crd: &Value, path: impl AsRef<std::path::Path>) -> Result<(), String> {
    let path = path.as_ref();
    let package = std::env::var("CARGO_PKG_NAME").unwrap_or_else(|_| "<package>".into());
    let hint = format!("regenerate it with `{UPDATE_ENV}=1 cargo test -p {package}`");
    if std::env::var_os(UPDATE_ENV).is_some_and(|v| !v.is_empty() && v != "0") {
        return std::fs::write(path, to_yaml(crd))
            .map_err(|e| format!("cannot write {}: {e}", path.display()));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}; {hint}", path.display()))?;
    let checked_in: Value = serde_yaml_ng::from_str(&text)
        .map_err(|e| format!("{} is not one YAML document: {e}; {hint}", path.display()))?;
    if checked_in == *crd {
        return Ok(());
    }
    let diff = rekon_rules::diff_lines(&sorted_yaml(&checked_in), &sorted_yaml(crd), 2).join("\n");
    Err(format!(
        "{} is not the CRD the Rust types make (- in the file, + generated):\n{diff}\n{hint}",
        path.display()
    ))
}

#[cfg(not(target_arch = "wasm32"))]
fn sorted_yaml(value: &Value) -> String {
    fn sorted(value: &Value) -> Value {
        match value {
            Value::Object(obj) => {
                let mut keys: Vec<&String> = obj.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&obj[k])))
                        .collect(),
                )
            }
            Value::Array(values) => Value::Array(values.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    serde_yaml_ng::to_string(&sorted(value)).expect("a JSON value is YAML")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::crd::versions::tests::version;

    #[test]
    fn check_file_accepts_the_same_values_and_diffs_the_rest() {
        let dir = std::env::temp_dir().join(format!("rekon-crd-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("crd.yaml");
        let crd = version("App", "v1", true);
        std::fs::write(&path, to_yaml(&crd)).expect("write");
        check_file(&crd, &path).expect("the generated file matches");

        // Another key order and a comment: still the same CRD.
        std::fs::write(&path, format!("# hand-made\n{}", sorted_yaml(&crd))).expect("write");
        check_file(&crd, &path).expect("order and comments do not matter");

        let mut changed = crd.clone();
        changed["spec"]["scope"] = json!("Cluster");
        let err = check_file(&changed, &path).expect_err("differs");
        assert!(
            err.contains("-   scope: Namespaced\n+   scope: Cluster\n"),
            "{err}"
        );
        assert!(
            err.contains("REKON_UPDATE_CRDS=1 cargo test -p rekon-sdk"),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).expect("clean up");
    }
}
