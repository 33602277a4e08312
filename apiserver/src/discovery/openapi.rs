//! The OpenAPI v3 documents of each group-version served (the schemas
//! kubectl reads for `explain` and client-side checks).

use rekon_store::{ResourceInfo, Store, is_builtin};
use serde_json::{Map, Value, json};

use super::groups::group_versions;

/// The OpenAPI v3 document of each group-version served, as bytes.
pub(crate) fn openapi_docs(store: &Store) -> Vec<(String, String, Vec<u8>)> {
    let resources = store.resources();
    group_versions(&resources)
        .into_iter()
        .map(|(g, v)| {
            let doc = openapi_group_version(&resources, &g, &v, is_builtin);
            let bytes = serde_json::to_vec(&doc).unwrap_or_default();
            (g, v, bytes)
        })
        .collect()
}

/// The OpenAPI path of a group-version: `api/v1` or `apis/apps/v1`.
pub(crate) fn openapi_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
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
