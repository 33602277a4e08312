//! What the host checks of a module before it runs: its manifest (names,
//! kinds, mappings, indexes) and the CRDs it ships.

use serde_json::Value;

use crate::contract::{IndexKey, Manifest};

/// Whether `name` is a DNS label: 1-63 characters of a-z, 0-9 and '-',
/// starting and ending with a letter or digit (what a module's and a
/// webhook's name must be).
pub fn dns_label(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
}

/// Parses and checks the CRDs a module ships: each must be a whole
/// `apiextensions.k8s.io/v1` CustomResourceDefinition named
/// `<plural>.<group>`, and no two may share a name.
pub(super) fn validate_crds(crds: &[String]) -> Result<Vec<Value>, String> {
    let mut checked: Vec<Value> = Vec::with_capacity(crds.len());
    for (index, text) in crds.iter().enumerate() {
        let crd: Value = serde_json::from_str(text)
            .map_err(|e| format!("CRD #{index} (of `crds`) is not JSON: {e}"))?;
        let name = crd["metadata"]["name"].as_str().unwrap_or_default();
        let what = if name.is_empty() {
            format!("CRD #{index}")
        } else {
            format!("CRD {name:?}")
        };
        if crd["apiVersion"] != "apiextensions.k8s.io/v1"
            || crd["kind"] != "CustomResourceDefinition"
        {
            return Err(format!(
                "{what} must be apiVersion apiextensions.k8s.io/v1, kind CustomResourceDefinition"
            ));
        }
        let spec = &crd["spec"];
        let (group, plural) = (
            spec["group"].as_str().unwrap_or_default(),
            spec["names"]["plural"].as_str().unwrap_or_default(),
        );
        if group.is_empty() || plural.is_empty() || spec["names"]["kind"].as_str().is_none() {
            return Err(format!(
                "{what} needs spec.group, spec.names.plural and spec.names.kind"
            ));
        }
        if name != format!("{plural}.{group}") {
            return Err(format!(
                "{what} must be named {plural}.{group} (spec.names.plural.spec.group)"
            ));
        }
        let versions = spec["versions"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        let storage = versions.iter().filter(|v| v["storage"] == true).count();
        if versions.is_empty() || storage != 1 {
            return Err(format!(
                "{what} needs spec.versions with exactly one storage version"
            ));
        }
        if checked.iter().any(|c| c["metadata"]["name"] == name) {
            return Err(format!("{what} is shipped twice"));
        }
        checked.push(crd);
    }
    Ok(checked)
}

/// Checks what the host relies on in a manifest.
pub(super) fn validate_manifest(manifest: &Manifest, reconciles: bool) -> Result<(), String> {
    let name = &manifest.name;
    if !dns_label(name) {
        return Err(format!(
            "name {name:?} must be a DNS label: 1-63 characters of a-z, 0-9 and '-', \
             starting and ending with a letter or digit"
        ));
    }
    let kinds = std::iter::once(&manifest.primary)
        .filter(|_| reconciles)
        .chain(manifest.owns.iter().map(|o| &o.kind))
        .chain(manifest.indexes.iter().map(|i| &i.kind))
        .chain(manifest.watches.iter().map(|w| &w.kind))
        .chain(manifest.permissions.iter().map(|p| &p.kind));
    for kind in kinds {
        if kind.kind.is_empty() || kind.version.is_empty() {
            return Err(format!(
                "kind {:?} (group {:?}, version {:?}) needs a kind and a version",
                kind.kind, kind.group, kind.version
            ));
        }
    }
    if manifest.max_concurrency == Some(0) {
        return Err("max-concurrency must be at least 1".into());
    }
    if manifest.timeout_ms == Some(0) {
        return Err("timeout-ms must be at least 1".into());
    }
    if manifest.resync_period_ms == Some(0) {
        return Err("resync-period-ms must be at least 1".into());
    }
    let selectors = manifest.primary_selector.iter().chain(
        manifest
            .watches
            .iter()
            .filter_map(|w| w.label_selector.as_ref()),
    );
    for selector in selectors {
        rekon_rules::LabelSelector::parse(selector)
            .map_err(|e| format!("label selector {selector:?} is invalid: {e}"))?;
    }
    validate_indexes(manifest)
}

fn validate_indexes(manifest: &Manifest) -> Result<(), String> {
    let mut names = std::collections::BTreeSet::new();
    for index in &manifest.indexes {
        let name = &index.name;
        let dns = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if !dns {
            return Err(format!(
                "index name {name:?} must be made of a-z, 0-9 and '-'"
            ));
        }
        if !names.insert(name) {
            return Err(format!("index {name:?} is declared twice"));
        }
        match &index.key {
            IndexKey::Field(path) if !rekon_rules::valid_field_path(path) => {
                return Err(format!(
                    "index {name:?}: field path {path:?} must be dotted names (spec.nodeName)"
                ));
            }
            IndexKey::Label(key) if key.is_empty() => {
                return Err(format!("index {name:?}: the label key is empty"));
            }
            _ => {}
        }
    }
    Ok(())
}
