//! ConfigMap (v1): keys of `data` and `binaryData`, distinct between them,
//! 1 MiB in all, and nothing changes once `immutable: true`
//! (`ValidateConfigMap`, `ValidateConfigMapUpdate`).

use serde_json::Value;

use crate::apis::strategy::{Rules, no_defaults};
use crate::go::json::decode::{bytes_map_error, string_map_error};
use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::names::{config_map_key_errors, name_is_dns_subdomain};

pub(crate) static RULES: Rules = Rules {
    name: name_is_dns_subdomain,
    default: no_defaults,
    validate,
    validate_update,
    validate_status: None,
};

/// `MaxSecretSize`, which ConfigMaps share: 1 MiB of data in all.
const MAX_SIZE: usize = 1024 * 1024;

/// Why the body cannot be decoded into a ConfigMap: a `data` value that
/// is not a string, `binaryData` that is not base64.
pub(crate) fn decode(obj: &Value) -> Option<String> {
    string_map_error(obj, "data", "ConfigMap.data")
        .or_else(|| bytes_map_error(obj, "binaryData", "ConfigMap.binaryData"))
}

fn validate(obj: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let mut total = 0;
    let data = obj.get("data").and_then(Value::as_object);
    let binary = obj.get("binaryData").and_then(Value::as_object);
    for (key, value) in data.into_iter().flatten() {
        let at = Path::new(["data"]).key(key);
        for message in config_map_key_errors(key) {
            errors.push(FieldError::invalid(&at, key.as_str(), message));
        }
        if binary.is_some_and(|b| b.contains_key(key)) {
            errors.push(FieldError::invalid(
                &at,
                key.as_str(),
                "duplicate of key present in binaryData",
            ));
        }
        total += value.as_str().map_or(0, str::len);
    }
    for (key, value) in binary.into_iter().flatten() {
        let at = Path::new(["binaryData"]).key(key);
        for message in config_map_key_errors(key) {
            errors.push(FieldError::invalid(&at, key.as_str(), message));
        }
        // Stored as base64: its bytes count.
        total += value
            .as_str()
            .map_or(0, |s| s.trim_end_matches('=').len() * 3 / 4);
    }
    if total > MAX_SIZE {
        errors.push(FieldError::too_long(&Path::new([""]), MAX_SIZE as i64));
    }
    errors
}

fn validate_update(new: &Value, old: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    if old.get("immutable") == Some(&Value::Bool(true)) {
        if new.get("immutable") != Some(&Value::Bool(true)) {
            errors.push(FieldError::forbidden(
                &Path::new(["immutable"]),
                "field is immutable when `immutable` is set",
            ));
        }
        if new.get("data") != old.get("data") {
            errors.push(FieldError::forbidden(
                &Path::new(["data"]),
                "field is immutable when `immutable` is set",
            ));
        }
        if new.get("binaryData") != old.get("binaryData") {
            errors.push(FieldError::forbidden(
                &Path::new(["binaryData"]),
                "field is immutable when `immutable` is set",
            ));
        }
    }
    errors.extend(validate(new));
    errors
}
