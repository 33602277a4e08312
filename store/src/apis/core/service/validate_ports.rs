//! A Service's ports as `ValidateService` checks them.

use serde_json::{Value, json};

use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::names::{is_dns1123_label, is_qualified_name, port_name_errors};

pub(super) fn port_number_errors(path: &Path, value: &Value) -> ErrorList {
    let n = value.as_i64().unwrap_or(0);
    crate::machinery::names::port_number_errors(n)
        .into_iter()
        .map(|message| FieldError::invalid(path, n, message))
        .collect()
}

/// `ValidatePortNumOrName`.
pub(super) fn port_num_or_name_errors(path: &Path, value: Option<&Value>) -> ErrorList {
    match value {
        Some(Value::String(name)) => port_name_errors(name)
            .into_iter()
            .map(|message| FieldError::invalid(path, name.as_str(), message))
            .collect(),
        Some(other) => port_number_errors(path, other),
        None => port_number_errors(path, &json!(0)),
    }
}

pub(super) fn validate_port(
    port: &Value,
    require_name: bool,
    names: &mut Vec<String>,
    path: &Path,
) -> ErrorList {
    let mut errors = ErrorList::new();
    let name = port.get("name").and_then(Value::as_str).unwrap_or_default();
    if require_name && name.is_empty() {
        errors.push(FieldError::required(&path.child("name"), ""));
    } else if !name.is_empty() {
        for message in is_dns1123_label(name) {
            errors.push(FieldError::invalid(&path.child("name"), name, message));
        }
        if names.iter().any(|n| n == name) {
            errors.push(FieldError::duplicate(&path.child("name"), name));
        } else {
            names.push(name.to_string());
        }
    }
    errors.extend(port_number_errors(
        &path.child("port"),
        port.get("port").unwrap_or(&json!(0)),
    ));
    let protocol = port
        .get("protocol")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if protocol.is_empty() {
        errors.push(FieldError::required(&path.child("protocol"), ""));
    } else if !["SCTP", "TCP", "UDP"].contains(&protocol) {
        errors.push(FieldError::not_supported(
            &path.child("protocol"),
            protocol,
            &["SCTP".to_string(), "TCP".to_string(), "UDP".to_string()],
        ));
    }
    errors.extend(port_num_or_name_errors(
        &path.child("targetPort"),
        port.get("targetPort"),
    ));
    if let Some(protocol) = port.get("appProtocol").and_then(Value::as_str) {
        for message in is_qualified_name(protocol) {
            errors.push(FieldError::invalid(
                &path.child("appProtocol"),
                protocol,
                message,
            ));
        }
    }
    errors
}

pub(crate) fn not_supported(path: &Path, value: &str, supported: &[&str]) -> FieldError {
    let supported: Vec<String> = supported.iter().map(|s| s.to_string()).collect();
    FieldError::not_supported(path, value, &supported)
}
