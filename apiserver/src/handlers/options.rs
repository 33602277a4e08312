//! The options of a request read from its query, and the 422s a real
//! server answers for options it does not accept (`dryRun`,
//! `fieldValidation`, the list and watch options).

use http::Method;
use rekon_store::{FieldValidation, Status};
use serde_json::json;

use crate::respond::Query;

/// Whether the request is a dry run (`dryRun=All`), or the 422 for
/// another value.
pub(crate) fn dry_run(method: &Method, query: &Query) -> Result<bool, Status> {
    let Some(v) = query.get("dryRun") else {
        return Ok(false);
    };
    if v == "All" {
        return Ok(true);
    }
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
            &format!("Unsupported value: [\"{v}\"]: supported values: \"All\""),
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
