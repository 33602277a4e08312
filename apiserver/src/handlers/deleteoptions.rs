//! A DELETE's `DeleteOptions`, as `endpoints/handlers/delete.go` reads
//! them: from the body when there is one (the query is then not read at
//! all), else from the query; then checked as `ValidateDeleteOptions`
//! (`apimachinery/pkg/apis/meta/v1/validation`) checks them.

use rekon_store::gojson::{json_kind, syntax_error};
use rekon_store::{Deletion, Preconditions, Propagation, Status};
use serde_json::{Value, json};

use super::options::options_invalid;
use super::request::Request;

/// A DELETE's options: how the store deletes, and the deprecated
/// `orphanDependents` as given (`false` makes a delete that waits a 202).
pub(crate) struct DeleteOptions {
    /// How the store deletes.
    pub(crate) deletion: Deletion,
    /// `orphanDependents`, when given.
    pub(crate) orphan_dependents: Option<bool>,
}

/// The options as given, before they are checked.
#[derive(Default)]
struct Given {
    grace_period: Option<i64>,
    preconditions: Preconditions,
    orphan_dependents: Option<bool>,
    propagation: Option<String>,
    dry_run: Vec<String>,
}

/// The DELETE's options, from its body or else its query, checked; a 400
/// for a body that is not DeleteOptions, a 422 for options not accepted.
pub(crate) fn delete_options(req: &Request<'_>) -> Result<DeleteOptions, Status> {
    let given = if req.body.is_empty() {
        from_query(req)?
    } else {
        from_body(req)?
    };
    validate(given)
}

/// The options in the query (`DecodeParameters`): a number as
/// `strconv.ParseInt` reads it (a 400 with its error otherwise), a boolean
/// false only for `0` or `false` in any case, true for anything else.
fn from_query(req: &Request<'_>) -> Result<Given, Status> {
    let query = req.query;
    let grace_period = match query.get("gracePeriodSeconds") {
        Some(text) => Some(parse_int(text).map_err(Status::bad_request)?),
        None => None,
    };
    Ok(Given {
        grace_period,
        preconditions: Preconditions::default(),
        orphan_dependents: query
            .get("orphanDependents")
            .map(|v| !(v == "0" || v.eq_ignore_ascii_case("false"))),
        propagation: query.get("propagationPolicy").map(str::to_string),
        dry_run: query
            .0
            .iter()
            .filter(|(k, _)| k == "dryRun")
            .map(|(_, v)| v.clone())
            .collect(),
    })
}

/// A base-10 int64 as Go's `strconv.ParseInt` reads it, or its error.
fn parse_int(text: &str) -> Result<i64, String> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "strconv.ParseInt: parsing {text:?}: invalid syntax"
        ));
    }
    text.parse()
        .map_err(|_| format!("strconv.ParseInt: parsing {text:?}: value out of range"))
}

/// The scheme that decodes a DELETE's body (the meta internal version's).
const SCHEME: &str = "pkg/apis/meta/internalversion/scheme/register.go:27";

/// The options in the body: JSON whose kind is `DeleteOptions` (in any
/// version: the scheme holds it unversioned; an object without a kind
/// is taken as one), its fields decoded as Go decodes them.
fn from_body(req: &Request<'_>) -> Result<Given, Status> {
    let body: Value = serde_json::from_slice(&req.body).map_err(|e| {
        let why = syntax_error(&req.body).unwrap_or_else(|| e.to_string());
        Status::bad_request(format!(
            "couldn't get version/kind; json parse error: {why}"
        ))
    })?;
    let text = |key: &str| {
        body.get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let kind = text("kind").unwrap_or("DeleteOptions");
    if kind != "DeleteOptions" {
        // The version the handler decodes to when the body names none:
        // `v1` on the legacy path, `meta.k8s.io/v1` on the groups'.
        let default = if req.res.group.is_empty() && req.res.custom.is_none() {
            "v1"
        } else {
            "meta.k8s.io/v1"
        };
        let version = text("apiVersion").unwrap_or(default);
        return Err(Status::bad_request(format!(
            "no kind \"{kind}\" is registered for version \"{version}\" in scheme \"{SCHEME}\""
        )));
    }
    fields(&body)
}

/// The options an Eviction carries (its `deleteOptions`), checked as a
/// DELETE's are.
pub(crate) fn eviction_delete_options(body: &Value) -> Result<DeleteOptions, Status> {
    validate(fields(body)?)
}

/// The options of a DeleteOptions object, its fields decoded as Go
/// decodes them.
fn fields(body: &Value) -> Result<Given, Status> {
    let field = |key: &str| body.get(key).filter(|v| !v.is_null());
    let mismatch = |path: &str, value: &Value, go_type: &str| {
        let what = match value {
            Value::Number(n) => format!("number {n}"),
            other => json_kind(other).to_string(),
        };
        Status::bad_request(format!(
            "json: cannot unmarshal {what} into Go struct field DeleteOptions.{path} of type {go_type}"
        ))
    };
    let string = |value: &Value, path: &str, go_type: &str| {
        value
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| mismatch(path, value, go_type))
    };
    let mut given = Given::default();
    if let Some(v) = field("gracePeriodSeconds") {
        given.grace_period = Some(
            v.as_i64()
                .ok_or_else(|| mismatch("gracePeriodSeconds", v, "int64"))?,
        );
    }
    if let Some(v) = field("orphanDependents") {
        given.orphan_dependents = Some(
            v.as_bool()
                .ok_or_else(|| mismatch("orphanDependents", v, "bool"))?,
        );
    }
    if let Some(v) = field("propagationPolicy") {
        given.propagation = Some(string(v, "propagationPolicy", "v1.DeletionPropagation")?);
    }
    if let Some(v) = field("preconditions") {
        if !v.is_object() {
            return Err(mismatch("preconditions", v, "v1.Preconditions"));
        }
        if let Some(uid) = v.get("uid").filter(|u| !u.is_null()) {
            given.preconditions.uid = Some(string(uid, "preconditions.uid", "types.UID")?);
        }
        if let Some(rv) = v.get("resourceVersion").filter(|r| !r.is_null()) {
            given.preconditions.resource_version =
                Some(string(rv, "preconditions.resourceVersion", "string")?);
        }
    }
    if let Some(v) = field("dryRun") {
        let items = v
            .as_array()
            .ok_or_else(|| mismatch("dryRun", v, "[]string"))?;
        for item in items {
            given.dry_run.push(string(item, "dryRun", "string")?);
        }
    }
    Ok(given)
}

/// `ValidateDeleteOptions`, then the options as the store takes them.
fn validate(given: Given) -> Result<DeleteOptions, Status> {
    let mut causes: Vec<(&str, &str, String)> = Vec::new();
    let policy = given.propagation.as_deref();
    if let (Some(policy), Some(_)) = (policy, given.orphan_dependents) {
        causes.push((
            "propagationPolicy",
            "FieldValueInvalid",
            format!(
                "Invalid value: \"{policy}\": orphanDependents and deletionPropagation cannot be both set"
            ),
        ));
    }
    let propagation = match policy {
        Some("Foreground") => Some(Propagation::Foreground),
        Some("Orphan") => Some(Propagation::Orphan),
        Some("Background") => Some(Propagation::Background),
        Some(other) => {
            causes.push((
                "propagationPolicy",
                "FieldValueNotSupported",
                format!(
                    "Unsupported value: \"{other}\": supported values: \"Foreground\", \"Background\", \"Orphan\", \"nil\""
                ),
            ));
            None
        }
        // `orphanDependents` says the same in the old way.
        None => given.orphan_dependents.map(|orphan| {
            if orphan {
                Propagation::Orphan
            } else {
                Propagation::Background
            }
        }),
    };
    if given.dry_run.iter().any(|v| v != "All") {
        causes.push((
            "dryRun",
            "FieldValueNotSupported",
            format!(
                "Unsupported value: {}: supported values: \"All\"",
                json!(given.dry_run)
            ),
        ));
    }
    if !causes.is_empty() {
        let causes: Vec<(&str, &str, &str)> = causes
            .iter()
            .map(|(f, r, m)| (*f, *r, m.as_str()))
            .collect();
        return Err(options_invalid("DeleteOptions", &causes));
    }
    Ok(DeleteOptions {
        deletion: Deletion {
            propagation,
            dry_run: !given.dry_run.is_empty(),
            grace_period: given.grace_period,
            preconditions: given.preconditions,
            orphan_dependents: given.orphan_dependents,
        },
        orphan_dependents: given.orphan_dependents,
    })
}
