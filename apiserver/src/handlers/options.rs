//! The options of a request read from its query, and the 422s a real
//! server answers for options it does not accept (`dryRun`,
//! `fieldValidation`, the list and watch options).

use http::Method;
use rekon_store::field::go_quote;
use rekon_store::{FieldSelector, FieldValidation, LabelSelector, Status};
use serde_json::json;

use crate::respond::Query;

/// Whether the request is a dry run (`dryRun=All`), or the 422 for
/// another value.
pub(crate) fn dry_run(method: &Method, query: &Query) -> Result<bool, Status> {
    // Every value the query gives (`ValidateDryRun`: all must be `All`).
    let values: Vec<&str> = query
        .0
        .iter()
        .filter(|(k, _)| k == "dryRun")
        .map(|(_, v)| v.as_str())
        .collect();
    if values.is_empty() {
        return Ok(false);
    }
    if values.iter().all(|v| *v == "All") {
        return Ok(true);
    }
    let shown: Vec<String> = values.iter().map(|v| format!("\"{v}\"")).collect();
    let kind = match method.as_str() {
        "POST" => "CreateOptions",
        "PUT" => "UpdateOptions",
        "PATCH" => "PatchOptions",
        "DELETE" => "DeleteOptions",
        _ => "ListOptions",
    };
    Err(options_invalid(
        kind,
        &[(
            "dryRun",
            "FieldValueNotSupported",
            &format!(
                "Unsupported value: [{}]: supported values: \"All\"",
                shown.join(",")
            ),
        )],
    ))
}

/// The `fieldValidation` query parameter, or the 422 a real server
/// answers for a value it does not know.
pub(crate) fn field_validation(method: &Method, query: &Query) -> Result<FieldValidation, Status> {
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

/// Go's `strconv.ParseInt(text, 10, 64)` of an integer parameter
/// (`limit`, `timeoutSeconds`), or its error, which the real server
/// answers with a 400 as it decodes the parameters.
fn parse_int(text: &str) -> Result<i64, Status> {
    text.parse::<i64>().map_err(|e| {
        let why = match e.kind() {
            std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => {
                "value out of range"
            }
            _ => "invalid syntax",
        };
        Status::bad_request(format!(
            "strconv.ParseInt: parsing {}: {why}",
            go_quote(text)
        ))
    })
}

/// The real server's reading of list and watch options (`listOpts` in
/// apiserver's `endpoints/handlers/get.go`): the parameters decoded first
/// (`DecodeParameters`: `timeoutSeconds` and `limit` integers, then the
/// label and field selectors parsed, a 400 each), then checked
/// (`ValidateListOptions` in apimachinery's
/// `apis/meta/internalversion/validation`, a 422). A field selector's
/// labels are converted by the store's list, after these; a continue
/// token and the resourceVersion are read by the store too, as the real
/// server's storage reads them.
pub(crate) fn validate_list_options(query: &Query) -> Result<(), Status> {
    for integer in ["timeoutSeconds", "limit"] {
        if let Some(text) = query.get(integer) {
            parse_int(text)?;
        }
    }
    LabelSelector::parse(query.get("labelSelector").unwrap_or_default())?;
    FieldSelector::parse(query.get("fieldSelector").unwrap_or_default())?;
    let causes = if query.flag("watch") {
        watch_option_errors(query)
    } else {
        list_option_errors(query)
    };
    if causes.is_empty() {
        return Ok(());
    }
    let borrowed: Vec<(&str, &str, &str)> = causes
        .iter()
        .map(|(f, r, m)| (*f, *r, m.as_str()))
        .collect();
    Err(options_invalid("ListOptions", &borrowed))
}

/// A cause of a refused ListOptions: its field, reason and message.
type Cause = (&'static str, &'static str, String);

/// `resourceVersionMatch` forbidden, as `field.Forbidden` words it.
fn forbidden(field: &'static str, why: &str) -> Cause {
    (field, "FieldValueForbidden", format!("Forbidden: {why}"))
}

/// `resourceVersionMatch`'s value not one of `supported`
/// (`field.NotSupported`).
fn unsupported(value: &str, supported: &str) -> Cause {
    (
        "resourceVersionMatch",
        "FieldValueNotSupported",
        format!("Unsupported value: \"{value}\": supported values: {supported}"),
    )
}

/// `ValidateListOptions` of a list: a match needs a resourceVersion, no
/// continue token, one of its two values, and `Exact` a version other
/// than `"0"`; a list takes no `sendInitialEvents`.
fn list_option_errors(query: &Query) -> Vec<Cause> {
    let mut causes = Vec::new();
    let given = |key: &str| query.get(key).filter(|v| !v.is_empty());
    if let Some(m) = given("resourceVersionMatch") {
        if given("resourceVersion").is_none() {
            causes.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden unless resourceVersion is provided",
            ));
        }
        if given("continue").is_some() {
            causes.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden when continue is provided",
            ));
        }
        if m != "Exact" && m != "NotOlderThan" {
            causes.push(unsupported(m, "\"Exact\", \"NotOlderThan\", \"\""));
        }
        if m == "Exact" && query.get("resourceVersion") == Some("0") {
            causes.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
            ));
        }
    }
    if query.get("sendInitialEvents").is_some() {
        causes.push(forbidden(
            "sendInitialEvents",
            "sendInitialEvents is forbidden for list",
        ));
    }
    causes
}

/// `validateWatchOptions`: `sendInitialEvents` needs the match
/// `NotOlderThan`, and a match needs `sendInitialEvents` and no continue
/// token.
fn watch_option_errors(query: &Query) -> Vec<Cause> {
    let mut causes = Vec::new();
    let m = query.get("resourceVersionMatch").filter(|v| !v.is_empty());
    let initial = query.get("sendInitialEvents").is_some();
    if initial && m != Some("NotOlderThan") {
        causes.push(forbidden(
            "resourceVersionMatch",
            "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ));
    }
    if let Some(m) = m {
        if !initial {
            causes.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            ));
        }
        if m != "NotOlderThan" {
            causes.push(unsupported(m, "\"NotOlderThan\""));
        }
        if query.get("continue").is_some_and(|c| !c.is_empty()) {
            causes.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden when continue is provided",
            ));
        }
    }
    causes
}

/// The checks of a write's options the real handlers make before the
/// write (`ValidateCreateOptions`, `ValidateUpdateOptions`,
/// `ValidatePatchOptions`): `force` only on an apply, and a `fieldManager`
/// of at most 128 printable bytes.
pub(crate) fn check_write_options(
    method: &Method,
    query: &Query,
    content_type: &str,
) -> Result<(), Status> {
    let kind = match method.as_str() {
        "POST" => "CreateOptions",
        "PUT" => "UpdateOptions",
        "PATCH" => "PatchOptions",
        _ => return Ok(()),
    };
    let mut errors = Vec::new();
    let apply = content_type.starts_with("application/apply-patch");
    if kind == "PatchOptions" && !apply && query.get("force").is_some() {
        errors.push(rekon_store::field::FieldError::forbidden(
            &rekon_store::field::Path::new(["force"]),
            "may not be specified for non-apply patch",
        ));
    }
    if let Some(manager) = query.get("fieldManager") {
        errors.extend(rekon_store::metadata::validate_field_manager(
            manager,
            &rekon_store::field::Path::new(["fieldManager"]),
        ));
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(Status::from_field_errors("meta.k8s.io", kind, "", &errors))
    }
}
