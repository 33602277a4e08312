//! `SetDefaults_Service`: session affinity, type, ports' protocol and
//! target port, traffic policies, IP family policy.

use serde_json::{Value, json};

use super::spec::externally_accessible;

/// `SetDefaults_Service`.
pub(super) fn default(obj: &mut Value) {
    super::status::default_status(obj);
    let Some(root) = obj.as_object_mut() else {
        return;
    };
    let Some(spec) = root.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if spec
        .get("sessionAffinity")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .is_empty()
    {
        spec.insert("sessionAffinity".into(), json!("None"));
    }
    match spec.get("sessionAffinity").and_then(Value::as_str) {
        Some("None") => {
            spec.remove("sessionAffinityConfig");
        }
        Some("ClientIP")
            if spec
                .get("sessionAffinityConfig")
                .and_then(|c| c.pointer("/clientIP/timeoutSeconds"))
                .is_none_or(Value::is_null) =>
        {
            spec.insert(
                "sessionAffinityConfig".into(),
                json!({"clientIP": {"timeoutSeconds": 10800}}),
            );
        }
        _ => {}
    }
    if spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .is_empty()
    {
        spec.insert("type".into(), json!("ClusterIP"));
    }
    if let Some(ports) = spec.get_mut("ports").and_then(Value::as_array_mut) {
        for port in ports.iter_mut().filter_map(Value::as_object_mut) {
            if port
                .get("protocol")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .is_empty()
            {
                port.insert("protocol".into(), json!("TCP"));
            }
            let target = port.get("targetPort");
            if target.is_none_or(|t| t.is_null() || *t == json!(0) || *t == json!("")) {
                let number = port.get("port").cloned().unwrap_or(json!(0));
                port.insert("targetPort".into(), number);
            }
        }
    }
    let kind = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let view = json!({"spec": Value::Object(spec.clone())});
    if externally_accessible(&view)
        && spec
            .get("externalTrafficPolicy")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .is_empty()
    {
        spec.insert("externalTrafficPolicy".into(), json!("Cluster"));
    }
    if spec.get("internalTrafficPolicy").is_none_or(Value::is_null)
        && matches!(kind.as_str(), "NodePort" | "LoadBalancer" | "ClusterIP")
    {
        spec.insert("internalTrafficPolicy".into(), json!("Cluster"));
    }
    if kind == "LoadBalancer"
        && spec
            .get("allocateLoadBalancerNodePorts")
            .is_none_or(Value::is_null)
    {
        spec.insert("allocateLoadBalancerNodePorts".into(), json!(true));
    }
}
