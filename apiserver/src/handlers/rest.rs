//! The REST verbs on a resource: the checks every request passes (the
//! verbs a resource serves, its options), then the verb's handler, with
//! the warnings gathered on the way.

use http::{Method, Response};
use rekon_store::calls::method_not_allowed;
use rekon_store::duplicates::duplicate_fields;
use rekon_store::{Status, WriteOptions, answer_review};

use super::binding::{bind, log};
use super::create::create;
use super::delete::{delete, delete_collection};
use super::eviction::evict;
use super::get::{get, list};
use super::options::{check_write_options, dry_run, field_validation, validate_list_options};
use super::patch::patch;
use super::request::Request;
use super::scale::scale_answer;
use super::update::update;
use super::watch::watch;
use crate::respond::{Body, json_response, status_response, text_404, with_warnings};

/// Serves a request to a resource.
pub(crate) fn serve(req: &Request<'_>) -> Result<Response<Body>, Status> {
    let (res, method, query) = (req.res, &req.method, req.query);
    let verb = req.verb();
    check_write_options(method, query, &req.content_type)?;
    match (req.sub, req.name) {
        (None, _) if !res.serves(verb) => return Err(method_not_allowed()),
        // Across all namespaces a namespaced kind is listed and watched
        // only: the built-in kinds' routes have no other verb there, and a
        // custom resource's handler finds nothing.
        (None, None)
            if matches!(verb, "deletecollection" | "create")
                && res.namespaced
                && req.namespace.is_none() =>
        {
            return match res.custom {
                Some(_) => Ok(text_404()),
                None => Err(method_not_allowed()),
            };
        }
        (None, None) if verb == "create" && !res.is_stored() && !is_bindings(res) => {
            let object = answer_review(res, req.namespace, &req.body)?;
            return Ok(json_response(201, &object, req.ctx));
        }
        // A Namespace's `finalize` is only written (`FinalizeREST` is an
        // updater alone).
        (Some("finalize"), _) if *method != Method::PUT => return Err(method_not_allowed()),
        // `status` and `scale` are read, replaced and patched only.
        (Some("status" | "scale"), Some(_))
            if !matches!(method.as_str(), "GET" | "PUT" | "PATCH") =>
        {
            return Err(not_supported(req, verb));
        }
        // A built-in kind's other subresources serve the verbs discovery
        // lists for them.
        (Some(sub), Some(_))
            if res.custom.is_none()
                && res
                    .subresources
                    .iter()
                    .find(|r| r.name == sub)
                    .is_some_and(|r| !r.verbs.iter().any(|v| v == verb)) =>
        {
            return Err(method_not_allowed());
        }
        (Some("log"), Some(n)) => return log(req, n),
        (Some("scale"), Some(n)) => {
            let opts = WriteOptions {
                field_manager: Some(req.field_manager()),
                dry_run: dry_run(method, query)?,
                ..WriteOptions::default()
            };
            let scale = scale_answer(req, n, &opts)?;
            return Ok(json_response(200, &scale, req.ctx));
        }
        _ => {}
    }
    // A DELETE reads its dryRun with its other DeleteOptions, from its
    // body when it has one (`deleteoptions.rs`).
    let dry_run = if *method == Method::DELETE {
        false
    } else {
        dry_run(method, query)?
    };
    if method == Method::GET && req.name.is_none() {
        validate_list_options(query)?;
    }
    let opts = WriteOptions {
        field_manager: Some(req.field_manager()),
        subresource: req
            .sub
            .filter(|s| matches!(*s, "status" | "finalize" | "ephemeralcontainers" | "resize"))
            .map(str::to_string),
        dry_run,
        field_validation: field_validation(method, query)?,
        duplicate_fields: match method.as_str() {
            "POST" | "PUT" => duplicate_fields(&req.body),
            _ => Vec::new(),
        },
        ..WriteOptions::default()
    };
    match (req.sub, req.name) {
        (Some("eviction"), Some(n)) => return evict(req, n, &opts),
        (Some("binding"), Some(n)) => return bind(req, Some(n), &opts),
        // The namespace's `bindings` (`LegacyBindingREST`): the Pod named
        // by the Binding.
        (None, None) if is_bindings(res) && verb == "create" => {
            return bind(req, None, &opts);
        }
        _ => {}
    }
    // A refusal carries the warnings gathered before it, as a real
    // server's does (`unknown field` with a 422).
    let response = match handle(req, &opts) {
        Ok(response) => response,
        Err(status) if !opts.warnings.list().is_empty() => status_response(&status, req.ctx),
        Err(status) => return Err(status),
    };
    Ok(with_warnings(response, &opts.warnings.list()))
}

/// The namespace's `bindings` (v1), written to bind the Pod each names.
fn is_bindings(res: &rekon_store::ResourceInfo) -> bool {
    res.group.is_empty() && res.plural == "bindings"
}

/// A verb a subresource does not serve: the built-in kinds' routes have
/// no such method (405); a custom resource's handler says which verb
/// (`NewMethodNotSupported`).
fn not_supported(req: &Request<'_>, verb: &str) -> Status {
    let res = req.res;
    if res.custom.is_none() {
        return method_not_allowed();
    }
    let resource = res.qualified_plural();
    Status {
        code: 405,
        reason: "MethodNotAllowed".into(),
        message: format!("{verb} is not supported on resources of kind {resource:?}"),
        details: Some(serde_json::json!({"group": res.group, "kind": res.plural})),
    }
}

/// The verb's handler, once the options are read.
fn handle(req: &Request<'_>, opts: &WriteOptions) -> Result<Response<Body>, Status> {
    let watching = req.query.flag("watch");
    match (req.method.as_str(), req.name) {
        ("GET", None) if watching => Ok(watch(req, req.list_options())),
        ("GET", Some(n)) if watching => {
            let mut o = req.list_options();
            o.field_selector = Some(format!("metadata.name={n}"));
            Ok(watch(req, o))
        }
        ("GET", None) => list(req),
        ("GET", Some(n)) => get(req, n),
        ("POST", None) => create(req, opts),
        // A custom resource's handler creates through its item path too
        // (`CreateNamedResource`), the body naming the same object.
        ("POST", Some(n)) if req.res.custom.is_some() => {
            let named = super::body::parse_json(&req.body, req.res)?;
            match named
                .pointer("/metadata/name")
                .and_then(serde_json::Value::as_str)
            {
                Some(sent) if sent != n => Err(Status::bad_request(format!(
                    "the name of the object ({sent}) does not match the name on the URL ({n})"
                ))),
                _ => create(req, opts),
            }
        }
        ("PUT", Some(n)) => update(req, n, opts),
        ("PATCH", Some(n)) => patch(req, n, opts),
        ("DELETE", Some(n)) => delete(req, n, opts),
        ("DELETE", None) => delete_collection(req, opts),
        _ => Err(method_not_allowed()),
    }
}
