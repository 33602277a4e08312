//! Pods and PodTemplates (v1), and the PodSpec and PodTemplateSpec every
//! workload holds: their defaults (`defaults.rs`), their checks
//! (`validation.rs`; containers in `containers.rs`, their environment in
//! `env.rs` and probes in `probes.rs`, scheduling directives in
//! `scheduling.rs`, security contexts in `security.rs`), their warnings
//! (`warnings.rs`), the fields a Pod is selected by (`selectable.rs`), and
//! what a new Pod gets besides (its status, and what
//! the default admission plugins set: the service account's name, the
//! not-ready and unreachable tolerations, the priority). A Pod's
//! subresources have strategies of their own: `ephemeral.rs`
//! (`ephemeralcontainers`), `resize.rs` (`resize`) and `binding.rs`
//! (`binding`).

mod binding;
mod containers;
mod defaults;
mod env;
mod ephemeral;
mod image;
mod internal;
mod probes;
mod qos;
mod resize;
mod scheduling;
mod security;
mod selectable;
mod subresources;
mod update;
mod validation;
mod volumes;
mod warnings;

use serde_json::{Value, json};

pub(crate) use binding::{bind, set_condition, validate_binding};
pub(crate) use containers::{NEGATIVE, nonnegative};
pub(crate) use defaults::{default_claim_spec, object_at, or_default, or_pointer, spec_of};
pub(crate) use internal::go_internal_pod_spec;
use qos::qos_class;
pub(crate) use selectable::SELECTABLE;
pub(crate) use subresources::{
    SPEC_SUBRESOURCES, prepare_subresource_update, validate_subresource_update,
};
use validation::validate_pod as validate;
pub(crate) use validation::{one_of, validate_template};

/// The warnings a write of the pod template at `pointer` in `obj` gets:
/// on create, and on an update that raised the generation.
pub(crate) fn template_warnings(obj: &Value, old: Option<&Value>, pointer: &str) -> Vec<String> {
    let generation = |o: &Value| o.pointer("/metadata/generation").cloned();
    if old.is_some_and(|o| generation(o) == generation(obj)) {
        return Vec::new();
    }
    template_warnings_at(obj, pointer)
}

/// The warnings of the pod template at `pointer` in `obj`.
pub(crate) fn template_warnings_at(obj: &Value, pointer: &str) -> Vec<String> {
    let template = obj.pointer(pointer);
    let path = Path::new(pointer.trim_start_matches('/').split('/'));
    let spec = template.and_then(|t| t.get("spec")).unwrap_or(&Value::Null);
    warnings::spec_warnings(spec, &path.child("spec"))
}

/// The warnings a write of a Pod gets.
pub(crate) fn pod_warnings(pod: &Value) -> Vec<String> {
    let spec = pod.get("spec").unwrap_or(&Value::Null);
    warnings::spec_warnings(spec, &Path::new(["spec"]))
}

use super::resources;
use crate::apis::strategy::Rules;
use crate::go::difflib::unified_diff;
use crate::go::json::encode::indent;
use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::names::name_is_dns_subdomain;

pub(crate) static RULES: Rules = Rules {
    name: name_is_dns_subdomain,
    default,
    validate,
    validate_update,
    validate_status: None,
};

/// The rules of a PodTemplate (v1): its template's defaults and checks
/// (`ValidatePodTemplate`, `ValidatePodTemplateUpdate`).
pub(crate) static TEMPLATE_RULES: Rules = Rules {
    name: name_is_dns_subdomain,
    default: default_pod_template,
    validate: validate_pod_template,
    validate_update: validate_pod_template_update,
    validate_status: None,
};

fn default_pod_template(pod_template: &mut Value) {
    if let Some(map) = pod_template.as_object_mut() {
        default_template(map.entry("template").or_insert_with(|| json!({})));
    }
}

fn validate_pod_template(pod_template: &Value) -> ErrorList {
    let empty = json!({});
    validate_template(
        pod_template.get("template").unwrap_or(&empty),
        &Path::new(["template"]),
    )
}

fn validate_pod_template_update(new: &Value, _old: &Value) -> ErrorList {
    validate_pod_template(new)
}

/// The defaults of a PodTemplateSpec: its metadata (a struct, always
/// written) and its spec's.
pub(crate) fn default_template(template: &mut Value) {
    let Some(map) = template.as_object_mut() else {
        return;
    };
    object_at(map, "spec");
    // A template's creation time is never set: the real server drops a null one.
    if let Some(metadata) = object_at(map, "metadata")
        && metadata
            .get("creationTimestamp")
            .is_some_and(Value::is_null)
    {
        metadata.remove("creationTimestamp");
    }
    if let Some(spec) = map.get_mut("spec") {
        defaults::default_pod_spec(spec);
    }
}

/// Why the containers of the pod spec at `pointer` cannot be decoded: a
/// resource quantity that does not parse (`400 BadRequest`).
pub(crate) fn decode_spec(obj: &Value, pointer: &str) -> Option<String> {
    let spec = obj.pointer(pointer)?;
    let field = pointer.trim_start_matches('/').replace('/', ".");
    ["containers", "initContainers"].iter().find_map(|key| {
        let containers = spec.get(*key).and_then(Value::as_array)?;
        containers.iter().find_map(|container| {
            ["limits", "requests"].iter().find_map(|list| {
                resources::list_decode_error(
                    container,
                    &format!("/resources/{list}"),
                    &format!("ResourceRequirements.{field}.{key}.resources.{list}"),
                )
            })
        })
    })
}

/// `SetObjectDefaults_Pod`.
fn default(pod: &mut Value) {
    if let Some(spec) = pod.get_mut("spec") {
        defaults::default_pod_spec(spec);
        defaults::default_pod_only(spec);
    }
}

/// The `DefaultTolerationSeconds` admission plugin, on a create and on an
/// update of the Pod itself: the not-ready and unreachable `NoExecute`
/// taints tolerated for 300 s, unless a toleration covers them already.
fn default_toleration_seconds(spec: &mut serde_json::Map<String, Value>) {
    let tolerations = spec.entry("tolerations").or_insert_with(|| json!([]));
    if !tolerations.is_array() {
        *tolerations = json!([]);
    }
    if let Some(list) = tolerations.as_array_mut() {
        for key in [
            "node.kubernetes.io/not-ready",
            "node.kubernetes.io/unreachable",
        ] {
            let tolerated = list.iter().any(|t| {
                let k = t.get("key").and_then(Value::as_str).unwrap_or_default();
                let effect = t.get("effect").and_then(Value::as_str).unwrap_or_default();
                (k == key || k.is_empty()) && (effect == "NoExecute" || effect.is_empty())
            });
            if !tolerated {
                list.push(json!({
                    "key": key,
                    "operator": "Exists",
                    "effect": "NoExecute",
                    "tolerationSeconds": 300,
                }));
            }
        }
    }
}

/// What the admission plugins set on an update of a Pod (not of its
/// subresources): the default tolerations again.
pub(crate) fn prepare_update(pod: &mut Value) {
    if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
        default_toleration_seconds(spec);
    }
}

/// What a new Pod gets once its defaults are set: the admission plugins'
/// fields (ServiceAccount, DefaultTolerationSeconds, Priority) and the
/// status `PrepareForCreate` starts it with.
pub(crate) fn prepare_create(pod: &mut Value) {
    if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
        if spec
            .get("serviceAccountName")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            spec.insert("serviceAccountName".into(), json!("default"));
            spec.insert("serviceAccount".into(), json!("default"));
        }
        default_toleration_seconds(spec);
        let class = spec
            .get("priorityClassName")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let priority = match class {
            "" => Some(0),
            "system-cluster-critical" => Some(2_000_000_000),
            "system-node-critical" => Some(2_000_001_000),
            _ => None,
        };
        if let Some(priority) = priority {
            spec.insert("priority".into(), json!(priority));
            spec.entry("preemptionPolicy")
                .or_insert_with(|| json!("PreemptLowerPriority"));
        }
    }
    if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
        mount_service_account_token(spec);
    }
    let qos = qos_class(pod.get("spec").unwrap_or(&Value::Null));
    let gated = pod
        .pointer("/spec/schedulingGates")
        .and_then(Value::as_array)
        .is_some_and(|g| !g.is_empty());
    if let Some(map) = pod.as_object_mut() {
        map.insert(
            "status".into(),
            json!({"phase": "Pending", "qosClass": qos}),
        );
    }
    // `applySchedulingGatedCondition`.
    if gated {
        set_condition(
            pod,
            json!({"type": "PodScheduled", "status": "False", "lastProbeTime": null,
                "lastTransitionTime": crate::machinery::object::now(), "reason": "SchedulingGated",
                "message": "Scheduling is blocked due to non-empty scheduling gates"}),
        );
    }
}

/// `ValidatePodUpdate`: the spec again, and only images, the active
/// deadline (shortened), tolerations (added) and scheduling gates
/// (removed) may change. The refusal ends with the diff of the old spec
/// and the new one with what may change put back (`mungedPodSpec`,
/// `diff.Diff` of the internal types).
fn validate_update(new: &Value, old: &Value) -> ErrorList {
    let mut errors = validate(new);
    if update::active_deadline(new, old, &mut errors) {
        return errors;
    }
    update::only_added_tolerations(new, old, &mut errors);
    let strip = |pod: &Value| {
        let mut spec = pod.get("spec").cloned().unwrap_or(Value::Null);
        for key in ["containers", "initContainers"] {
            if let Some(list) = spec.get_mut(key).and_then(Value::as_array_mut) {
                for container in list {
                    if let Some(c) = container.as_object_mut() {
                        c.remove("image");
                    }
                }
            }
        }
        if let Some(s) = spec.as_object_mut() {
            for key in ["activeDeadlineSeconds", "tolerations", "schedulingGates"] {
                s.remove(key);
            }
        }
        spec
    };
    if strip(new) != strip(old) {
        let empty = Value::Null;
        let old_spec = old.get("spec").unwrap_or(&empty);
        let written = |spec: &Value| indent(&go_internal_pod_spec(spec));
        let diff = unified_diff(&written(old_spec), &written(&munged(new, old_spec)));
        errors.push(FieldError::forbidden(
            &Path::new(["spec"]),
            format!("pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n{diff}"),
        ));
    }
    errors
}

/// `mungedPodSpec`: the new Pod's spec with what an update may change put
/// back as `old_spec` has it (each container's image by index, the active
/// deadline, scheduling gates and tolerations, a grace period set to 1
/// from a negative one).
fn munged(new: &Value, old_spec: &Value) -> Value {
    let mut spec = new.get("spec").cloned().unwrap_or(Value::Null);
    let Some(map) = spec.as_object_mut() else {
        return spec;
    };
    for key in ["containers", "initContainers"] {
        let old_images: Vec<Option<Value>> = old_spec
            .get(key)
            .and_then(Value::as_array)
            .map(|list| list.iter().map(|c| c.get("image").cloned()).collect())
            .unwrap_or_default();
        let list = map.get_mut(key).and_then(Value::as_array_mut);
        for (ix, container) in list.into_iter().flatten().enumerate() {
            if let (Some(c), Some(image)) = (container.as_object_mut(), old_images.get(ix)) {
                match image {
                    Some(image) => c.insert("image".into(), image.clone()),
                    None => c.remove("image"),
                };
            }
        }
    }
    for key in ["activeDeadlineSeconds", "schedulingGates", "tolerations"] {
        match old_spec.get(key) {
            Some(value) => map.insert(key.into(), value.clone()),
            None => map.remove(key),
        };
    }
    let grace = |spec: &Value| {
        spec.get("terminationGracePeriodSeconds")
            .and_then(Value::as_i64)
    };
    if let Some(old_grace) = grace(old_spec).filter(|g| *g < 0)
        && map
            .get("terminationGracePeriodSeconds")
            .and_then(Value::as_i64)
            == Some(1)
    {
        map.insert("terminationGracePeriodSeconds".into(), json!(old_grace));
    }
    spec
}

/// Where a Pod's service account token is mounted.
const TOKEN_MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

/// The ServiceAccount admission plugin's token volume: unless the Pod opts
/// out (`automountServiceAccountToken: false`) or mounts something there
/// already, a projected `kube-api-access-xxxxx` volume (a bound token, the
/// root CA, the namespace; the reference binaries' build adds its service
/// CA) mounted read-only in every container.
fn mount_service_account_token(spec: &mut serde_json::Map<String, Value>) {
    if spec.get("automountServiceAccountToken") == Some(&json!(false)) {
        return;
    }
    let mounted = |c: &Value| {
        c.get("volumeMounts")
            .and_then(Value::as_array)
            .is_some_and(|m| m.iter().any(|m| m["mountPath"] == TOKEN_MOUNT_PATH))
    };
    // A token volume the Pod has already keeps its name, and no other.
    let existing = spec.get("volumes").and_then(Value::as_array).and_then(|v| {
        v.iter()
            .filter_map(|v| v["name"].as_str())
            .find(|n| n.starts_with("kube-api-access-"))
            .map(str::to_string)
    });
    let name = existing
        .clone()
        .unwrap_or_else(|| crate::machinery::names::generate_name("kube-api-access-"));
    let mut added = false;
    for list in ["initContainers", "containers"] {
        let Some(containers) = spec.get_mut(list).and_then(Value::as_array_mut) else {
            continue;
        };
        for container in containers.iter_mut().filter(|c| !mounted(c)) {
            let Some(container) = container.as_object_mut() else {
                continue;
            };
            let mounts = container.entry("volumeMounts").or_insert_with(|| json!([]));
            if let Some(mounts) = mounts.as_array_mut() {
                mounts.push(json!({"name": name, "readOnly": true, "mountPath": TOKEN_MOUNT_PATH}));
                added = true;
            }
        }
    }
    if !added || existing.is_some() {
        return;
    }
    let volume = json!({
        "name": name,
        "projected": {
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
                {"configMap": {"name": "openshift-service-ca.crt", "items": [{"key": "service-ca.crt", "path": "service-ca.crt"}]}},
            ],
            "defaultMode": 420,
        },
    });
    let volumes = spec.entry("volumes").or_insert_with(|| json!([]));
    if let Some(volumes) = volumes.as_array_mut() {
        volumes.push(volume);
    }
}

/// The grace period a Pod is deleted with (its strategy's
/// `CheckGracefulDelete`, `pkg/registry/core/pod/strategy.go`): the one
/// asked, else its `terminationGracePeriodSeconds` (0 when unset); 0 when
/// it is on no node or has ended; a negative one is 1 s.
pub(crate) fn check_graceful_delete(pod: &Value, asked: Option<i64>) -> i64 {
    let mut period = asked.unwrap_or_else(|| {
        pod.pointer("/spec/terminationGracePeriodSeconds")
            .and_then(Value::as_i64)
            .unwrap_or(0)
    });
    let bound = pod
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .is_some_and(|n| !n.is_empty());
    let ended = matches!(
        pod.pointer("/status/phase").and_then(Value::as_str),
        Some("Succeeded" | "Failed")
    );
    if !bound || ended {
        period = 0;
    }
    if period < 0 { 1 } else { period }
}
