//! IngressClass (networking.k8s.io/v1): a parameters reference's `scope`
//! defaulted to `Cluster` (`SetDefaults_IngressClass`); the controller (a
//! domain-prefixed path, at most 250 characters, immutable) and the
//! parameters reference checked (`ValidateIngressClass` and its update).

use serde_json::Value;

use super::validate_typed_reference;
use crate::apis::strategy::Rules;
use crate::machinery::field::{ErrorList, FieldError, Path, immutable};
use crate::machinery::names::{is_dns1123_subdomain, name_is_dns_label, name_is_dns_subdomain};

pub(crate) static RULES: Rules = Rules {
    name: name_is_dns_subdomain,
    default,
    validate,
    validate_update,
    validate_status: None,
};

fn default(class: &mut Value) {
    let parameters = class
        .pointer_mut("/spec/parameters")
        .and_then(Value::as_object_mut);
    if let Some(parameters) = parameters
        && parameters.get("scope").is_none_or(Value::is_null)
    {
        parameters.insert("scope".into(), "Cluster".into());
    }
}

fn validate(class: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let path = Path::new(["spec", "controller"]);
    let controller = class
        .pointer("/spec/controller")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if controller.len() > 250 {
        errors.push(FieldError::too_long(&path, 250));
    }
    errors.extend(domain_prefixed_path_errors(controller, &path));
    if let Some(parameters) = class.pointer("/spec/parameters").filter(|p| !p.is_null()) {
        errors.extend(validate_parameters(
            parameters,
            &Path::new(["spec", "parameters"]),
        ));
    }
    errors
}

fn validate_update(new: &Value, old: &Value) -> ErrorList {
    let mut errors = immutable(
        new.pointer("/spec/controller"),
        old.pointer("/spec/controller"),
        &Path::new(["spec", "controller"]),
    );
    errors.extend(validate(new));
    errors
}

/// `IsDomainPrefixedPath`: `host/path`, the host a DNS subdomain.
fn domain_prefixed_path_errors(value: &str, path: &Path) -> ErrorList {
    if value.is_empty() {
        return vec![FieldError::required(path, "")];
    }
    let Some((host, rest)) = value
        .split_once('/')
        .filter(|(h, r)| !h.is_empty() && !r.is_empty())
    else {
        return vec![FieldError::invalid(
            path,
            value,
            "must be a domain-prefixed path (such as \"acme.io/foo\")",
        )];
    };
    let mut errors: ErrorList = is_dns1123_subdomain(host)
        .into_iter()
        .map(|message| FieldError::invalid(path, host, message))
        .collect();
    let http_path = |c: char| c.is_ascii_alphanumeric() || "/-._~%!$&'()*+,;=:".contains(c);
    if !rest.chars().all(http_path) {
        errors.push(FieldError::invalid(
            path,
            rest,
            "Invalid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')",
        ));
    }
    errors
}

/// `validateIngressClassParametersReference`.
fn validate_parameters(parameters: &Value, path: &Path) -> ErrorList {
    let mut errors = validate_typed_reference(parameters, path);
    let Some(scope) = parameters.get("scope").and_then(Value::as_str) else {
        errors.push(FieldError::required(&path.child("scope"), ""));
        return errors;
    };
    let namespace = parameters.get("namespace").filter(|n| !n.is_null());
    match scope {
        "Namespace" => match namespace.and_then(Value::as_str) {
            None => errors.push(FieldError::required(
                &path.child("namespace"),
                "`parameters.scope` is set to 'Namespace'",
            )),
            Some(namespace) => {
                for message in name_is_dns_label(namespace, false) {
                    errors.push(FieldError::invalid(
                        &path.child("namespace"),
                        namespace,
                        message,
                    ));
                }
            }
        },
        "Cluster" => {
            if namespace.is_some() {
                errors.push(FieldError::forbidden(
                    &path.child("namespace"),
                    "`parameters.scope` is set to 'Cluster'",
                ));
            }
        }
        other => errors.push(FieldError::not_supported(
            &path.child("scope"),
            other,
            &["Cluster".into(), "Namespace".into()],
        )),
    }
    errors
}
