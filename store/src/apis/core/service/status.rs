//! A Service's status: the load balancer's ingress points defaulted
//! (`ipMode: VIP` beside an IP, `SetDefaults_Service`) and checked as
//! `ValidateLoadBalancerStatus` checks them on a status write.

use serde_json::{Value, json};

use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::names::is_dns1123_subdomain;

/// A LoadBalancer Service's ingress points with an IP and no mode are
/// `VIP`.
pub(super) fn default_status(obj: &mut Value) {
    if obj.pointer("/spec/type").and_then(Value::as_str) != Some("LoadBalancer") {
        return;
    }
    let ingress = obj
        .pointer_mut("/status/loadBalancer/ingress")
        .and_then(Value::as_array_mut);
    for point in ingress.into_iter().flatten() {
        let has_ip = point["ip"].as_str().is_some_and(|ip| !ip.is_empty());
        if has_ip
            && point.get("ipMode").is_none_or(Value::is_null)
            && let Some(point) = point.as_object_mut()
        {
            point.insert("ipMode".into(), json!("VIP"));
        }
    }
}

/// `ValidateLoadBalancerStatus`: ingress points only on a LoadBalancer,
/// each IP's mode `Proxy` or `VIP` (and none without an IP), hostnames
/// DNS subdomains.
pub(super) fn validate_status(new: &Value, _old: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let path = Path::new(["status", "loadBalancer", "ingress"]);
    let ingress = new
        .pointer("/status/loadBalancer/ingress")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let kind = new
        .pointer("/spec/type")
        .and_then(Value::as_str)
        .unwrap_or("ClusterIP");
    if kind != "LoadBalancer" && !ingress.is_empty() {
        errors.push(FieldError::forbidden(
            &path,
            "may only be used when `spec.type` is 'LoadBalancer'",
        ));
        return errors;
    }
    for (i, point) in ingress.iter().enumerate() {
        let at = path.index(i);
        let has_ip = point["ip"].as_str().is_some_and(|ip| !ip.is_empty());
        match point.get("ipMode").filter(|m| !m.is_null()) {
            None if has_ip => errors.push(FieldError::required(
                &at.child("ipMode"),
                "must be specified when `ip` is set",
            )),
            None => {}
            Some(_) if !has_ip => errors.push(FieldError::forbidden(
                &at.child("ipMode"),
                "may not be specified when `ip` is not set",
            )),
            Some(mode) => {
                let mode = mode.as_str().unwrap_or_default();
                if mode != "Proxy" && mode != "VIP" {
                    errors.push(FieldError::not_supported(
                        &at.child("ipMode"),
                        mode,
                        &["Proxy".to_string(), "VIP".to_string()],
                    ));
                }
            }
        }
        if let Some(host) = point["hostname"].as_str().filter(|h| !h.is_empty()) {
            for message in is_dns1123_subdomain(host) {
                errors.push(FieldError::invalid(&at.child("hostname"), host, message));
            }
        }
    }
    errors
}
