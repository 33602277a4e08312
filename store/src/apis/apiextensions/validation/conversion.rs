//! A CRD's conversion (`ValidateCustomResourceConversion`): the strategy,
//! the review versions, and the webhook's URL or service
//! (`webhook.ValidateWebhookURL`, `ValidateWebhookService`).

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::spec::enum_string;
use crate::go::url::parse;
use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::names::{is_dns1035_label, is_dns1123_subdomain};
use crate::machinery::object::strings;
use crate::machinery::object::text_at;

pub(crate) fn validate_conversion(conversion: &Value, at: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let strategy = text_at(conversion, "/strategy");
    errors.extend(enum_string(
        &at.child("strategy"),
        strategy,
        &["None", "Webhook"],
        true,
    ));
    let config = conversion.pointer("/webhook/clientConfig");
    let review_versions = conversion.pointer("/webhook/conversionReviewVersions");
    // The internal form keeps the client config and review versions at
    // `webhookClientConfig` and `conversionReviewVersions`.
    let config_at = at.child("webhookClientConfig");
    let versions_at = at.child("conversionReviewVersions");
    if strategy == "Webhook" {
        match config {
            None => errors.push(FieldError::required(
                &config_at,
                "required when strategy is set to Webhook",
            )),
            Some(config) => {
                let url = config.get("url").and_then(Value::as_str);
                let service = config.get("service");
                match (url, service) {
                    (Some(url), None) => {
                        errors.extend(validate_webhook_url(url, &config_at.child("url")))
                    }
                    (None, Some(service)) => {
                        errors.extend(validate_webhook_service(
                            service,
                            &config_at.child("service"),
                        ));
                    }
                    _ => errors.push(FieldError::required(
                        &config_at,
                        "exactly one of url or service is required",
                    )),
                }
            }
        }
        let versions = strings(review_versions);
        if versions.is_empty() {
            errors.push(FieldError::required(&versions_at, ""));
        } else {
            let mut seen = BTreeSet::new();
            let mut accepted = false;
            for (i, v) in versions.iter().enumerate() {
                if !seen.insert(v) {
                    errors.push(FieldError::invalid(
                        &versions_at.index(i),
                        v.as_str(),
                        "duplicate version",
                    ));
                    continue;
                }
                for problem in is_dns1035_label(v) {
                    errors.push(FieldError::invalid(
                        &versions_at.index(i),
                        v.as_str(),
                        problem,
                    ));
                }
                accepted |= v == "v1" || v == "v1beta1";
            }
            if !accepted {
                errors.push(FieldError::invalid(
                    &versions_at,
                    json!(versions),
                    "must include at least one of v1, v1beta1",
                ));
            }
        }
    } else {
        if config.is_some() {
            errors.push(FieldError::forbidden(
                &config_at,
                "should not be set when strategy is not set to Webhook",
            ));
        }
        if !strings(review_versions).is_empty() {
            errors.push(FieldError::forbidden(
                &versions_at,
                "should not be set when strategy is not set to Webhook",
            ));
        }
    }
    errors
}

/// `webhook.ValidateWebhookURL` with https required.
fn validate_webhook_url(url: &str, at: &Path) -> ErrorList {
    const FORM: &str = "; desired format: https://host[/path]";
    let parsed = match parse(url) {
        Ok(parsed) => parsed,
        Err(why) => {
            return vec![FieldError::required(
                at,
                format!("url must be a valid URL: {why}{FORM}"),
            )];
        }
    };
    let mut errors = ErrorList::new();
    if parsed.scheme != "https" {
        errors.push(FieldError::invalid(
            at,
            parsed.scheme.as_str(),
            format!("'https' is the only allowed URL scheme{FORM}"),
        ));
    }
    if parsed.host.is_empty() {
        errors.push(FieldError::invalid(
            at,
            "",
            format!("host must be specified{FORM}"),
        ));
    }
    if let Some(user) = &parsed.user {
        errors.push(FieldError::invalid(
            at,
            user.as_str(),
            "user information is not permitted in the URL",
        ));
    }
    if !parsed.fragment.is_empty() {
        errors.push(FieldError::invalid(
            at,
            parsed.fragment.as_str(),
            "fragments are not permitted in the URL",
        ));
    }
    if !parsed.raw_query.is_empty() {
        errors.push(FieldError::invalid(
            at,
            parsed.raw_query.as_str(),
            "query parameters are not permitted in the URL",
        ));
    }
    errors
}

/// `webhook.ValidateWebhookService`, called as the real server calls it
/// for a conversion webhook: with the service's name and namespace
/// swapped (a missing namespace is reported at `service.name`, a missing
/// name at `service.namespace`).
fn validate_webhook_service(service: &Value, at: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    // `ValidateWebhookService(path, cc.Service.Name, cc.Service.Namespace, ...)`
    // of `func ValidateWebhookService(fldPath, namespace, name string, ...)`.
    let name = text_at(service, "/namespace");
    let namespace = text_at(service, "/name");
    if name.is_empty() {
        errors.push(FieldError::required(&at.child("name"), ""));
    }
    if namespace.is_empty() {
        errors.push(FieldError::required(&at.child("namespace"), ""));
    }
    let port = service.get("port").and_then(Value::as_i64).unwrap_or(0);
    if !(1..=65535).contains(&port) {
        errors.push(FieldError::invalid(
            &at.child("port"),
            port,
            "port is not valid: must be between 1 and 65535, inclusive",
        ));
    }
    let Some(path) = service.get("path").and_then(Value::as_str) else {
        return errors;
    };
    let path_at = at.child("path");
    if path == "/" || path.is_empty() {
        return errors;
    }
    if path == "//" {
        errors.push(FieldError::invalid(
            &path_at,
            path,
            "segment[0] may not be empty",
        ));
        return errors;
    }
    if !path.starts_with('/') {
        errors.push(FieldError::invalid(&path_at, path, "must start with a '/'"));
    }
    // Go drops the first byte, whatever it is, then one trailing `/`.
    let mut check = path.get(1..).unwrap_or_default();
    check = check.strip_suffix('/').unwrap_or(check);
    for (i, step) in check.split('/').enumerate() {
        if step.is_empty() {
            errors.push(FieldError::invalid(
                &path_at,
                path,
                format!("segment[{i}] may not be empty"),
            ));
            continue;
        }
        for failure in is_dns1123_subdomain(step) {
            errors.push(FieldError::invalid(
                &path_at,
                path,
                format!("segment[{i}]: {failure}"),
            ));
        }
    }
    errors
}
