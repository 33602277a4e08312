//! `ValidateService` and `ValidateServiceUpdate`.

use serde_json::{Value, json};

use super::spec::{
    cluster_ips, externally_accessible, is_headless, needs_health_check, ports, spec_str,
};
use super::validate_cluster_ips::{cluster_ips_related_errors, ip_errors};
use super::validate_ports::{not_supported, port_number_errors, validate_port};
use crate::go::json::encode::go_json;
use crate::machinery::field::{ErrorList, ErrorType, FieldError, Path, error_with_written_value};
use crate::machinery::names::{is_dns1123_subdomain, is_qualified_name};
use crate::machinery::objectmeta::validate_labels;

/// `validateService`.
fn validate_service(obj: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let spec = Path::new(["spec"]);
    let kind = spec_str(obj, "type");
    let headless = is_headless(obj);
    let ips = cluster_ips(obj);
    let list = ports(obj);
    if list.is_empty() && !headless && kind != "ExternalName" {
        errors.push(FieldError::required(&spec.child("ports"), ""));
    }
    match kind {
        "LoadBalancer" | "NodePort" if headless => {
            errors.push(FieldError::invalid(
                &spec.child("clusterIPs").index(0),
                ips.first().map_or("", String::as_str),
                format!("may not be set to 'None' for {kind} services"),
            ));
        }
        "ExternalName" => {
            if !ips.is_empty() {
                errors.push(FieldError::forbidden(
                    &spec.child("clusterIPs"),
                    "may not be set for ExternalName services",
                ));
            }
            if obj
                .pointer("/spec/ipFamilies")
                .and_then(Value::as_array)
                .is_some_and(|f| !f.is_empty())
            {
                errors.push(FieldError::forbidden(
                    &spec.child("ipFamilies"),
                    "may not be set for ExternalName services",
                ));
            }
            if obj
                .pointer("/spec/ipFamilyPolicy")
                .is_some_and(|p| !p.is_null())
            {
                errors.push(FieldError::forbidden(
                    &spec.child("ipFamilyPolicy"),
                    "may not be set for ExternalName services",
                ));
            }
            let cname = spec_str(obj, "externalName");
            let cname = cname.strip_suffix('.').unwrap_or(cname);
            if cname.is_empty() {
                errors.push(FieldError::required(&spec.child("externalName"), ""));
            } else {
                for message in is_dns1123_subdomain(cname) {
                    errors.push(FieldError::invalid(
                        &spec.child("externalName"),
                        cname,
                        message,
                    ));
                }
            }
        }
        _ => {}
    }
    let mut names = Vec::new();
    for (i, port) in list.iter().enumerate() {
        errors.extend(validate_port(
            port,
            list.len() > 1,
            &mut names,
            &spec.child("ports").index(i),
        ));
    }
    if let Some(selector) = obj.pointer("/spec/selector").filter(|s| s.is_object()) {
        errors.extend(validate_labels(
            &json!({ "labels": selector }),
            &spec.child("selector"),
        ));
    }
    let affinity = spec_str(obj, "sessionAffinity");
    if affinity.is_empty() {
        errors.push(FieldError::required(&spec.child("sessionAffinity"), ""));
    } else if !["ClientIP", "None"].contains(&affinity) {
        errors.push(not_supported(
            &spec.child("sessionAffinity"),
            affinity,
            &["ClientIP", "None"],
        ));
    }
    if affinity == "ClientIP" {
        let timeout = obj
            .pointer("/spec/sessionAffinityConfig/clientIP/timeoutSeconds")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if !(1..=86400).contains(&timeout) {
            errors.push(FieldError::invalid(
                &spec
                    .child("sessionAffinityConfig")
                    .child("clientIP")
                    .child("timeoutSeconds"),
                timeout,
                "must be greater than 0 and less than 86400",
            ));
        }
    } else if affinity == "None"
        && obj
            .pointer("/spec/sessionAffinityConfig")
            .is_some_and(|c| !c.is_null())
    {
        errors.push(FieldError::forbidden(
            &spec.child("sessionAffinityConfig"),
            "must not be set when session affinity is None",
        ));
    }
    errors.extend(cluster_ips_related_errors(obj));
    if let Some(external) = obj.pointer("/spec/externalIPs").and_then(Value::as_array) {
        for (i, ip) in external.iter().enumerate() {
            errors.extend(ip_errors(
                &spec.child("externalIPs").index(i),
                ip.as_str().unwrap_or_default(),
            ));
        }
    }
    if kind.is_empty() {
        errors.push(FieldError::required(&spec.child("type"), ""));
    } else if !["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"].contains(&kind) {
        errors.push(not_supported(
            &spec.child("type"),
            kind,
            &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"],
        ));
    }
    if kind == "ClusterIP" {
        for (i, port) in list.iter().enumerate() {
            if port.get("nodePort").and_then(Value::as_i64).unwrap_or(0) != 0 {
                errors.push(FieldError::forbidden(
                    &spec.child("ports").index(i).child("nodePort"),
                    "may not be used when `type` is 'ClusterIP'",
                ));
            }
        }
    }
    let mut node_ports: Vec<(String, i64)> = Vec::new();
    for (i, port) in list.iter().enumerate() {
        let number = port.get("nodePort").and_then(Value::as_i64).unwrap_or(0);
        if number == 0 {
            continue;
        }
        let key = (
            port.get("protocol")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            number,
        );
        if node_ports.contains(&key) {
            errors.push(FieldError::duplicate(
                &spec.child("ports").index(i).child("nodePort"),
                number,
            ));
        }
        node_ports.push(key);
    }
    let mut seen: Vec<(String, i64)> = Vec::new();
    for (i, port) in list.iter().enumerate() {
        let protocol = port
            .get("protocol")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let number = port.get("port").and_then(Value::as_i64).unwrap_or(0);
        let key = (protocol, number);
        if seen.contains(&key) {
            // Go prints the key, a `ServicePort` struct, field by field.
            let written = format!(
                "{{\"Name\":\"\",\"Protocol\":{},\"AppProtocol\":null,\"Port\":{},\"TargetPort\":0,\"NodePort\":0}}",
                go_json(&json!(key.0)),
                key.1
            );
            errors.push(error_with_written_value(
                ErrorType::Duplicate,
                &spec.child("ports").index(i),
                &written,
                "",
            ));
        }
        seen.push(key);
    }
    let ranges = obj
        .pointer("/spec/loadBalancerSourceRanges")
        .and_then(Value::as_array)
        .is_some_and(|r| !r.is_empty());
    if ranges && kind != "LoadBalancer" {
        errors.push(FieldError::forbidden(
            &spec.child("LoadBalancerSourceRanges"),
            "may only be used when `type` is 'LoadBalancer'",
        ));
    }
    if let Some(class) = obj
        .pointer("/spec/loadBalancerClass")
        .and_then(Value::as_str)
    {
        if kind == "LoadBalancer" {
            for message in is_qualified_name(class) {
                errors.push(FieldError::invalid(
                    &spec.child("loadBalancerClass"),
                    class,
                    message,
                ));
            }
        } else {
            errors.push(FieldError::forbidden(
                &spec.child("loadBalancerClass"),
                "may only be used when `type` is 'LoadBalancer'",
            ));
        }
    }
    let allocate_lb = obj
        .pointer("/spec/allocateLoadBalancerNodePorts")
        .filter(|v| !v.is_null());
    if allocate_lb.is_some() && kind != "LoadBalancer" {
        errors.push(FieldError::forbidden(
            &spec.child("allocateLoadBalancerNodePorts"),
            "may only be used when `type` is 'LoadBalancer'",
        ));
    }
    if kind == "LoadBalancer" && allocate_lb.is_none() {
        errors.push(FieldError::required(
            &Path::new(["allocateLoadBalancerNodePorts"]),
            "",
        ));
    }
    let external = spec_str(obj, "externalTrafficPolicy");
    if !externally_accessible(obj) {
        if !external.is_empty() {
            errors.push(FieldError::invalid(
                &spec.child("externalTrafficPolicy"),
                external,
                "may only be set for externally-accessible services",
            ));
        }
    } else if external.is_empty() {
        errors.push(FieldError::required(
            &spec.child("externalTrafficPolicy"),
            "",
        ));
    } else if !["Cluster", "Local"].contains(&external) {
        errors.push(not_supported(
            &spec.child("externalTrafficPolicy"),
            external,
            &["Cluster", "Local"],
        ));
    }
    let health = obj
        .pointer("/spec/healthCheckNodePort")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if !needs_health_check(obj) {
        if health != 0 {
            errors.push(FieldError::invalid(
                &spec.child("healthCheckNodePort"),
                health,
                "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
            ));
        }
    } else if health == 0 {
        errors.push(FieldError::required(&spec.child("healthCheckNodePort"), ""));
    } else {
        errors.extend(port_number_errors(
            &spec.child("healthCheckNodePort"),
            &json!(health),
        ));
    }
    match obj
        .pointer("/spec/internalTrafficPolicy")
        .and_then(Value::as_str)
    {
        None if matches!(kind, "NodePort" | "LoadBalancer" | "ClusterIP") => {
            errors.push(FieldError::required(
                &spec.child("internalTrafficPolicy"),
                "",
            ));
        }
        Some(policy) if !["Cluster", "Local"].contains(&policy) => {
            errors.push(not_supported(
                &spec.child("internalTrafficPolicy"),
                policy,
                &["Cluster", "Local"],
            ));
        }
        _ => {}
    }
    errors
}

pub(super) fn validate(obj: &Value) -> ErrorList {
    validate_service(obj)
}

/// `ValidateServiceUpdate`: the cluster IPs stay (`validateUpgradeDowngradeClusterIPs`).
pub(super) fn validate_update(new: &Value, old: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let external = |o: &Value| spec_str(o, "type") == "ExternalName";
    if !(external(new) || external(old) || is_headless(new) && is_headless(old)) {
        let (old_ips, new_ips) = (cluster_ips(old), cluster_ips(new));
        let at = |i: usize| Path::new(["spec", "clusterIPs"]).index(i);
        if old_ips.len() == new_ips.len() {
            for (i, ip) in old_ips.iter().enumerate() {
                if *ip != new_ips[i] {
                    errors.push(FieldError::invalid(
                        &at(i),
                        json!(new_ips),
                        "may not change once set",
                    ));
                }
            }
        } else if old_ips.len() > new_ips.len() {
            if new_ips.is_empty() {
                errors.push(FieldError::invalid(
                    &at(0),
                    json!(new_ips),
                    "primary clusterIP can not be unset",
                ));
            } else if new_ips[0] != old_ips[0] {
                errors.push(FieldError::invalid(
                    &at(0),
                    json!(new_ips),
                    "may not change once set",
                ));
            }
        } else if !old_ips.is_empty() && new_ips[0] != old_ips[0] {
            errors.push(FieldError::invalid(
                &at(0),
                json!(new_ips),
                "may not change once set",
            ));
        }
    }
    let load_balancer = |o: &Value| spec_str(o, "type") == "LoadBalancer";
    if load_balancer(old)
        && load_balancer(new)
        && new.pointer("/spec/loadBalancerClass") != old.pointer("/spec/loadBalancerClass")
    {
        let class = new
            .pointer("/spec/loadBalancerClass")
            .cloned()
            .unwrap_or(Value::Null);
        errors.push(FieldError::invalid(
            &Path::new(["spec", "loadBalancerClass"]),
            class,
            "may not change once set",
        ));
    }
    if needs_health_check(old)
        && needs_health_check(new)
        && new.pointer("/spec/healthCheckNodePort") != old.pointer("/spec/healthCheckNodePort")
    {
        errors.push(FieldError::forbidden(
            &Path::new(["spec", "healthCheckNodePort"]),
            "field is immutable",
        ));
    }
    errors.extend(validate_service(new));
    errors
}
