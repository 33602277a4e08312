//! GET of an object and of a collection (list), as JSON, a Table or
//! metadata only.

use http::Response;
use rekon_store::{ResourceInfo, Status, is_builtin};
use serde_json::{Value, json};

use super::body::strip_kind;
use super::request::Request;
use crate::printers::{TableMeta, TableOptions, columns, partial_in, table};
use crate::respond::{Body, json_response, negotiate, not_acceptable};

/// 406 NotAcceptable when no clause of the request's Accept header is
/// served by `res`'s endpoint (the real server negotiates first, before
/// reading anything).
fn acceptable(req: &Request<'_>) -> Result<(), Status> {
    match negotiate(&req.ctx.accept, is_builtin(req.res)) {
        Some(_) => Ok(()),
        None => Err(not_acceptable()),
    }
}

/// The Go type a resource's objects have in the real server, as its
/// errors name it: `*rbac.ClusterRoleList`, `*core.ConfigMap`, and
/// `*unstructured.Unstructured(List)` for a custom resource.
fn go_type(res: &rekon_store::ResourceInfo, list: bool) -> String {
    let suffix = if list { "List" } else { "" };
    if !is_builtin(res) {
        return format!("*unstructured.Unstructured{suffix}");
    }
    let package = match res.group.as_str() {
        "" | "events.k8s.io" => "core",
        group => group.split('.').next().unwrap_or(group),
    };
    format!("*{package}.{}{suffix}", res.kind)
}

/// 406 when the metadata-only shape asked for is not the one answered
/// (`asPartialObjectMetadata(List)`).
fn metadata_shape(req: &Request<'_>, list: bool) -> Result<(), Status> {
    match req.ctx.metadata_as {
        Some(asked) if asked.list != list => {
            let (kind, what) = if asked.list {
                ("PartialObjectMetadataList", "is not a list")
            } else {
                ("PartialObjectMetadata", "is a list")
            };
            Err(Status::new(
                406,
                "NotAcceptable",
                format!(
                    "you requested {kind}, but the requested object {what} ({})",
                    go_type(req.res, list)
                ),
            ))
        }
        _ => Ok(()),
    }
}

/// The `meta.k8s.io` version of a metadata-only answer.
fn metadata_version(req: &Request<'_>) -> &'static str {
    req.ctx.metadata_as.map_or("v1", |m| m.version)
}

/// The resource a read is served from: for metadata alone, the objects
/// before their version's conversion ([`rekon_store::Store::metadata_resource`]).
fn read_resource(req: &Request<'_>) -> ResourceInfo {
    if req.ctx.metadata_only {
        req.store.metadata_resource(req.res)
    } else {
        req.res.clone()
    }
}

/// The options of the Table the request asks for, if it asks for one.
pub(crate) fn table_options(req: &Request<'_>) -> Result<Option<TableOptions>, Status> {
    req.ctx
        .table
        .map(|version| TableOptions::new(version, req.query.get("includeObject")))
        .transpose()
}

/// GET of a collection: a list, at the resource version asked for.
pub(crate) fn list(req: &Request<'_>) -> Result<Response<Body>, Status> {
    acceptable(req)?;
    let (store, res, ctx) = (req.store, req.res, req.ctx);
    // The store reads the resourceVersion, its match and a continue token
    // as the real server's storage does.
    let list = store.list(&read_resource(req), &req.list_options())?;
    if let Some(options) = table_options(req)? {
        let meta = TableMeta {
            resource_version: &list.resource_version,
            continue_token: list.continue_token.as_deref(),
            remaining_item_count: list.remaining_item_count,
        };
        let doc = table(&columns(store, res), meta, &list.items, options, true);
        return Ok(json_response(200, &doc, ctx));
    }
    // Built-in lists write ListMeta in field order and omit an empty
    // continue; custom resource lists sort keys and end with "".
    let builtin = is_builtin(res);
    // A metadata-only list is typed whatever the resource
    // (`asPartialObjectMetadataList`).
    let md = if ctx.metadata_only {
        super::body::typed_list_metadata(&list)
    } else {
        super::body::list_metadata(builtin, &list)
    };
    let (kind, api_version, items): (String, String, Value) = if ctx.metadata_only {
        metadata_shape(req, true)?;
        let version = metadata_version(req);
        // A PartialObjectMetadataList of nothing has null items: the
        // real server appends each item to a nil slice.
        let items: Vec<Value> = list.items.iter().map(|o| partial_in(o, version)).collect();
        (
            "PartialObjectMetadataList".into(),
            format!("meta.k8s.io/{version}"),
            if items.is_empty() {
                Value::Null
            } else {
                json!(items)
            },
        )
    } else {
        (
            format!("{}List", res.kind),
            res.api_version(),
            Value::Array(
                list.items
                    .into_iter()
                    .map(|o| strip_kind(builtin, o))
                    .collect(),
            ),
        )
    };
    let doc = json!({
        "kind": kind,
        "apiVersion": api_version,
        "metadata": md,
        "items": items,
    });
    Ok(json_response(200, &doc, ctx))
}

/// GET of one object.
pub(crate) fn get(req: &Request<'_>, name: &str) -> Result<Response<Body>, Status> {
    acceptable(req)?;
    let (store, res, ctx) = (req.store, req.res, req.ctx);
    let o = store.get_at(
        &read_resource(req),
        req.namespace,
        name,
        req.query.get("resourceVersion"),
    )?;
    if let Some(options) = table_options(req)? {
        let meta = TableMeta {
            resource_version: o
                .pointer("/metadata/resourceVersion")
                .and_then(Value::as_str)
                .unwrap_or(""),
            ..TableMeta::default()
        };
        let doc = table(
            &columns(store, res),
            meta,
            std::slice::from_ref(&o),
            options,
            true,
        );
        return Ok(json_response(200, &doc, ctx));
    }
    if ctx.metadata_only {
        metadata_shape(req, false)?;
        return Ok(json_response(
            200,
            &partial_in(&o, metadata_version(req)),
            ctx,
        ));
    }
    Ok(json_response(200, &o, ctx))
}
