//! What `rekon new` writes into a project's files: the SDK dependency, the
//! owned kinds in each language, the CRD, and the templates filled in.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context as _, bail};
use serde_json::{Value, json};

use super::Kind;

/// The `rekon-sdk` dependency line of a Rust project.
pub(super) fn sdk_dependency(sdk: Option<&Path>) -> anyhow::Result<String> {
    let built_with = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sdk");
    let path = match sdk {
        Some(path) => Some(path.to_path_buf()),
        None => built_with.join("Cargo.toml").exists().then_some(built_with),
    };
    Ok(match path {
        Some(path) => {
            let path = std::fs::canonicalize(&path)
                .with_context(|| format!("--sdk {}: no such folder", path.display()))?;
            if !path.join("Cargo.toml").exists() {
                bail!("--sdk {}: no Cargo.toml there", path.display());
            }
            format!("{{ path = {:?} }}", path.display().to_string())
        }
        None => format!("{:?}", env!("CARGO_PKG_VERSION")),
    })
}

/// `.owns(...)` calls of the Rust manifest.
pub(super) fn owns_rust(owns: &[Kind]) -> String {
    owns.iter()
        .map(|o| {
            format!(
                "\n            .owns(Gvk::new({:?}, {:?}, {:?}))",
                o.group, o.version, o.kind
            )
        })
        .collect()
}

pub(super) fn owns_js(owns: &[Kind], configmap: bool) -> String {
    let gvk = |o: &Kind| {
        format!(
            "{{ group: '{}', version: '{}', kind: '{}' }}",
            o.group, o.version, o.kind
        )
    };
    let mut out = String::new();
    if configmap {
        out.push_str("/** @type {Rekon.Gvk} */\nconst CONFIGMAP = { group: '', version: 'v1', kind: 'ConfigMap' };\n");
    }
    out.push_str("/** The kinds this module owns. @type {Rekon.Gvk[]} */\nconst OWNED = [");
    out.push_str(&owns.iter().map(gvk).collect::<Vec<_>>().join(", "));
    out.push_str("];");
    out
}

pub(super) fn owns_py(owns: &[Kind], configmap: bool) -> String {
    let gvk = |o: &Kind| {
        format!(
            "Gvk(group=\"{}\", version=\"{}\", kind=\"{}\")",
            o.group, o.version, o.kind
        )
    };
    let mut out = String::new();
    if configmap {
        out.push_str("CONFIGMAP = Gvk(group=\"\", version=\"v1\", kind=\"ConfigMap\")\n");
    }
    out.push_str("OWNED = [");
    out.push_str(&owns.iter().map(gvk).collect::<Vec<_>>().join(", "));
    out.push_str("]\n\"\"\"The kinds this module owns.\"\"\"");
    out
}

/// The CRD of the primary kind, as the Rust template's types derive it:
/// `spec.message`, and a status with `observedGeneration` and conditions.
pub(super) fn crd(primary: &Kind, plural: &str, namespaced: bool) -> Value {
    let condition = json!({
        "type": "object",
        "required": ["type", "status"],
        "properties": {
            "type": {"type": "string"},
            "status": {"type": "string", "enum": ["True", "False", "Unknown"]},
            "reason": {"type": "string"},
            "message": {"type": "string"},
            "lastTransitionTime": {"type": "string", "format": "date-time"},
            "observedGeneration": {"type": "integer", "format": "int64"},
        },
    });
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{plural}.{}", primary.group)},
        "spec": {
            "group": primary.group,
            "names": {
                "kind": primary.kind,
                "listKind": format!("{}List", primary.kind),
                "plural": plural,
                "singular": primary.kind.to_ascii_lowercase(),
            },
            "scope": if namespaced { "Namespaced" } else { "Cluster" },
            "versions": [{
                "name": primary.version,
                "served": true,
                "storage": true,
                "subresources": {"status": {}},
                "additionalPrinterColumns": [
                    {"name": "Message", "type": "string", "jsonPath": ".spec.message"},
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                ],
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {
                            "type": "object",
                            "description": format!("What a {} asks for.", primary.kind),
                            "properties": {"message": {
                                "type": "string",
                                "default": "hello",
                                "description": format!("What the {} says.", primary.kind),
                            }},
                        },
                        "status": {
                            "type": "object",
                            "description": "What the reconciler saw last.",
                            "properties": {
                                "observedGeneration": {
                                    "type": "integer",
                                    "format": "int64",
                                    "description": "The generation this status describes.",
                                },
                                "conditions": {"type": "array", "items": condition},
                            },
                        },
                    },
                }},
            }],
        },
    })
}

/// A JSON value as a Python literal (`True`, `None`, dicts and lists).
pub(super) fn python_literal(value: &Value, indent: usize) -> String {
    let pad = "    ".repeat(indent + 1);
    let close = "    ".repeat(indent);
    match value {
        Value::Null => "None".to_string(),
        Value::Bool(true) => "True".to_string(),
        Value::Bool(false) => "False".to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => Value::String(s.clone()).to_string(),
        Value::Array(items) if items.is_empty() => "[]".to_string(),
        Value::Array(items) => {
            let items: Vec<String> = items
                .iter()
                .map(|v| format!("{pad}{},\n", python_literal(v, indent + 1)))
                .collect();
            format!("[\n{}{close}]", items.concat())
        }
        Value::Object(map) if map.is_empty() => "{}".to_string(),
        Value::Object(map) => {
            let items: Vec<String> = map
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{pad}{}: {},\n",
                        Value::String(k.clone()),
                        python_literal(v, indent + 1)
                    )
                })
                .collect();
            format!("{{\n{}{close}}}", items.concat())
        }
    }
}

/// Fills a template: `{{var}}` by its value; `{{#flag}}...{{/flag}}` kept
/// only when the flag is set, `{{^flag}}...{{/flag}}` only when it is not.
/// A block alone on its lines takes its line breaks with it.
pub(super) fn render(
    template: &str,
    vars: &BTreeMap<&'static str, String>,
    flags: &BTreeMap<&'static str, bool>,
) -> String {
    let mut text = template.to_string();
    for (flag, on) in flags {
        for (open, keep) in [
            (format!("{{{{#{flag}}}}}"), *on),
            (format!("{{{{^{flag}}}}}"), !*on),
        ] {
            let close = format!("{{{{/{flag}}}}}");
            while let Some(start) = text.find(&open) {
                let Some(end) = text[start..].find(&close).map(|e| start + e) else {
                    break;
                };
                let inner = text[start + open.len()..end].to_string();
                let mut after = end + close.len();
                let mut before = start;
                // Tags alone on their lines take those lines with them.
                let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
                let close_line = text[..end].rfind('\n').map_or(0, |i| i + 1);
                let alone = text[line_start..start].trim().is_empty()
                    && inner.starts_with('\n')
                    && text[close_line..end].trim().is_empty()
                    && text[after..].starts_with('\n');
                let inner = if alone {
                    before = line_start;
                    after += 1;
                    inner[1..close_line
                        .saturating_sub(start + open.len())
                        .min(inner.len())]
                        .to_string()
                } else {
                    inner
                };
                let replacement = if keep { inner } else { String::new() };
                text.replace_range(before..after, &replacement);
            }
        }
    }
    for (var, value) in vars {
        text = text.replace(&format!("{{{{{var}}}}}"), value);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(on: bool) -> BTreeMap<&'static str, bool> {
        BTreeMap::from([("webhook", on)])
    }

    #[test]
    fn blocks_are_kept_or_dropped_with_their_lines() {
        let vars = BTreeMap::from([("name", "demo".to_string())]);
        let template = "a {{name}}\n{{#webhook}}\nhooks\n{{/webhook}}\nb{{#webhook}}(w){{/webhook}}\n{{^webhook}}none{{/webhook}}\n";
        assert_eq!(
            render(template, &vars, &flags(true)),
            "a demo\nhooks\nb(w)\n\n"
        );
        assert_eq!(render(template, &vars, &flags(false)), "a demo\nb\nnone\n");
    }

    #[test]
    fn kinds_parse_with_and_without_a_group() {
        let core = Kind::parse("v1/ConfigMap", "--owns").unwrap();
        assert_eq!((core.group.as_str(), core.kind.as_str()), ("", "ConfigMap"));
        let apps = Kind::parse("apps/v1/Deployment", "--owns").unwrap();
        assert_eq!(apps.group, "apps");
        let error = Kind::parse("apps/Deployment", "--owns").unwrap_err();
        assert!(error.to_string().contains("GROUP/VERSION/KIND"), "{error}");
        assert!(Kind::parse("x.io/v1/lower", "--kind").is_err());
    }

    #[test]
    fn python_literals_spell_true_false_and_none() {
        let value = json!({"a": [true, false, null], "b": "x\"y", "c": {}});
        let text = python_literal(&value, 0);
        assert!(text.contains("True,") && text.contains("False,") && text.contains("None,"));
        assert!(text.contains(r#""b": "x\"y""#), "{text}");
    }
}
