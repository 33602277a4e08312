//! A Service's spec as its strategy and checks read it: its type, ports,
//! cluster IPs, and what its type needs (a cluster IP, node ports).

use serde_json::{Map, Value, json};

use crate::go::net;

pub(crate) fn spec_str<'a>(obj: &'a Value, key: &str) -> &'a str {
    obj.pointer(&format!("/spec/{key}"))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

pub(crate) fn ports(obj: &Value) -> &[Value] {
    obj.pointer("/spec/ports")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

pub(crate) fn cluster_ips(obj: &Value) -> Vec<String> {
    obj.pointer("/spec/clusterIPs")
        .and_then(Value::as_array)
        .map(|ips| {
            ips.iter()
                .map(|ip| ip.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

pub(crate) fn is_headless(obj: &Value) -> bool {
    spec_str(obj, "clusterIP") == "None"
}

/// `service.ExternallyAccessible`.
pub(crate) fn externally_accessible(obj: &Value) -> bool {
    match spec_str(obj, "type") {
        "LoadBalancer" | "NodePort" => true,
        "ClusterIP" => obj
            .pointer("/spec/externalIPs")
            .and_then(Value::as_array)
            .is_some_and(|ips| !ips.is_empty()),
        _ => false,
    }
}

/// `service.NeedsHealthCheck`.
pub(crate) fn needs_health_check(obj: &Value) -> bool {
    spec_str(obj, "type") == "LoadBalancer" && spec_str(obj, "externalTrafficPolicy") == "Local"
}

pub(crate) fn needs_cluster_ip(obj: &Value) -> bool {
    spec_str(obj, "type") != "ExternalName" && !is_headless(obj)
}

pub(crate) fn needs_node_ports(obj: &Value) -> bool {
    match spec_str(obj, "type") {
        "NodePort" => true,
        "LoadBalancer" => obj.pointer("/spec/allocateLoadBalancerNodePorts") != Some(&json!(false)),
        _ => false,
    }
}

/// `needsClusterIP` of the strategy: any type but ExternalName.
pub(crate) fn needs_cluster_ip_of_type(obj: &Value) -> bool {
    spec_str(obj, "type") != "ExternalName"
}

pub(crate) fn node_ports_of_ports(service: &Value) -> Vec<i64> {
    ports(service)
        .iter()
        .filter_map(|p| p.get("nodePort").and_then(Value::as_i64))
        .filter(|p| *p != 0)
        .collect()
}

/// A Service's cluster IPs as numbers (IPv4; `None` and others left out).
pub(crate) fn ip_numbers(service: &Value) -> Vec<u32> {
    cluster_ips(service)
        .iter()
        .filter_map(|ip| net::parse_ipv4_addr(ip))
        .map(u32::from)
        .collect()
}

pub(crate) fn node_ports_of(service: &Value) -> Vec<i64> {
    let mut held = node_ports_of_ports(service);
    if let Some(port) = service
        .pointer("/spec/healthCheckNodePort")
        .and_then(Value::as_i64)
        && port != 0
    {
        held.push(port);
    }
    held
}

pub(super) fn spec_mut(obj: &mut Value) -> Option<&mut Map<String, Value>> {
    obj.get_mut("spec").and_then(Value::as_object_mut)
}
