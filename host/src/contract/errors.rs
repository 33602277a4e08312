//! The contract's API error: built from its parts, from a kube client
//! error, and as JSON.

use serde_json::{Value, json};

use super::ApiError;

/// An [`ApiError`] from its parts.
pub fn api_error(code: u16, reason: &str, message: &str) -> ApiError {
    ApiError {
        code,
        reason: reason.to_string(),
        message: message.to_string(),
    }
}

/// An [`ApiError`] as JSON (for call records and logs).
pub(crate) fn api_error_json(error: &ApiError) -> Value {
    json!({ "code": error.code, "reason": error.reason, "message": error.message })
}

/// A kube client error as the guest sees it.
pub fn from_kube(error: kube::Error) -> ApiError {
    match error {
        kube::Error::Api(status) => api_error(
            status.code,
            if status.reason.is_empty() {
                "Unknown"
            } else {
                &status.reason
            },
            &status.message,
        ),
        kube::Error::BuildRequest(e) => api_error(400, "BadRequest", &e.to_string()),
        kube::Error::SerdeError(e) => api_error(400, "BadRequest", &e.to_string()),
        other => api_error(
            503,
            "ServiceUnavailable",
            &format!("the API server cannot be reached: {other}"),
        ),
    }
}
