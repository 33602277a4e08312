//! Probes and lifecycle handlers as `validateProbe` and `validateHandler`
//! check them: one handler each, ports by number or name, no negative
//! timings.

use serde_json::Value;

use super::containers::{nonnegative, port_number};
use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::names::port_name_errors;
use crate::machinery::object::text;

/// `validateProbe`: one handler, no negative numbers.
pub(super) fn validate_probe(probe: &Value, path: &Path) -> ErrorList {
    let mut errors = validate_handler(probe, path);
    for key in [
        "initialDelaySeconds",
        "timeoutSeconds",
        "periodSeconds",
        "successThreshold",
        "failureThreshold",
    ] {
        errors.extend(nonnegative(probe, key, path));
    }
    if let Some(grace) = probe
        .get("terminationGracePeriodSeconds")
        .and_then(Value::as_i64)
        .filter(|g| *g <= 0)
    {
        errors.push(FieldError::invalid(
            &path.child("terminationGracePeriodSeconds"),
            grace,
            "must be greater than 0",
        ));
    }
    errors
}

/// `validateHandler`: exactly one of exec, httpGet, tcpSocket, grpc, sleep.
pub(super) fn validate_handler(handler: &Value, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let mut count = 0;
    for kind in ["exec", "httpGet", "tcpSocket", "grpc", "sleep"] {
        let Some(action) = handler.get(kind).filter(|a| !a.is_null()) else {
            continue;
        };
        let at = path.child(kind);
        if count > 0 {
            errors.push(FieldError::forbidden(
                &at,
                "may not specify more than 1 handler type",
            ));
            continue;
        }
        count += 1;
        match kind {
            "exec"
                if action
                    .get("command")
                    .and_then(Value::as_array)
                    .is_none_or(Vec::is_empty) =>
            {
                errors.push(FieldError::required(&at.child("command"), ""));
            }
            "httpGet" => {
                if text(action, "path").is_empty() {
                    errors.push(FieldError::required(&at.child("path"), ""));
                }
                errors.extend(port_num_or_name(action.get("port"), &at.child("port")));
                let scheme = text(action, "scheme");
                if scheme != "HTTP" && scheme != "HTTPS" {
                    errors.push(FieldError::not_supported(
                        &at.child("scheme"),
                        scheme,
                        &["HTTP".to_string(), "HTTPS".to_string()],
                    ));
                }
            }
            "tcpSocket" => errors.extend(port_num_or_name(action.get("port"), &at.child("port"))),
            _ => {}
        }
    }
    if count == 0 {
        errors.push(FieldError::required(path, "must specify a handler type"));
    }
    errors
}

/// `ValidatePortNumOrName`.
fn port_num_or_name(port: Option<&Value>, path: &Path) -> ErrorList {
    match port {
        Some(Value::String(name)) => port_name_errors(name)
            .into_iter()
            .map(|m| FieldError::invalid(path, name.as_str(), m))
            .collect(),
        other => {
            let number = other.and_then(Value::as_i64).unwrap_or(0);
            port_number(number)
                .map(|m| FieldError::invalid(path, number, m))
                .into_iter()
                .collect()
        }
    }
}
