//! Ingress (networking.k8s.io/v1): no defaults (empty lists are not
//! stored, as the real server does not store them); a new one's status is an
//! empty load balancer. The checks of `ValidateIngressSpec` (rules or a
//! default backend, hosts and wildcard hosts, paths by their type,
//! backends, TLS, the class name) and, on create, the class annotation
//! matching `ingressClassName`; an update keeps allowing the invalid TLS
//! secret names and wildcard rules its old object had.

use serde_json::{Value, json};

use super::{validate_typed_reference, wildcard_subdomain_errors};
use crate::apis::shape::{drop_empty, spec_mut};
use crate::apis::strategy::Rules;
use crate::go::net::{parse_ip, parse_ip_sloppy};
use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::names::{
    is_dns1123_subdomain, name_is_dns_label, name_is_dns_subdomain, port_name_errors,
    port_number_errors,
};
use crate::machinery::object::text;

pub(crate) static RULES: Rules = Rules {
    name: name_is_dns_subdomain,
    default,
    validate: validate_create,
    validate_update,
    validate_status: Some(validate_status),
};

/// The annotation that named a class before `ingressClassName`.
const CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";

/// No defaults; but empty lists are not stored (`rules` only beside a
/// default backend: without one, the refusal shows the empty list).
fn default(ingress: &mut Value) {
    let Some(spec) = spec_mut(ingress) else {
        return;
    };
    drop_empty(spec, &["tls"]);
    if spec.get("defaultBackend").is_some_and(|b| !b.is_null()) {
        drop_empty(spec, &["rules"]);
    }
    let tls = spec.get_mut("tls").and_then(Value::as_array_mut);
    for entry in tls.into_iter().flatten().filter_map(Value::as_object_mut) {
        drop_empty(entry, &["hosts"]);
    }
}

/// What a new Ingress's status is: an empty load balancer.
pub(crate) fn prepare_create(ingress: &mut Value) {
    if let Some(map) = ingress.as_object_mut() {
        map.insert("status".into(), json!({"loadBalancer": {}}));
    }
}

/// The warnings of a new Ingress: the class annotation is deprecated when
/// `ingressClassName` is not set.
pub(crate) fn warnings(ingress: &Value) -> Vec<String> {
    let annotated = ingress
        .pointer("/metadata/annotations")
        .is_some_and(|a| a.get(CLASS_ANNOTATION).is_some());
    let named = ingress
        .pointer("/spec/ingressClassName")
        .is_some_and(|c| !c.is_null());
    if annotated && !named {
        return vec![format!(
            "annotation \"{CLASS_ANNOTATION}\" is deprecated, please use 'spec.ingressClassName' instead"
        )];
    }
    Vec::new()
}

/// What an update may keep of its old object's invalid values.
#[derive(Default)]
pub(crate) struct Options {
    /// TLS secret names that are not DNS subdomains.
    invalid_secret_names: bool,
    /// The rules of wildcard hosts are not checked.
    invalid_wildcard_rules: bool,
}

fn validate_create(ingress: &Value) -> ErrorList {
    let mut errors = validate_spec(ingress, &Options::default());
    let annotation = ingress
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(CLASS_ANNOTATION))
        .and_then(Value::as_str);
    let class = ingress
        .pointer("/spec/ingressClassName")
        .and_then(Value::as_str);
    if let (Some(annotation), Some(class)) = (annotation, class)
        && annotation != class
    {
        errors.push(FieldError::invalid(
            &Path::new(["annotations"]).child(CLASS_ANNOTATION),
            annotation,
            "must match `ingressClassName` when both are specified",
        ));
    }
    errors
}

fn validate_update(new: &Value, old: &Value) -> ErrorList {
    let tls = old.pointer("/spec/tls").and_then(Value::as_array);
    let rules = old.pointer("/spec/rules").and_then(Value::as_array);
    let options = Options {
        invalid_secret_names: tls.into_iter().flatten().any(|t| {
            let name = text(t, "secretName");
            !name.is_empty() && !is_dns1123_subdomain(name).is_empty()
        }),
        invalid_wildcard_rules: rules.into_iter().flatten().any(|r| {
            text(r, "host").contains('*') && !validate_rule_value(r, &Path::none()).is_empty()
        }),
    };
    validate_spec(new, &options)
}

fn set<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    value.get(key).filter(|v| !v.is_null())
}

fn validate_spec(ingress: &Value, options: &Options) -> ErrorList {
    let empty = json!({});
    let spec = ingress.get("spec").unwrap_or(&empty);
    let path = Path::new(["spec"]);
    let mut errors = ErrorList::new();
    let rules = spec.get("rules").and_then(Value::as_array);
    let default_backend = set(spec, "defaultBackend");
    if rules.is_none_or(Vec::is_empty) && default_backend.is_none() {
        errors.push(FieldError::invalid(
            &path,
            spec.get("rules").cloned().unwrap_or(Value::Null),
            "either `defaultBackend` or `rules` must be specified",
        ));
    }
    if let Some(backend) = default_backend {
        errors.extend(validate_backend(backend, &path.child("defaultBackend")));
    }
    for (i, rule) in rules.into_iter().flatten().enumerate() {
        errors.extend(validate_rule(rule, &path.child("rules").index(i), options));
    }
    let tls = spec.get("tls").and_then(Value::as_array);
    for (i, entry) in tls.into_iter().flatten().enumerate() {
        let at = path.child("tls").index(i);
        let hosts = entry.get("hosts").and_then(Value::as_array);
        for (j, host) in hosts.into_iter().flatten().enumerate() {
            let host = host.as_str().unwrap_or_default();
            for message in host_errors(host) {
                errors.push(FieldError::invalid(
                    &at.child("hosts").index(j),
                    host,
                    message,
                ));
            }
        }
        let secret = text(entry, "secretName");
        if !options.invalid_secret_names && !secret.is_empty() {
            for message in is_dns1123_subdomain(secret) {
                errors.push(FieldError::invalid(
                    &at.child("secretName"),
                    secret,
                    message,
                ));
            }
        }
    }
    if let Some(class) = spec.get("ingressClassName").and_then(Value::as_str) {
        for message in name_is_dns_subdomain(class, false) {
            errors.push(FieldError::invalid(
                &path.child("ingressClassName"),
                class,
                message,
            ));
        }
    }
    errors
}

/// A host: a wildcard subdomain when it holds `*`, else a subdomain.
fn host_errors(host: &str) -> Vec<String> {
    if host.contains('*') {
        wildcard_subdomain_errors(host)
    } else {
        is_dns1123_subdomain(host)
    }
}

/// `validateIngressRules` of one rule.
fn validate_rule(rule: &Value, path: &Path, options: &Options) -> ErrorList {
    let mut errors = ErrorList::new();
    let host = text(rule, "host");
    if !host.is_empty() {
        if parse_ip_sloppy(host).is_some() {
            errors.push(FieldError::invalid(
                &path.child("host"),
                host,
                "must be a DNS name, not an IP address",
            ));
        }
        for message in host_errors(host) {
            errors.push(FieldError::invalid(&path.child("host"), host, message));
        }
    }
    if !host.contains('*') || !options.invalid_wildcard_rules {
        errors.extend(validate_rule_value(rule, path));
    }
    errors
}

/// `validateIngressRuleValue`: the HTTP paths.
fn validate_rule_value(rule: &Value, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let Some(http) = set(rule, "http") else {
        return errors;
    };
    let at = path.child("http").child("paths");
    let paths = http.get("paths").and_then(Value::as_array);
    if paths.is_none_or(Vec::is_empty) {
        errors.push(FieldError::required(&at, ""));
    }
    for (i, entry) in paths.into_iter().flatten().enumerate() {
        errors.extend(validate_path(entry, &at.index(i)));
    }
    errors
}

/// `validateHTTPIngressPath`: the path as its type wants it, the backend.
fn validate_path(entry: &Value, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let Some(kind) = set(entry, "pathType") else {
        errors.push(FieldError::required(
            &path.child("pathType"),
            "pathType must be specified",
        ));
        return errors;
    };
    let kind = kind.as_str().unwrap_or_default();
    let value = text(entry, "path");
    let at = path.child("path");
    let absolute = |errors: &mut ErrorList| {
        if !value.starts_with('/') {
            errors.push(FieldError::invalid(&at, value, "must be an absolute path"));
        }
    };
    match kind {
        "Exact" | "Prefix" => {
            absolute(&mut errors);
            for sequence in ["//", "/./", "/../", "%2f", "%2F"] {
                if value.contains(sequence) {
                    errors.push(FieldError::invalid(
                        &at,
                        value,
                        format!("must not contain '{sequence}'"),
                    ));
                }
            }
            for suffix in ["/..", "/."] {
                if value.ends_with(suffix) {
                    errors.push(FieldError::invalid(
                        &at,
                        value,
                        format!("cannot end with '{suffix}'"),
                    ));
                }
            }
        }
        "ImplementationSpecific" => {
            if !value.is_empty() {
                absolute(&mut errors);
            }
        }
        other => errors.push(FieldError::not_supported(
            &path.child("pathType"),
            other,
            &[
                "Exact".into(),
                "ImplementationSpecific".into(),
                "Prefix".into(),
            ],
        )),
    }
    let empty = json!({});
    errors.extend(validate_backend(
        entry.get("backend").unwrap_or(&empty),
        &path.child("backend"),
    ));
    errors
}

/// `validateIngressBackend`: a service (a DNS label name, a port name or
/// number) or a resource, exactly one.
fn validate_backend(backend: &Value, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    match (set(backend, "resource"), set(backend, "service")) {
        (Some(_), Some(_)) => errors.push(FieldError::invalid(
            path,
            "",
            "cannot set both resource and service backends",
        )),
        (Some(resource), None) => {
            errors.extend(validate_typed_reference(resource, &path.child("resource")));
        }
        (None, Some(service)) => {
            let at = path.child("service");
            let name = text(service, "name");
            if name.is_empty() {
                errors.push(FieldError::required(&at.child("name"), ""));
            }
            // `RelaxedServiceNameValidation` (on since 1.36): a DNS label.
            for message in name_is_dns_label(name, false)
                .into_iter()
                .filter(|_| !name.is_empty())
            {
                errors.push(FieldError::invalid(&at.child("name"), name, message));
            }
            let empty = json!({});
            let port = service.get("port").unwrap_or(&empty);
            let port_name = text(port, "name");
            let number = port.get("number").and_then(Value::as_i64).unwrap_or(0);
            match (port_name.is_empty(), number == 0) {
                (false, false) => errors.push(FieldError::invalid(
                    path,
                    "",
                    "cannot set both port name & port number",
                )),
                (false, true) => {
                    for message in port_name_errors(port_name) {
                        let field = at.child("port").child("name");
                        errors.push(FieldError::invalid(&field, port_name, message));
                    }
                }
                (true, false) => {
                    for message in port_number_errors(number) {
                        let field = at.child("port").child("number");
                        errors.push(FieldError::invalid(&field, number, message));
                    }
                }
                (true, true) => errors.push(FieldError::required(
                    path,
                    "port name or number is required",
                )),
            }
        }
        (None, None) => errors.push(FieldError::invalid(
            path,
            "",
            "resource or service backend is required",
        )),
    }
    errors
}

/// `ValidateIngressStatusUpdate`: the load balancer's addresses.
fn validate_status(new: &Value, old: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let entries = |obj: &Value| -> Vec<Value> {
        obj.pointer("/status/loadBalancer/ingress")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let old_ips: Vec<String> = entries(old)
        .iter()
        .map(|e| text(e, "ip").to_string())
        .filter(|ip| !ip.is_empty())
        .collect();
    for (i, entry) in entries(new).iter().enumerate() {
        let at = Path::new(["status", "loadBalancer", "ingress"]).index(i);
        let ip = text(entry, "ip");
        if !ip.is_empty() && !old_ips.iter().any(|o| o == ip) {
            match parse_ip_sloppy(ip) {
                None => errors.push(FieldError::invalid(
                    &at.child("ip"),
                    ip,
                    "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                )),
                Some(_) if parse_ip(ip).is_none() => errors.push(FieldError::invalid(
                    &at.child("ip"),
                    ip,
                    "must not have leading 0s",
                )),
                Some(_) => {}
            }
        }
        let hostname = text(entry, "hostname");
        if !hostname.is_empty() {
            for message in is_dns1123_subdomain(hostname) {
                errors.push(FieldError::invalid(
                    &at.child("hostname"),
                    hostname,
                    message,
                ));
            }
            if parse_ip_sloppy(hostname).is_some() {
                errors.push(FieldError::invalid(
                    &at.child("hostname"),
                    hostname,
                    "must be a DNS name, not an IP address",
                ));
            }
        }
    }
    errors
}
