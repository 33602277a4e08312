//! One review: an AdmissionReview or ConversionReview (v1) read into the
//! contract's request, run by a module on a fresh instance, and its answer
//! written back as the API server expects it: a verdict with warnings, a
//! JSON patch for a mutation, the converted objects; and the webhook's
//! failure policy applied when the guest fails.

mod admission;
mod conversion;

use serde_json::Value;

pub use admission::{admission_request, admit, admit_counted, json_patch};
pub use conversion::{
    conversion_request, conversion_review, convert, convert_counted, converted_object,
};

use crate::contract::UserInfo;

/// What became of one review, for metrics and logs: `allowed`, `denied`,
/// `patched`, `converted`, `bad_request`, or the guest's failure.
pub type ReviewResult = &'static str;

/// A review that could not be read.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BadReview(pub String);

pub(super) fn text(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

pub(super) fn object_text(value: &Value, key: &str) -> Option<String> {
    value
        .get(key)
        .filter(|v| v.is_object())
        .map(ToString::to_string)
}

pub(super) fn user_info(value: &Value) -> UserInfo {
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    UserInfo {
        username: text(value, "username"),
        uid: text(value, "uid"),
        groups: value.get("groups").map(strings).unwrap_or_default(),
        extra: value
            .get("extra")
            .and_then(Value::as_object)
            .map(|extra| extra.iter().map(|(k, v)| (k.clone(), strings(v))).collect())
            .unwrap_or_default(),
    }
}
