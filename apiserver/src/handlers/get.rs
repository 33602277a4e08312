//! GET of an object and of a collection (list), as JSON, a Table or
//! metadata only.

use http::Response;
use rekon_store::{Status, is_builtin};
use serde_json::{Map, Value, json};

use super::body::strip_kind;
use super::request::Request;
use crate::printers::{columns, partial, table};
use crate::respond::{Body, json_response};

/// GET of a collection: a list, at the resource version asked for.
pub(crate) fn list(req: &Request<'_>) -> Result<Response<Body>, Status> {
    let (store, res, query, ctx) = (req.store, req.res, req.query, req.ctx);
    let mut o = req.list_options();
    let rv = query.get("resourceVersion");
    if rv == Some("0") {
        o.limit = None;
    }
    if let Some(rv) = rv.filter(|v| !v.is_empty() && *v != "0") {
        let n: u64 = rv.parse().map_err(|_| {
            Status::internal(format!(
                "strconv.ParseUint: parsing \"{rv}\": invalid syntax"
            ))
        })?;
        let oldest: u64 = store.oldest_resource_version().parse().unwrap_or(0);
        if query.get("resourceVersionMatch") == Some("Exact") && n < oldest {
            return Err(Status::expired(
                "The resourceVersion for the provided list is too old.",
            ));
        }
    }
    let list = store.list(res, &o)?;
    // Built-in lists write ListMeta in field order and omit an empty
    // continue; custom resource lists sort keys and end with "".
    let builtin = is_builtin(res);
    let mut md = Map::new();
    if !builtin {
        md.insert(
            "continue".into(),
            json!(list.continue_token.clone().unwrap_or_default()),
        );
        if let Some(n) = list.remaining_item_count {
            md.insert("remainingItemCount".into(), json!(n));
        }
    }
    md.insert("resourceVersion".into(), json!(list.resource_version));
    if builtin {
        if let Some(c) = &list.continue_token {
            md.insert("continue".into(), json!(c));
        }
        if let Some(n) = list.remaining_item_count {
            md.insert("remainingItemCount".into(), json!(n));
        }
    }
    if ctx.table {
        let cols = columns(store, res);
        let mut doc = table(&cols, &list.resource_version, &list.items, true);
        if let Some(m) = doc.get_mut("metadata").and_then(Value::as_object_mut) {
            m.extend(md);
        }
        return Ok(json_response(200, &doc, ctx));
    }
    let (kind, api_version, items): (String, String, Vec<Value>) = if ctx.metadata_only {
        (
            "PartialObjectMetadataList".into(),
            "meta.k8s.io/v1".into(),
            list.items.iter().map(partial).collect(),
        )
    } else {
        (
            format!("{}List", res.kind),
            res.api_version(),
            list.items
                .into_iter()
                .map(|o| strip_kind(builtin, o))
                .collect(),
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
    let (store, res, ctx) = (req.store, req.res, req.ctx);
    let o = store.get(res, req.namespace, name)?;
    if ctx.table {
        let cols = columns(store, res);
        let rv = o
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        return Ok(json_response(
            200,
            &table(&cols, rv, std::slice::from_ref(&o), true),
            ctx,
        ));
    }
    if ctx.metadata_only {
        return Ok(json_response(200, &partial(&o), ctx));
    }
    Ok(json_response(200, &o, ctx))
}
