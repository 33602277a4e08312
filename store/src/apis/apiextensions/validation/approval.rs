//! API approval (`ValidateAPIApproval`): a CRD of a `*.k8s.io` or
//! `*.kubernetes.io` group needs the `api-approved.kubernetes.io`
//! annotation.

use serde_json::Value;

use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::object::text_at;

/// The annotation protected groups (`*.k8s.io`, `*.kubernetes.io`) need.
const API_APPROVED: &str = "api-approved.kubernetes.io";

fn approval_state(annotations: &Value) -> (u8, String) {
    let annotation = annotations
        .get(API_APPROVED)
        .and_then(Value::as_str)
        .unwrap_or_default();
    let url_like = annotation.split_once("://").is_some_and(|(scheme, rest)| {
        !scheme.is_empty() && !rest.is_empty() && !rest.starts_with('/')
    });
    if annotation.is_empty() {
        (
            0,
            format!(
                "protected groups must have approval annotation \"{API_APPROVED}\", see https://github.com/kubernetes/enhancements/pull/1111"
            ),
        )
    } else if annotation.starts_with("unapproved") || url_like {
        (1, String::new())
    } else {
        (
            2,
            format!(
                "protected groups must have approval annotation \"{API_APPROVED}\" with either a URL or a reason starting with \"unapproved\", see https://github.com/kubernetes/enhancements/pull/1111"
            ),
        )
    }
}

pub(crate) fn validate_api_approval(crd: &Value, old: Option<&Value>) -> ErrorList {
    let group = text_at(crd, "/spec/group");
    let protected = ["k8s.io", "kubernetes.io"]
        .iter()
        .any(|p| group == *p || group.ends_with(&format!(".{p}")));
    if !protected {
        return Vec::new();
    }
    let annotations = crd
        .pointer("/metadata/annotations")
        .cloned()
        .unwrap_or(Value::Null);
    let (state, reason) = approval_state(&annotations);
    if let Some(old) = old {
        let old_annotations = old
            .pointer("/metadata/annotations")
            .cloned()
            .unwrap_or(Value::Null);
        if approval_state(&old_annotations).0 == state {
            return Vec::new();
        }
    }
    let at = Path::new(["metadata", "annotations"]).key(API_APPROVED);
    match state {
        0 => vec![FieldError::required(&at, reason)],
        2 => vec![FieldError::invalid(
            &at,
            text_at(&annotations, &format!("/{API_APPROVED}")),
            reason,
        )],
        _ => Vec::new(),
    }
}
