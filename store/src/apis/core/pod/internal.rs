//! A PodSpec as Go's `encoding/json` writes the real server's internal
//! `core.PodSpec` (no JSON tags: Go's field names, every field, in the
//! struct's order), the way an immutable Job template's refusal shows it.
//! The structs a simple template uses are written field by field; others
//! fall back to their v1 JSON with Go's capitalized names.

use serde_json::Value;

use super::volumes::write_volume;
use crate::go::json::encode::go_json;

/// How a field is written when it is absent: `""`, `0`, `false`, `null`.
#[derive(Clone, Copy)]
pub(super) enum Zero {
    Text,
    Number,
    Bool,
    Null,
}

pub(super) type Field = (&'static str, &'static str, Zero);

const POD_SPEC: &[Field] = &[
    ("Volumes", "volumes", Zero::Null),
    ("InitContainers", "initContainers", Zero::Null),
    ("Containers", "containers", Zero::Null),
    ("EphemeralContainers", "ephemeralContainers", Zero::Null),
    ("RestartPolicy", "restartPolicy", Zero::Text),
    (
        "TerminationGracePeriodSeconds",
        "terminationGracePeriodSeconds",
        Zero::Null,
    ),
    ("ActiveDeadlineSeconds", "activeDeadlineSeconds", Zero::Null),
    ("DNSPolicy", "dnsPolicy", Zero::Text),
    ("NodeSelector", "nodeSelector", Zero::Null),
    ("ServiceAccountName", "serviceAccountName", Zero::Text),
    (
        "AutomountServiceAccountToken",
        "automountServiceAccountToken",
        Zero::Null,
    ),
    ("NodeName", "nodeName", Zero::Text),
    ("SecurityContext", "securityContext", Zero::Null),
    ("ImagePullSecrets", "imagePullSecrets", Zero::Null),
    ("Hostname", "hostname", Zero::Text),
    ("Subdomain", "subdomain", Zero::Text),
    ("SetHostnameAsFQDN", "setHostnameAsFQDN", Zero::Null),
    ("Affinity", "affinity", Zero::Null),
    ("SchedulerName", "schedulerName", Zero::Text),
    ("Tolerations", "tolerations", Zero::Null),
    ("HostAliases", "hostAliases", Zero::Null),
    ("PriorityClassName", "priorityClassName", Zero::Text),
    ("Priority", "priority", Zero::Null),
    ("PreemptionPolicy", "preemptionPolicy", Zero::Null),
    ("DNSConfig", "dnsConfig", Zero::Null),
    ("ReadinessGates", "readinessGates", Zero::Null),
    ("RuntimeClassName", "runtimeClassName", Zero::Null),
    ("Overhead", "overhead", Zero::Null),
    ("EnableServiceLinks", "enableServiceLinks", Zero::Null),
    (
        "TopologySpreadConstraints",
        "topologySpreadConstraints",
        Zero::Null,
    ),
    ("OS", "os", Zero::Null),
    ("SchedulingGates", "schedulingGates", Zero::Null),
    ("ResourceClaims", "resourceClaims", Zero::Null),
    ("Resources", "resources", Zero::Null),
    ("HostnameOverride", "hostnameOverride", Zero::Null),
    ("SchedulingGroup", "schedulingGroup", Zero::Null),
];

const POD_SECURITY_CONTEXT: &[Field] = &[
    ("HostNetwork", "hostNetwork", Zero::Bool),
    ("HostPID", "hostPID", Zero::Bool),
    ("HostIPC", "hostIPC", Zero::Bool),
    ("ShareProcessNamespace", "shareProcessNamespace", Zero::Null),
    ("HostUsers", "hostUsers", Zero::Null),
    ("SELinuxOptions", "seLinuxOptions", Zero::Null),
    ("WindowsOptions", "windowsOptions", Zero::Null),
    ("RunAsUser", "runAsUser", Zero::Null),
    ("RunAsGroup", "runAsGroup", Zero::Null),
    ("RunAsNonRoot", "runAsNonRoot", Zero::Null),
    ("SupplementalGroups", "supplementalGroups", Zero::Null),
    (
        "SupplementalGroupsPolicy",
        "supplementalGroupsPolicy",
        Zero::Null,
    ),
    ("FSGroup", "fsGroup", Zero::Null),
    ("FSGroupChangePolicy", "fsGroupChangePolicy", Zero::Null),
    ("Sysctls", "sysctls", Zero::Null),
    ("SeccompProfile", "seccompProfile", Zero::Null),
    ("AppArmorProfile", "appArmorProfile", Zero::Null),
    ("SELinuxChangePolicy", "seLinuxChangePolicy", Zero::Null),
];

const CONTAINER: &[Field] = &[
    ("Name", "name", Zero::Text),
    ("Image", "image", Zero::Text),
    ("Command", "command", Zero::Null),
    ("Args", "args", Zero::Null),
    ("WorkingDir", "workingDir", Zero::Text),
    ("Ports", "ports", Zero::Null),
    ("EnvFrom", "envFrom", Zero::Null),
    ("Env", "env", Zero::Null),
    ("Resources", "resources", Zero::Null),
    ("ResizePolicy", "resizePolicy", Zero::Null),
    ("RestartPolicy", "restartPolicy", Zero::Null),
    ("RestartPolicyRules", "restartPolicyRules", Zero::Null),
    ("VolumeMounts", "volumeMounts", Zero::Null),
    ("VolumeDevices", "volumeDevices", Zero::Null),
    ("LivenessProbe", "livenessProbe", Zero::Null),
    ("ReadinessProbe", "readinessProbe", Zero::Null),
    ("StartupProbe", "startupProbe", Zero::Null),
    ("Lifecycle", "lifecycle", Zero::Null),
    (
        "TerminationMessagePath",
        "terminationMessagePath",
        Zero::Text,
    ),
    (
        "TerminationMessagePolicy",
        "terminationMessagePolicy",
        Zero::Text,
    ),
    ("ImagePullPolicy", "imagePullPolicy", Zero::Text),
    ("SecurityContext", "securityContext", Zero::Null),
    ("Stdin", "stdin", Zero::Bool),
    ("StdinOnce", "stdinOnce", Zero::Bool),
    ("TTY", "tty", Zero::Bool),
];

const RESOURCES: &[Field] = &[
    ("Limits", "limits", Zero::Null),
    ("Requests", "requests", Zero::Null),
    ("Claims", "claims", Zero::Null),
];

const PORT: &[Field] = &[
    ("Name", "name", Zero::Text),
    ("HostPort", "hostPort", Zero::Number),
    ("ContainerPort", "containerPort", Zero::Number),
    ("Protocol", "protocol", Zero::Text),
    ("HostIP", "hostIP", Zero::Text),
];

const ENV: &[Field] = &[
    ("Name", "name", Zero::Text),
    ("Value", "value", Zero::Text),
    ("ValueFrom", "valueFrom", Zero::Null),
];

const MOUNT: &[Field] = &[
    ("Name", "name", Zero::Text),
    ("ReadOnly", "readOnly", Zero::Bool),
    ("RecursiveReadOnly", "recursiveReadOnly", Zero::Null),
    ("MountPath", "mountPath", Zero::Text),
    ("SubPath", "subPath", Zero::Text),
    ("MountPropagation", "mountPropagation", Zero::Null),
    ("SubPathExpr", "subPathExpr", Zero::Text),
];

/// The internal PodSpec of v1 `spec` as Go's JSON writes it.
pub(crate) fn go_internal_pod_spec(spec: &Value) -> String {
    let mut fields = Vec::with_capacity(POD_SPEC.len());
    for (go, json, zero) in POD_SPEC {
        let value = match *json {
            // The host namespaces live in the internal security context.
            "securityContext" => {
                let mut context = spec.get("securityContext").cloned().unwrap_or(Value::Null);
                if let Some(map) = context.as_object_mut() {
                    for key in [
                        "hostNetwork",
                        "hostPID",
                        "hostIPC",
                        "shareProcessNamespace",
                        "hostUsers",
                    ] {
                        if let Some(v) = spec.get(key) {
                            map.insert(key.to_string(), v.clone());
                        }
                    }
                }
                if context.is_object() {
                    write_struct(&context, POD_SECURITY_CONTEXT)
                } else {
                    "null".to_string()
                }
            }
            "volumes" => list(spec.get(*json), write_volume),
            "containers" | "initContainers" => list(spec.get(*json), write_container),
            "ephemeralContainers" => list(spec.get(*json), go_ephemeral_container),
            _ => write_field(spec.get(*json), *zero),
        };
        fields.push(format!("\"{go}\":{value}"));
    }
    format!("{{{}}}", fields.join(","))
}

/// An internal EphemeralContainer as Go's JSON writes it: a container's
/// fields, then the one it targets.
pub(crate) fn go_ephemeral_container(container: &Value) -> String {
    let mut written = write_container(container);
    written.pop();
    let target = write_field(container.get("targetContainerName"), Zero::Text);
    format!("{written},\"TargetContainerName\":{target}}}")
}

fn write_container(container: &Value) -> String {
    let mut fields = Vec::with_capacity(CONTAINER.len());
    for (go, json, zero) in CONTAINER {
        let value = container.get(*json);
        let text = match *json {
            "resources" => write_struct(value.unwrap_or(&Value::Null), RESOURCES),
            "ports" => list(value, |p| write_struct(p, PORT)),
            "env" => list(value, |e| write_struct(e, ENV)),
            "volumeMounts" => list(value, |m| write_struct(m, MOUNT)),
            _ => write_field(value, *zero),
        };
        fields.push(format!("\"{go}\":{text}"));
    }
    format!("{{{}}}", fields.join(","))
}

pub(super) fn list(value: Option<&Value>, item: impl Fn(&Value) -> String) -> String {
    match value.and_then(Value::as_array) {
        None => "null".to_string(),
        Some(items) => format!("[{}]", items.iter().map(item).collect::<Vec<_>>().join(",")),
    }
}

pub(super) fn write_struct(value: &Value, fields: &[Field]) -> String {
    let written: Vec<String> = fields
        .iter()
        .map(|(go, json, zero)| format!("\"{go}\":{}", write_field(value.get(*json), *zero)))
        .collect();
    format!("{{{}}}", written.join(","))
}

pub(super) fn write_field(value: Option<&Value>, zero: Zero) -> String {
    match value.filter(|v| !v.is_null()) {
        None => match zero {
            Zero::Text => "\"\"".to_string(),
            Zero::Number => "0".to_string(),
            Zero::Bool => "false".to_string(),
            Zero::Null => "null".to_string(),
        },
        Some(value @ Value::Object(_)) if matches!(zero, Zero::Null) => capitalized(value),
        Some(value) => go_json(value),
    }
}

/// Another struct: its v1 JSON with Go's capitalized field names (maps of
/// strings, such as a node selector or resource list, are kept as they are).
fn capitalized(value: &Value) -> String {
    let Some(map) = value.as_object() else {
        return go_json(value);
    };
    if map.values().all(Value::is_string) {
        return go_json(value);
    }
    let fields: Vec<String> = map
        .iter()
        .map(|(k, v)| {
            let mut name = k.clone();
            if let Some(first) = name.get(0..1) {
                name.replace_range(0..1, &first.to_uppercase());
            }
            format!("{}:{}", go_json(&Value::String(name)), capitalized(v))
        })
        .collect();
    format!("{{{}}}", fields.join(","))
}
