//! Helpers that read cells out of objects.

use serde_json::{Map, Value, json};

/// The items of the list at `pointer` (none when absent), borrowed.
pub(super) fn items<'a>(o: &'a Value, pointer: &str) -> &'a [Value] {
    o.pointer(pointer)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

pub(super) fn strings(o: &Value, pointer: &str) -> Vec<String> {
    items(o, pointer)
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

/// The number of entries of the list or map at `pointer` (0 when absent).
pub(super) fn len(o: &Value, pointer: &str) -> usize {
    match o.pointer(pointer) {
        Some(Value::Array(a)) => a.len(),
        Some(Value::Object(m)) => m.len(),
        _ => 0,
    }
}

pub(super) fn int(o: &Value, pointer: &str) -> Value {
    json!(o.pointer(pointer).and_then(Value::as_i64).unwrap_or(0))
}

pub(super) fn text_or(o: &Value, pointer: &str, default: &str) -> Value {
    match o.pointer(pointer).and_then(Value::as_str) {
        Some(text) if !text.is_empty() => json!(text),
        _ => json!(default),
    }
}

pub(super) fn none_if_empty(text: String) -> String {
    if text.is_empty() {
        "<none>".into()
    } else {
        text
    }
}

/// `status` of the condition of type `kind`.
pub(super) fn condition(o: &Value, kind: &str) -> Option<String> {
    items(o, "/status/conditions")
        .iter()
        .chain(items(o, "/conditions"))
        .find(|c| c["type"] == kind)
        .and_then(|c| c["status"].as_str().map(str::to_string))
}

pub(super) fn component_condition(o: &Value, field: &str) -> Value {
    let healthy = items(o, "/conditions")
        .iter()
        .find(|c| c["type"] == "Healthy");
    json!(
        healthy
            .and_then(|c| c[field].as_str().map(str::to_string))
            .unwrap_or_default()
    )
}

/// `readyReplicas/replicas`, the Ready column of Deployments and StatefulSets.
pub(super) fn ready_of_desired(o: &Value) -> Value {
    let want = o
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    let ready = o
        .pointer("/status/readyReplicas")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    json!(format!("{ready}/{want}"))
}

/// One field of each container of the pod spec at `spec`, comma-separated.
pub(super) fn containers(o: &Value, spec: &str, field: &str) -> Value {
    let values: Vec<String> = items(o, &format!("{spec}/containers"))
        .iter()
        .filter_map(|c| c[field].as_str().map(str::to_string))
        .collect();
    json!(values.join(","))
}

/// A label map as `k=v,k2=v2` (sorted), `<none>` when empty.
pub(super) fn labels(map: Option<&Value>) -> String {
    let pairs: Vec<String> = map
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                .collect()
        })
        .unwrap_or_default();
    none_if_empty(pairs.join(","))
}

/// A LabelSelector as the real server prints it (`FormatLabelSelector`:
/// `LabelSelectorAsSelector` then `String`): its requirements sorted by
/// key, a set's values sorted (`labels/selector.go`), `<none>` when it
/// selects everything or nothing.
pub(super) fn selector(selector: Option<&Value>) -> String {
    let Some(selector) = selector.filter(|s| s.is_object()) else {
        return "<none>".into();
    };
    let mut parts: Vec<(String, String)> = selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .map(|m: &Map<String, Value>| {
            m.iter()
                .map(|(k, v)| (k.clone(), format!("{k}={}", v.as_str().unwrap_or(""))))
                .collect()
        })
        .unwrap_or_default();
    for e in selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let key = e["key"].as_str().unwrap_or("");
        let mut values: Vec<&str> = e["values"]
            .as_array()
            .map(|v| v.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        values.sort_unstable();
        let text = match e["operator"].as_str().unwrap_or("") {
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" => key.to_string(),
            "DoesNotExist" => format!("!{key}"),
            other => format!("{key} {other}"),
        };
        parts.push((key.to_string(), text));
    }
    parts.sort_by(|a, b| a.0.cmp(&b.0));
    let parts: Vec<String> = parts.into_iter().map(|(_, text)| text).collect();
    none_if_empty(parts.join(","))
}

/// The access modes at `pointer` as `GetAccessModesAsString` writes them:
/// each once, in the order RWO, ROX, RWX, RWOP.
pub(super) fn access_modes(o: &Value, pointer: &str) -> Value {
    let modes = strings(o, pointer);
    let short: Vec<&str> = [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .iter()
    .filter(|(mode, _)| modes.iter().any(|m| m == mode))
    .map(|(_, short)| *short)
    .collect();
    json!(short.join(","))
}

/// At most `max` of `list` joined with commas, and how many more
/// (`listWithMoreString`), `<unset>` when empty.
pub(super) fn list_with_more(list: &[String], max: usize) -> Value {
    let text = list[..list.len().min(max)].join(",");
    json!(if list.len() > max {
        format!("{text} + {} more...", list.len() - max)
    } else if text.is_empty() {
        "<unset>".to_string()
    } else {
        text
    })
}

pub(super) fn endpoints(o: &Value) -> Value {
    let mut all = Vec::new();
    for subset in items(o, "/subsets") {
        let ports: Vec<i64> = items(subset, "/ports")
            .iter()
            .filter_map(|p| p["port"].as_i64())
            .collect();
        let addresses: Vec<String> = items(subset, "/addresses")
            .iter()
            .map(|a| a["ip"].as_str().unwrap_or("").to_string())
            .collect();
        if ports.is_empty() {
            all.extend(addresses);
            continue;
        }
        // Port by port, each over every address (`net.JoinHostPort`).
        for port in &ports {
            all.extend(addresses.iter().map(|ip| match ip.contains(':') {
                true => format!("[{ip}]:{port}"),
                false => format!("{ip}:{port}"),
            }));
        }
    }
    let shown = all.len().min(3);
    let mut text = all[..shown].join(",");
    if all.len() > shown {
        text.push_str(&format!(" + {} more...", all.len() - shown));
    }
    json!(none_if_empty(text))
}

/// The Request (or Limit) column of a ResourceQuota (`printResourceQuota`):
/// each resource of `status.hard`, sorted by name, as `used/hard` (a
/// resource not used yet `0`), the `limits.` ones in the Limit column.
pub(super) fn quota(o: &Value, limits: bool) -> Value {
    let Some(hard) = o.pointer("/status/hard").and_then(Value::as_object) else {
        return json!("");
    };
    let used = o.pointer("/status/used");
    let mut names: Vec<&String> = hard.keys().collect();
    names.sort();
    let parts: Vec<String> = names
        .into_iter()
        .filter(|name| name.starts_with("limits.") == limits)
        .map(|name| {
            let used = used.and_then(|u| u.get(name)).map_or("0".into(), quantity);
            format!("{name}: {used}/{}", quantity(&hard[name]))
        })
        .collect();
    json!(parts.join(", "))
}

pub(super) fn quantity(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

pub(super) fn budget(o: &Value, pointer: &str) -> Value {
    match o.pointer(pointer) {
        Some(Value::String(s)) => json!(s),
        Some(Value::Number(n)) => json!(n.to_string()),
        _ => json!("N/A"),
    }
}

pub(super) fn node_roles(o: &Value) -> Value {
    let mut roles: Vec<String> = o
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| match k.strip_prefix("node-role.kubernetes.io/") {
                    Some(role) if !role.is_empty() => Some(role.to_string()),
                    _ if k == "kubernetes.io/role" => v.as_str().map(str::to_string),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    roles.sort();
    json!(none_if_empty(roles.join(",")))
}

/// `deployment.apps` style lower-case resource for a controller kind.
pub(super) fn kind_resource(kind: &str) -> String {
    match kind {
        "StatefulSet" => "statefulset.apps".into(),
        "DaemonSet" => "daemonset.apps".into(),
        "Deployment" => "deployment.apps".into(),
        "ReplicaSet" => "replicaset.apps".into(),
        other => other.to_lowercase(),
    }
}
