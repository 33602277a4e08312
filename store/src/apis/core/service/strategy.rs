//! What the Service strategy sets on a new Service and an update
//! (`PrepareForCreate`, `PrepareForUpdate`), the warnings a write gets, and
//! the fields a Service is selected by (its cluster IP and type).

use serde_json::{Value, json};

use super::spec::{
    externally_accessible, is_headless, needs_cluster_ip_of_type, needs_health_check,
    node_ports_of_ports, spec_mut, spec_str,
};
use crate::apis::strategy::Selectable;
use crate::meta::selector::{Refusal, object_meta_fields};

/// `PrepareForCreate`: a new Service starts with an empty status.
pub(crate) fn prepare_create(obj: &mut Value) {
    if let Some(root) = obj.as_object_mut() {
        root.insert("status".into(), json!({"loadBalancer": {}}));
    }
    internal_traffic_policy_on_read(obj);
}

/// An ExternalName Service reads back without an internal traffic policy
/// (`defaultOnReadInternalTrafficPolicy` in
/// `pkg/registry/core/service/storage/storage.go`): the field manager saw
/// the one it was written with (and its owner keeps it).
fn internal_traffic_policy_on_read(obj: &mut Value) {
    if spec_str(obj, "type") == "ExternalName"
        && let Some(spec) = spec_mut(obj)
    {
        spec.remove("internalTrafficPolicy");
    }
}

/// `PrepareForUpdate`'s `dropTypeDependentFields`: what a change of type
/// leaves behind goes, when the client left it as it was (the cluster IP
/// and IP families leaving ClusterIP, node ports leaving NodePort and
/// LoadBalancer, the external traffic policy, a load balancer's status).
pub(crate) fn prepare_update(new: &mut Value, old: &Value) {
    let same = |new: &Value, key: &str| {
        new.pointer(&format!("/spec/{key}")) == old.pointer(&format!("/spec/{key}"))
    };
    let view = new.clone();
    let drop_cluster_ip = needs_cluster_ip_of_type(old) && !needs_cluster_ip_of_type(&view);
    let same_ips = same(&view, "clusterIP") && same(&view, "clusterIPs");
    let same_families = same(&view, "ipFamilies");
    let same_policy = same(&view, "ipFamilyPolicy");
    let node_port_types = |o: &Value| matches!(spec_str(o, "type"), "NodePort" | "LoadBalancer");
    let old_ports = node_ports_of_ports(old);
    let drop_node_ports = node_port_types(old)
        && !node_port_types(&view)
        && node_ports_of_ports(&view)
            .iter()
            .all(|p| old_ports.contains(p));
    let drop_health =
        needs_health_check(old) && !needs_health_check(&view) && same(&view, "healthCheckNodePort");
    let drop_allocate = spec_str(old, "type") == "LoadBalancer"
        && spec_str(&view, "type") != "LoadBalancer"
        && old.pointer("/spec/allocateLoadBalancerNodePorts").is_some()
        && same(&view, "allocateLoadBalancerNodePorts");
    let drop_external = externally_accessible(old)
        && !externally_accessible(&view)
        && same(&view, "externalTrafficPolicy");
    let load_balancer = spec_str(&view, "type") == "LoadBalancer";
    if let Some(spec) = spec_mut(new) {
        if drop_cluster_ip {
            if same_ips {
                spec.remove("clusterIP");
                spec.remove("clusterIPs");
            }
            if same_families {
                spec.remove("ipFamilies");
            }
            if same_policy {
                spec.remove("ipFamilyPolicy");
            }
        }
        if drop_node_ports && let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut)
        {
            for port in ports.iter_mut().filter_map(Value::as_object_mut) {
                port.remove("nodePort");
            }
        }
        if drop_health {
            spec.remove("healthCheckNodePort");
        }
        if drop_allocate {
            spec.remove("allocateLoadBalancerNodePorts");
        }
        if drop_external {
            spec.remove("externalTrafficPolicy");
        }
    }
    if !load_balancer && let Some(root) = new.as_object_mut() {
        root.insert("status".into(), json!({"loadBalancer": {}}));
    }
    internal_traffic_policy_on_read(new);
}

/// `GetWarningsForService`: fields a Service's type or headlessness makes
/// ignored, and deprecated ones (the address-form warnings left out).
pub(crate) fn warnings(obj: &Value) -> Vec<String> {
    let mut warnings = Vec::new();
    let kind = spec_str(obj, "type");
    let external_ips = obj
        .pointer("/spec/externalIPs")
        .and_then(Value::as_array)
        .is_some_and(|ips| !ips.is_empty());
    let headless = kind == "ClusterIP" && is_headless(obj);
    if headless {
        if !spec_str(obj, "loadBalancerIP").is_empty() {
            warnings.push("spec.loadBalancerIP is ignored for headless services".to_string());
        }
        if external_ips {
            warnings.push("spec.externalIPs is ignored for headless services".to_string());
        }
        if spec_str(obj, "sessionAffinity") != "None" {
            warnings.push("spec.SessionAffinity is ignored for headless services".to_string());
        }
    }
    if external_ips && !headless && kind != "ExternalName" {
        warnings.push(
            "spec.externalIPs is deprecated and may no longer be implemented in some clusters"
                .to_string(),
        );
    }
    if kind == "ExternalName" && external_ips {
        warnings.push("spec.externalIPs is ignored when spec.type is \"ExternalName\"".to_string());
    }
    if kind != "ExternalName" && !spec_str(obj, "externalName").is_empty() {
        warnings.push(
            "spec.externalName is ignored when spec.type is not \"ExternalName\"".to_string(),
        );
    }
    if spec_str(obj, "trafficDistribution") == "PreferClose" {
        warnings.push(
            "spec.trafficDistribution: \"PreferClose\" is deprecated; use \"PreferSameZone\""
                .to_string(),
        );
    }
    warnings
}

/// core/v1's Service labels (`AddFieldLabelConversionsForService` in
/// `pkg/apis/core/v1/conversion.go`) and the Service's field set
/// (`SelectableFields` in `pkg/registry/core/service/strategy.go`).
pub(crate) static SELECTABLE: Selectable = Selectable {
    labels: &[
        ("metadata.namespace", "metadata.namespace"),
        ("metadata.name", "metadata.name"),
        ("spec.clusterIP", "spec.clusterIP"),
        ("spec.type", "spec.type"),
    ],
    refusal: Refusal::NotSupported,
    fields: |service| {
        let mut set = object_meta_fields(service);
        for field in ["clusterIP", "type"] {
            set.insert(
                format!("spec.{field}"),
                spec_str(service, field).to_string(),
            );
        }
        set
    },
};
