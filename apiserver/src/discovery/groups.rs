//! The discovery documents: `/version`, `/api`, `/apis`, a group, and a
//! group-version's resource list, versions in Kubernetes' priority order.

use rekon_store::ResourceInfo;
use rekon_store::resource::version_priority;
use serde_json::{Map, Value, json};

/// The `/version` document.
pub(crate) fn version() -> Value {
    json!({
        "major": "1",
        "minor": "36",
        "emulationMajor": "1",
        "emulationMinor": "36",
        "minCompatibilityMajor": "1",
        "minCompatibilityMinor": "35",
        "gitVersion": "v1.36.2-rekon",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-11-22T00:00:00Z",
        "goVersion": "go1.27.3",
        "compiler": "gc",
        "platform": "linux/amd64"
    })
}

/// The `/api` document.
pub(crate) fn core_versions(addr: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": addr}]
    })
}

/// Groups in order of first appearance, each with its versions: built-in
/// ones as recorded, a CRD's by Kubernetes' version priority (`v2` before
/// `v1` before `v1beta1` before `v1alpha1`), as apiextensions-apiserver
/// orders them, so the first is the preferred version.
fn groups(resources: &[ResourceInfo]) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for r in resources.iter().filter(|r| !r.group.is_empty()) {
        match out.iter_mut().find(|(g, _)| *g == r.group) {
            Some((_, vs)) => {
                if !vs.contains(&r.version) {
                    vs.push(r.version.clone());
                }
            }
            None => out.push((r.group.clone(), vec![r.version.clone()])),
        }
    }
    for (group, versions) in &mut out {
        let custom = resources
            .iter()
            .any(|r| r.group == *group && r.storage_version.is_some());
        if custom {
            versions.sort_by_key(|v| version_priority(v));
        }
    }
    out
}

fn group_doc(name: &str, versions: &[String]) -> Value {
    let vs: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{name}/{v}"), "version": v}))
        .collect();
    json!({
        "name": name,
        "versions": vs,
        "preferredVersion": vs.first().cloned().unwrap_or(Value::Null),
    })
}

/// The `/apis` document.
pub(crate) fn group_list(resources: &[ResourceInfo]) -> Value {
    let gs: Vec<Value> = groups(resources)
        .iter()
        .map(|(g, vs)| group_doc(g, vs))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": gs})
}

/// The `/apis/GROUP` document, if the group is served.
pub(crate) fn group(resources: &[ResourceInfo], name: &str) -> Option<Value> {
    let (g, vs) = groups(resources).into_iter().find(|(g, _)| g == name)?;
    let mut doc = group_doc(&g, &vs);
    let m = doc.as_object_mut()?;
    let mut out = Map::new();
    out.insert("kind".into(), json!("APIGroup"));
    out.insert("apiVersion".into(), json!("v1"));
    out.extend(std::mem::take(m));
    Some(Value::Object(out))
}

/// The `/api/v1` or `/apis/GROUP/VERSION` document, if served.
pub(crate) fn resource_list(
    resources: &[ResourceInfo],
    group: &str,
    version: &str,
) -> Option<Value> {
    let rs: Vec<&ResourceInfo> = resources
        .iter()
        .filter(|r| r.group == group && r.version == version)
        .collect();
    if rs.is_empty() {
        return None;
    }
    let list: Vec<Value> = rs.iter().flat_map(|r| r.to_discovery()).collect();
    let gv = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    let mut doc = Map::new();
    doc.insert("kind".into(), json!("APIResourceList"));
    if !group.is_empty() {
        doc.insert("apiVersion".into(), json!("v1"));
    }
    doc.insert("groupVersion".into(), json!(gv));
    doc.insert("resources".into(), Value::Array(list));
    Some(Value::Object(doc))
}

/// Every served group-version as `(group, version)`.
pub(crate) fn group_versions(resources: &[ResourceInfo]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for r in resources {
        let gv = (r.group.clone(), r.version.clone());
        if !out.contains(&gv) {
            out.push(gv);
        }
    }
    out
}
