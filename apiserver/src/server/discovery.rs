//! Discovery documents and the OpenAPI v3 documents kubectl needs.

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

/// The OpenAPI path of a group-version: `api/v1` or `apis/apps/v1`.
pub(crate) fn openapi_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
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

/// A short content hash (FNV-1a, hex) for OpenAPI URLs.
pub(crate) fn hash(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016X}")
}

fn schema_name(r: &ResourceInfo) -> String {
    let g = if r.group.is_empty() {
        "core".to_string()
    } else {
        r.group.clone()
    };
    format!("{}.{}.{}", g, r.version, r.kind)
}

fn query_param(name: &str) -> Value {
    json!({"name": name, "in": "query", "schema": {"type": "string", "uniqueItems": true}})
}

/// The OpenAPI v3 document of one group-version. Schemas are open (any
/// field is accepted); operations carry what kubectl looks for: the
/// group-version-kind extension and the `fieldValidation` parameter.
pub(crate) fn openapi_group_version(
    resources: &[ResourceInfo],
    group: &str,
    version: &str,
    builtin: impl Fn(&ResourceInfo) -> bool,
) -> Value {
    let mut paths = Map::new();
    let mut schemas = Map::new();
    for r in resources
        .iter()
        .filter(|r| r.group == group && r.version == version)
    {
        let gvk = json!({"group": r.group, "version": r.version, "kind": r.kind});
        let sref = json!({"$ref": format!("#/components/schemas/{}", schema_name(r))});
        let base = if group.is_empty() {
            format!("/api/{version}")
        } else {
            format!("/apis/{group}/{version}")
        };
        let (coll, item) = if r.namespaced {
            (
                format!("{base}/namespaces/{{namespace}}/{}", r.plural),
                format!("{base}/namespaces/{{namespace}}/{}/{{name}}", r.plural),
            )
        } else {
            (
                format!("{base}/{}", r.plural),
                format!("{base}/{}/{{name}}", r.plural),
            )
        };
        let ok = json!({"200": {"description": "OK", "content": {"application/json": {"schema": sref}}}});
        let op = |action: &str| {
            json!({
                "operationId": format!("{action}{}", r.kind),
                "x-kubernetes-action": action,
                "x-kubernetes-group-version-kind": gvk,
                "parameters": [query_param("dryRun"), query_param("fieldManager"), query_param("fieldValidation")],
                "responses": ok,
            })
        };
        let mut patch_types = Map::new();
        patch_types.insert(
            "application/json-patch+json".into(),
            json!({"schema": {"type": "object"}}),
        );
        patch_types.insert(
            "application/merge-patch+json".into(),
            json!({"schema": {"type": "object"}}),
        );
        // Strategic merge patch is accepted for built-in kinds but not
        // declared: the schemas here are open, so kubectl builds its
        // strategic merge patches from its compiled-in types instead.
        let _ = builtin(r);
        patch_types.insert(
            "application/apply-patch+yaml".into(),
            json!({"schema": {"type": "object"}}),
        );
        let mut patch = op("patch");
        if let Some(m) = patch.as_object_mut() {
            m.insert("requestBody".into(), json!({"content": patch_types}));
            if let Some(Value::Array(ps)) = m.get_mut("parameters") {
                ps.push(query_param("force"));
            }
        }
        let mut put = op("put");
        if let Some(m) = put.as_object_mut() {
            m.insert(
                "requestBody".into(),
                json!({"content": {"*/*": {"schema": sref}}}),
            );
        }
        let mut post = op("post");
        if let Some(m) = post.as_object_mut() {
            m.insert(
                "requestBody".into(),
                json!({"content": {"*/*": {"schema": sref}}}),
            );
        }
        paths.insert(
            item,
            json!({"get": op("get"), "put": put, "patch": patch, "delete": op("delete")}),
        );
        paths.insert(coll, json!({"get": op("list"), "post": post}));
        schemas.insert(
            schema_name(r),
            json!({
                "type": "object",
                "x-kubernetes-group-version-kind": [gvk],
                "x-kubernetes-preserve-unknown-fields": true,
                "properties": {
                    "apiVersion": {"type": "string"},
                    "kind": {"type": "string"},
                    "metadata": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                }
            }),
        );
    }
    json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.36.2"},
        "paths": paths,
        "components": {"schemas": schemas}
    })
}

#[cfg(test)]
mod version_tests {
    #[test]
    fn versions_sort_by_kubernetes_priority() {
        let mut versions = vec![
            "v1alpha1", "v1", "foo", "v2beta1", "v10", "v2", "v1beta2", "v1beta1",
        ];
        versions.sort_by_key(|v| super::version_priority(v));
        assert_eq!(
            versions,
            [
                "v10", "v2", "v1", "v2beta1", "v1beta2", "v1beta1", "v1alpha1", "foo"
            ]
        );
    }
}
