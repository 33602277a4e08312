//! Endpoints (v1, deprecated since 1.33 for discovery.k8s.io's
//! EndpointSlice): its defaults (`SetDefaults_Endpoints` in
//! `pkg/apis/core/v1/defaults.go`). The deprecation warning every request
//! gets is the resource's (`resource::builtin::deprecation_warning`).

use serde_json::{Value, json};

/// Each port of each subset without a protocol gets `TCP`.
pub(crate) fn default(obj: &mut Value) {
    let subsets = obj.get_mut("subsets").and_then(Value::as_array_mut);
    for subset in subsets.into_iter().flatten() {
        let ports = subset.get_mut("ports").and_then(Value::as_array_mut);
        for port in ports.into_iter().flatten().filter_map(Value::as_object_mut) {
            let empty = port
                .get("protocol")
                .is_none_or(|p| p.is_null() || p.as_str() == Some(""));
            if empty {
                port.insert("protocol".into(), json!("TCP"));
            }
        }
    }
}
