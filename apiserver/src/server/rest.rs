//! The REST verbs on a resource: list, get, create, replace, patch, delete, deletecollection.

use http::{Method, Response};
use rekon_store::{
    DeleteOutcome, FieldValidation, ListOptions, PatchType, Propagation, ResourceInfo, Status,
    WriteOptions, is_builtin,
};
use serde_json::{Map, Value, json};

use crate::server::respond::{Ctx, Query, json_response};
use crate::server::routes::verb_of;
use crate::server::special::{method_not_allowed, scale};
use crate::server::watch::watch;
use crate::server::{Body, State, table};

pub(crate) fn default_manager(query: &Query, ua: &str) -> String {
    match query.get("fieldManager").filter(|m| !m.is_empty()) {
        Some(m) => m.to_string(),
        None => ua
            .split('/')
            .next()
            .filter(|s| !s.is_empty())
            .unwrap_or("unknown")
            .to_string(),
    }
}

pub(crate) fn parse_json(body: &[u8], res: &ResourceInfo) -> Result<Value, Status> {
    rekon_store::calls::decode_object(body, res)
}

/// List items of built-in kinds carry no kind and apiVersion (custom ones do).
pub(crate) fn strip_kind(builtin: bool, mut o: Value) -> Value {
    if builtin && let Some(m) = o.as_object_mut() {
        m.remove("kind");
        m.remove("apiVersion");
    }
    o
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn rest(
    state: &State,
    res: &ResourceInfo,
    namespace: Option<&str>,
    name: Option<&str>,
    sub: Option<String>,
    method: &Method,
    content_type: &str,
    body: &[u8],
    query: &Query,
    ua: &str,
    ctx: &Ctx,
) -> Result<Response<Body>, Status> {
    let store = &state.store;
    let verb = verb_of(method, name.is_some(), query);
    match (sub.as_deref(), name) {
        (None, _) if !res.serves(verb) => return Err(method_not_allowed()),
        (None, None) if verb == "create" && !res.is_stored() => {
            let object = rekon_store::answer_review(res, namespace, body)?;
            return Ok(json_response(201, &object, ctx));
        }
        (Some("scale"), Some(n)) => {
            let opts = WriteOptions {
                field_manager: Some(default_manager(query, ua)),
                ..WriteOptions::default()
            };
            let scale = scale(store, res, namespace, n, method, body, &opts)?;
            return Ok(json_response(200, &scale, ctx));
        }
        _ => {}
    }
    let dry_run = query.get("dryRun") == Some("All");
    if let Some(v) = query.get("dryRun").filter(|v| *v != "All") {
        let kind = match method.as_str() {
            "POST" => "CreateOptions",
            "PUT" => "UpdateOptions",
            "PATCH" => "PatchOptions",
            "DELETE" => "DeleteOptions",
            _ => "ListOptions",
        };
        return Err(options_invalid(
            kind,
            &[(
                "dryRun",
                "FieldValueNotSupported",
                &format!("Unsupported value: [\"{v}\"]: supported values: \"All\""),
            )],
        ));
    }
    if method == Method::GET && name.is_none() {
        validate_list_options(query)?;
    }
    let opts = WriteOptions {
        field_manager: Some(default_manager(query, ua)),
        subresource: sub.clone().filter(|s| s == "status"),
        dry_run,
        field_validation: field_validation(method, query)?,
        duplicate_fields: match method.as_str() {
            "POST" | "PUT" => rekon_store::duplicates::duplicate_fields(body),
            _ => Vec::new(),
        },
        ..WriteOptions::default()
    };
    // A refusal carries the warnings gathered before it, as a real
    // server's does (`unknown field` with a 422).
    let response = match write(
        state,
        res,
        namespace,
        name,
        method,
        content_type,
        body,
        query,
        ctx,
        &opts,
    ) {
        Ok(response) => response,
        Err(status) if !opts.warnings.list().is_empty() => {
            super::respond::status_response(&status, ctx)
        }
        Err(status) => return Err(status),
    };
    Ok(super::admission::with_warnings(
        response,
        &opts.warnings.list(),
    ))
}

/// The `fieldValidation` query parameter, or the 422 a real server
/// answers for a value it does not know.
fn field_validation(method: &Method, query: &Query) -> Result<FieldValidation, Status> {
    let value = query.get("fieldValidation").unwrap_or_default();
    FieldValidation::parse(value).ok_or_else(|| {
        let kind = match method.as_str() {
            "POST" => "CreateOptions",
            "PUT" => "UpdateOptions",
            _ => "PatchOptions",
        };
        options_invalid(
            kind,
            &[(
                "fieldValidation",
                "FieldValueNotSupported",
                &format!(
                    "Unsupported value: \"{value}\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\""
                ),
            )],
        )
    })
}

/// The 400 of a custom resource created or replaced with a body of
/// another apiVersion than the path's (the real handlers'
/// `AcceptsGroupVersion`; the CRD handler's decoder reads any version of
/// the group, and the handler refuses all but its own).
fn check_api_version(res: &ResourceInfo, obj: &Value) -> Result<(), Status> {
    if res.custom.is_none() {
        return Ok(());
    }
    let given = obj
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if given == res.api_version() {
        return Ok(());
    }
    Err(Status::bad_request(format!(
        "the API version in the data ({given}) does not match the expected API version ({})",
        res.api_version()
    )))
}

/// What the real patch handler refuses before it patches (400): a merge
/// or JSON patch of an existing object that is not JSON of the right
/// shape (`error decoding patch: ...`, in Go's words), and an apply
/// configuration of another apiVersion or kind (`invalid object type:
/// dbs.acme.io/v1alpha1, Kind=Database`, `/v1, Kind=Secret`).
fn check_patch(
    store: &rekon_store::Store,
    res: &ResourceInfo,
    namespace: Option<&str>,
    name: &str,
    ptype: &PatchType,
    body: &[u8],
) -> Result<(), Status> {
    let decoding = |why: String| Status::bad_request(format!("error decoding patch: {why}"));
    match ptype {
        PatchType::Merge | PatchType::Json => {
            if !store.exists(res, namespace, name) {
                return Ok(());
            }
            // What serde_json reads, Go reads too: Go's words are only
            // needed for a body it refuses.
            let patch: Value = match serde_json::from_slice(body) {
                Ok(patch) => patch,
                Err(e) => {
                    return Err(decoding(
                        rekon_store::gojson::syntax_error(body).unwrap_or_else(|| e.to_string()),
                    ));
                }
            };
            let (fits, go_type) = match ptype {
                PatchType::Merge => (
                    patch.is_object() || patch.is_null(),
                    "map[string]interface {}",
                ),
                _ => (
                    patch.is_array() || patch.is_null(),
                    "[]handlers.jsonPatchOp",
                ),
            };
            if !fits {
                return Err(decoding(format!(
                    "json: cannot unmarshal {} into Go value of type {go_type}",
                    rekon_store::gojson::json_kind(&patch)
                )));
            }
            Ok(())
        }
        PatchType::Apply { .. } => {
            /// What an apply configuration says it is (JSON, what clients
            /// send, read as JSON; YAML otherwise).
            #[derive(serde::Deserialize)]
            #[serde(rename_all = "camelCase")]
            struct TypeMeta {
                #[serde(default)]
                api_version: String,
                #[serde(default)]
                kind: String,
            }
            let config = serde_json::from_slice::<TypeMeta>(body)
                .ok()
                .or_else(|| serde_yaml::from_slice::<TypeMeta>(body).ok());
            let Some(TypeMeta { api_version, kind }) = config else {
                return Ok(());
            };
            let (api_version, kind) = (api_version.as_str(), kind.as_str());
            if api_version == res.api_version() && kind == res.kind {
                return Ok(());
            }
            let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
            Err(Status::bad_request(format!(
                "invalid object type: {group}/{version}, Kind={kind}"
            )))
        }
        _ => Ok(()),
    }
}

/// The verbs of `rest` once its options are read.
#[allow(clippy::too_many_arguments)]
fn write(
    state: &State,
    res: &ResourceInfo,
    namespace: Option<&str>,
    name: Option<&str>,
    method: &Method,
    content_type: &str,
    body: &[u8],
    query: &Query,
    ctx: &Ctx,
    opts: &WriteOptions,
) -> Result<Response<Body>, Status> {
    let store = &state.store;
    let dry_run = opts.dry_run;
    let list_opts = || ListOptions {
        namespace: namespace.map(str::to_string),
        label_selector: query.get("labelSelector").map(str::to_string),
        field_selector: query.get("fieldSelector").map(str::to_string),
        limit: query.get("limit").and_then(|l| l.parse().ok()),
        continue_token: query.get("continue").map(str::to_string),
    };
    match (method.as_str(), name) {
        ("GET", None) if query.flag("watch") => Ok(watch(state, res, list_opts(), query, ctx)),
        ("GET", Some(n)) if query.flag("watch") => {
            let mut o = list_opts();
            o.field_selector = Some(format!("metadata.name={n}"));
            Ok(watch(state, res, o, query, ctx))
        }
        ("GET", None) => {
            let mut o = list_opts();
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
                let cols = table::columns(store, res);
                let mut doc = table::table(&cols, &list.resource_version, &list.items, true);
                if let Some(m) = doc.get_mut("metadata").and_then(Value::as_object_mut) {
                    m.extend(md);
                }
                return Ok(json_response(200, &doc, ctx));
            }
            let (kind, api_version, items): (String, String, Vec<Value>) = if ctx.metadata_only {
                (
                    "PartialObjectMetadataList".into(),
                    "meta.k8s.io/v1".into(),
                    list.items.iter().map(table::partial).collect(),
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
        ("GET", Some(n)) => {
            let o = store.get(res, namespace, n)?;
            if ctx.table {
                let cols = table::columns(store, res);
                let rv = o
                    .pointer("/metadata/resourceVersion")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                return Ok(json_response(
                    200,
                    &table::table(&cols, rv, std::slice::from_ref(&o), true),
                    ctx,
                ));
            }
            if ctx.metadata_only {
                return Ok(json_response(200, &table::partial(&o), ctx));
            }
            Ok(json_response(200, &o, ctx))
        }
        ("POST", None) => {
            if res.namespaced && namespace.is_none() {
                return Err(Status::resource_not_found());
            }
            let obj = parse_json(body, res)?;
            check_api_version(res, &obj)?;
            let out = store.create(res, namespace, obj, opts)?;
            Ok(json_response(201, &out, ctx))
        }
        ("POST", Some(_)) => Err(method_not_allowed()),
        ("PUT", Some(n)) => {
            let obj = parse_json(body, res)?;
            check_api_version(res, &obj)?;
            let (out, created) = store.replace_created(res, namespace, n, obj, opts)?;
            Ok(json_response(if created { 201 } else { 200 }, &out, ctx))
        }
        ("PATCH", Some(n)) => {
            let ptype = super::admission::patch_type(content_type, query)?;
            let mut opts = opts.clone();
            if matches!(ptype, PatchType::Apply { .. }) {
                opts.field_manager = query.get("fieldManager").map(str::to_string);
            }
            check_patch(store, res, namespace, n, &ptype, body)?;
            let (out, created) = store.patch_created(res, namespace, n, &ptype, body, &opts)?;
            Ok(json_response(if created { 201 } else { 200 }, &out, ctx))
        }
        ("DELETE", Some(n)) => {
            let opts_body: Value = if body.is_empty() {
                Value::Null
            } else {
                serde_json::from_slice(body).map_err(|e| {
                    Status::bad_request(format!("error decoding DeleteOptions: {e}"))
                })?
            };
            let policy = opts_body
                .get("propagationPolicy")
                .and_then(Value::as_str)
                .or_else(|| query.get("propagationPolicy"));
            let propagation = match policy {
                Some("Foreground") => Some(Propagation::Foreground),
                Some("Orphan") => Some(Propagation::Orphan),
                Some("Background") => Some(Propagation::Background),
                _ if opts_body.get("orphanDependents").and_then(Value::as_bool) == Some(true) => {
                    Some(Propagation::Orphan)
                }
                _ => None,
            };
            let current = store.get(res, namespace, n)?;
            if let Some(pre) = opts_body.get("preconditions") {
                let uid = current
                    .pointer("/metadata/uid")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                // `rest.BeforeDelete` checks them before anything else.
                if let Some(want) = pre.get("uid").and_then(Value::as_str)
                    && want != uid
                {
                    return Err(Status::precondition_failed(res, n, "UID", want, uid));
                }
                let rv = current
                    .pointer("/metadata/resourceVersion")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if let Some(want) = pre.get("resourceVersion").and_then(Value::as_str)
                    && want != rv
                {
                    return Err(Status::precondition_failed(
                        res,
                        n,
                        "ResourceVersion",
                        want,
                        rv,
                    ));
                }
            }
            let dry = dry_run
                || opts_body
                    .get("dryRun")
                    .and_then(Value::as_array)
                    .is_some_and(|a| a.iter().any(|v| v == "All"));
            let outcome = if dry {
                DeleteOutcome::Deleted(current)
            } else {
                store.delete(res, namespace, n, propagation)?
            };
            match outcome {
                DeleteOutcome::Deleted(o) => {
                    Ok(json_response(200, &success_status(res, n, &o), ctx))
                }
                DeleteOutcome::Pending(o) => Ok(json_response(200, &o, ctx)),
            }
        }
        ("DELETE", None) => {
            let list = store.list(res, &list_opts())?;
            let mut items = Vec::new();
            for o in list.items {
                let n = o
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                let ns = o
                    .pointer("/metadata/namespace")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                match store.delete(res, ns.as_deref(), &n, None) {
                    Ok(DeleteOutcome::Deleted(o) | DeleteOutcome::Pending(o)) => {
                        items.push(strip_kind(is_builtin(res), o))
                    }
                    Err(e) if e.code == 404 => {}
                    Err(e) => return Err(e),
                }
            }
            let doc = json!({
                "kind": format!("{}List", res.kind),
                "apiVersion": res.api_version(),
                "metadata": {"resourceVersion": store.resource_version()},
                "items": items,
            });
            Ok(json_response(200, &doc, ctx))
        }
        _ => Err(method_not_allowed()),
    }
}

/// 422 for invalid request options, as `ListOptions.meta.k8s.io "" is invalid: ...`.
pub(crate) fn options_invalid(kind: &str, causes: &[(&str, &str, &str)]) -> Status {
    let msgs: Vec<String> = causes.iter().map(|(f, _, m)| format!("{f}: {m}")).collect();
    let joined = if msgs.len() == 1 {
        msgs[0].clone()
    } else {
        format!("[{}]", msgs.join(", "))
    };
    Status {
        code: 422,
        reason: "Invalid".into(),
        message: format!("{kind}.meta.k8s.io \"\" is invalid: {joined}"),
        details: Some(json!({
            "group": "meta.k8s.io",
            "kind": kind,
            "causes": causes.iter().map(|(f, r, m)| json!({"reason": r, "message": m, "field": f})).collect::<Vec<_>>(),
        })),
    }
}

/// The real server's checks of list and watch options.
pub(crate) fn validate_list_options(query: &Query) -> Result<(), Status> {
    let watch = query.flag("watch");
    let rv = query.get("resourceVersion").filter(|v| !v.is_empty());
    let rvm = query.get("resourceVersionMatch").filter(|v| !v.is_empty());
    let initial = query.get("sendInitialEvents").is_some();
    let mut causes: Vec<(&str, &str, String)> = Vec::new();
    if watch {
        if initial && rvm != Some("NotOlderThan") {
            causes.push((
                "resourceVersionMatch",
                "FieldValueForbidden",
                "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan".into(),
            ));
        }
        if !initial && let Some(m) = rvm {
            causes.push((
                "resourceVersionMatch",
                "FieldValueForbidden",
                "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided".into(),
            ));
            if m != "NotOlderThan" {
                causes.push((
                    "resourceVersionMatch",
                    "FieldValueNotSupported",
                    format!("Unsupported value: \"{m}\": supported values: \"NotOlderThan\""),
                ));
            }
        }
    } else {
        if rvm.is_some() && rv.is_none() {
            causes.push((
                "resourceVersionMatch",
                "FieldValueForbidden",
                "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
                    .into(),
            ));
        }
        if initial {
            causes.push((
                "sendInitialEvents",
                "FieldValueForbidden",
                "Forbidden: sendInitialEvents is forbidden for list".into(),
            ));
        }
        if rv.is_some() && query.get("continue").is_some_and(|c| !c.is_empty()) {
            return Err(Status::bad_request(
                "specifying resource version is not allowed when using continue",
            ));
        }
    }
    if causes.is_empty() {
        return Ok(());
    }
    let borrowed: Vec<(&str, &str, &str)> = causes
        .iter()
        .map(|(f, r, m)| (*f, *r, m.as_str()))
        .collect();
    Err(options_invalid("ListOptions", &borrowed))
}

pub(crate) fn success_status(res: &ResourceInfo, name: &str, obj: &Value) -> Value {
    let mut d = Map::new();
    d.insert("name".into(), json!(name));
    if !res.group.is_empty() {
        d.insert("group".into(), json!(res.group));
    }
    d.insert("kind".into(), json!(res.plural));
    if let Some(uid) = obj.pointer("/metadata/uid") {
        d.insert("uid".into(), uid.clone());
    }
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": d})
}
