//! The built-in kinds' own rules, as the real server's `pkg/apis/<group>`
//! keeps them: for each kind, its defaults (`SetDefaults_*`, applied
//! whenever an object is decoded: create, update, every patch) and its
//! validation (`Validate<Kind>`, `Validate<Kind>Update`) side by side in
//! one file (or folder) of its group's folder (`core/service/`,
//! `apps/deployment.rs`).
//!
//! A kind's [`Rules`] are found by [`rules`]; the registry's write paths
//! (`registry/create.rs`, `update.rs`, `patch.rs`) call [`default`], then [`validate_create`] or
//! [`validate_update`], which add the metadata checks every kind shares
//! (with the kind's own name rule) and render the errors into the real
//! server's `422 Invalid` (`machinery::field`). A kind without rules here is
//! stored as it comes, its metadata checked as before.
//!
//! Shared pieces of several kinds live beside them (a PodSpec in
//! `core/pod/`); apimachinery's checks (label selectors, quantities) are
//! `machinery`'s.

use serde_json::Value;

use super::apiextensions::customresourcedefinition::is_crd;
use super::core::finalizers::kube_finalizer_name;
use super::strategy::Rules;
use super::{
    admissionregistration, apps, autoscaling, batch, coordination, core, discovery, fields,
    networking, node, policy, rbac, scheduling, storage,
};
use crate::machinery::field::{ErrorList, Path};
use crate::machinery::names::{
    dns1123_label_message, is_dns1123_label, is_dns1123_subdomain, subdomain_regex_error,
};
use crate::machinery::objectmeta::{validate_object_meta_update, validate_object_meta_with};
use crate::meta::status::Status;
use crate::meta::types::WriteOptions;
use crate::resource::info::ResourceInfo;

/// The rules of `res`'s kind, when it is a built-in kind that has some.
pub(crate) fn rules(res: &ResourceInfo) -> Option<&'static Rules> {
    if res.custom.is_some() {
        return None;
    }
    match (res.group.as_str(), res.kind.as_str()) {
        ("", "ConfigMap") => Some(&core::configmap::RULES),
        ("", "Pod") => Some(&core::pod::RULES),
        ("", "PodTemplate") => Some(&core::pod::TEMPLATE_RULES),
        ("", "Service") => Some(&core::service::RULES),
        ("", "Secret") => Some(&core::secret::RULES),
        ("", "ServiceAccount") => Some(&core::serviceaccount::RULES),
        ("", "Namespace") => Some(&core::namespace::RULES),
        ("", "Event") => Some(&core::event::RULES),
        ("", "ResourceQuota") => Some(&core::resourcequota::RULES),
        ("", "LimitRange") => Some(&core::limitrange::RULES),
        ("", "PersistentVolumeClaim") => Some(&core::persistentvolumeclaim::RULES),
        ("", "ReplicationController") => Some(&core::replicationcontroller::RULES),
        ("", "PersistentVolume") => Some(&core::persistentvolume::RULES),
        ("", "Node") => Some(&core::node::RULES),
        ("apps", "Deployment") => Some(&apps::deployment::RULES),
        ("apps", "ReplicaSet") => Some(&apps::replicaset::RULES),
        ("apps", "StatefulSet") => Some(&apps::statefulset::RULES),
        ("apps", "DaemonSet") => Some(&apps::daemonset::RULES),
        ("batch", "Job") => Some(&batch::job::RULES),
        ("batch", "CronJob") => Some(&batch::cronjob::RULES),
        ("coordination.k8s.io", "Lease") => Some(&coordination::lease::RULES),
        ("rbac.authorization.k8s.io", "Role") => Some(&rbac::role::ROLE),
        ("rbac.authorization.k8s.io", "ClusterRole") => Some(&rbac::role::CLUSTER_ROLE),
        ("rbac.authorization.k8s.io", "RoleBinding") => Some(&rbac::rolebinding::ROLE_BINDING),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding") => {
            Some(&rbac::rolebinding::CLUSTER_ROLE_BINDING)
        }
        ("autoscaling", "HorizontalPodAutoscaler") if res.version == "v2" => {
            Some(&autoscaling::horizontalpodautoscaler::RULES)
        }
        ("autoscaling", "HorizontalPodAutoscaler") => {
            Some(&autoscaling::horizontalpodautoscaler::V1_RULES)
        }
        ("networking.k8s.io", "Ingress") => Some(&networking::ingress::RULES),
        ("networking.k8s.io", "IngressClass") => Some(&networking::ingressclass::RULES),
        ("networking.k8s.io", "NetworkPolicy") => Some(&networking::networkpolicy::RULES),
        ("policy", "PodDisruptionBudget") => Some(&policy::poddisruptionbudget::RULES),
        ("discovery.k8s.io", "EndpointSlice") => Some(&discovery::endpointslice::RULES),
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration") => {
            Some(&admissionregistration::webhookconfiguration::VALIDATING)
        }
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration") => {
            Some(&admissionregistration::webhookconfiguration::MUTATING)
        }
        ("storage.k8s.io", "StorageClass") => Some(&storage::storageclass::RULES),
        ("storage.k8s.io", "CSIDriver") => Some(&storage::csidriver::RULES),
        ("scheduling.k8s.io", "PriorityClass") => Some(&scheduling::priorityclass::RULES),
        ("node.k8s.io", "RuntimeClass") => Some(&node::runtimeclass::RULES),
        _ => None,
    }
}

/// What converting a new object to its version adds before the field
/// manager sees it (owned by the creating manager): a DaemonSet's template
/// generation annotation.
pub(crate) fn versioned(res: &ResourceInfo, obj: &mut Value) {
    if res.custom.is_none() && res.group == "apps" && res.kind == "DaemonSet" {
        apps::daemonset::versioned(obj);
    }
}

/// Whether the generation of `new` replacing `old` moves for a reason of
/// its kind's own, beside a change of its spec (a Deployment's strategy
/// also counts its annotations, which can carry rollout settings).
pub(crate) fn generation_also_moves(res: &ResourceInfo, new: &Value, old: &Value) -> bool {
    res.custom.is_none()
        && res.group == "apps"
        && res.kind == "Deployment"
        && apps::deployment::annotations_moved(new, old)
}

/// What the strategy of `res`'s kind sets on a new object once its
/// defaults and system fields (uid, generation) are set and its status
/// cleared (`PrepareForCreate`, and the default admission plugins' fields
/// of a Pod): the status it starts with, generated fields.
pub(crate) fn prepare_create(res: &ResourceInfo, obj: &mut Value) {
    if res.custom.is_some() {
        return;
    }
    match (res.group.as_str(), res.kind.as_str()) {
        ("", "Pod") => core::pod::prepare_create(obj),
        ("", "Service") => core::service::prepare_create(obj),
        ("", "Namespace") => core::namespace::prepare_create(obj),
        ("", "ResourceQuota") => core::resourcequota::prepare_create(obj),
        ("", "PersistentVolumeClaim") => core::persistentvolumeclaim::prepare_create(obj),
        ("", "PersistentVolume") => core::persistentvolume::prepare_create(obj),
        ("", "Node") => core::node::prepare_create(obj),
        ("", "ReplicationController") => core::replicationcontroller::prepare_create(obj),
        ("apps", "Deployment") => apps::deployment::prepare_create(obj),
        ("apps", "ReplicaSet") => apps::replicaset::prepare_create(obj),
        ("apps", "StatefulSet") => apps::statefulset::prepare_create(obj),
        ("apps", "DaemonSet") => apps::daemonset::prepare_create(obj),
        ("batch", "Job") => batch::job::prepare_create(obj),
        ("batch", "CronJob") => batch::cronjob::prepare_create(obj),
        ("networking.k8s.io", "Ingress") => networking::ingress::prepare_create(obj),
        ("policy", "PodDisruptionBudget") => policy::poddisruptionbudget::prepare_create(obj),
        ("autoscaling", "HorizontalPodAutoscaler") if res.version == "v2" => {
            autoscaling::horizontalpodautoscaler::prepare_create(obj)
        }
        ("autoscaling", "HorizontalPodAutoscaler") => {
            autoscaling::horizontalpodautoscaler::prepare_create_v1(obj)
        }
        _ => {}
    }
}

/// Whether the strategy of `res`'s kind keeps the status a new object is
/// sent with (a Node's `PrepareForCreate` does not clear it; the other
/// kinds with a status subresource start from their own).
pub(crate) fn keeps_status_on_create(res: &ResourceInfo) -> bool {
    res.custom.is_none() && res.group.is_empty() && res.kind == "Node"
}

/// What the strategy of `res`'s kind sets on `new` replacing `old`
/// (`PrepareForUpdate`) besides keeping the status and the system fields.
pub(crate) fn prepare_update(res: &ResourceInfo, new: &mut Value, old: &Value) {
    if res.custom.is_some() {
        return;
    }
    match (res.group.as_str(), res.kind.as_str()) {
        ("apps", "DaemonSet") => apps::daemonset::prepare_update(new, old),
        ("", "Namespace") => core::namespace::prepare_update(new, old),
        ("", "Service") => core::service::prepare_update(new, old),
        ("", "Pod") => core::pod::prepare_update(new),
        ("", "PersistentVolumeClaim") => core::persistentvolumeclaim::prepare_update(new, old),
        _ => {}
    }
}

/// Fills the defaults of `res`'s kind in `obj` (Endpoints has defaults
/// but no checks here).
pub(crate) fn default(res: &ResourceInfo, obj: &mut Value) {
    if let Some(rules) = rules(res) {
        (rules.default)(obj);
    } else if res.custom.is_none() && res.group.is_empty() && res.kind == "Endpoints" {
        core::endpoints::default(obj);
    }
}

/// Refuses a new object of `res`'s kind as the real server would: its
/// metadata and the kind's own checks, every error in one `422 Invalid`.
pub(crate) fn validate_create(res: &ResourceInfo, obj: &Value) -> Result<(), Status> {
    if res.group == "events.k8s.io" && res.kind == "Event" {
        // Its own strict checks (the legacy ones it shares with core/v1
        // are not run on this view of it), refused as the core kind it is
        // stored as (`Event "e" is invalid`).
        let mut core = res.clone();
        core.group = String::new();
        return refuse(&core, obj, super::events::validate_create(obj));
    }
    let Some(rules) = rules(res) else {
        return Ok(());
    };
    let empty = Value::Object(Default::default());
    let meta = obj.get("metadata").unwrap_or(&empty);
    let mut errors =
        validate_object_meta_with(meta, res.namespaced, rules.name, &Path::new(["metadata"]));
    errors.extend(kube_finalizer_names(meta));
    errors.extend((rules.validate)(obj));
    refuse(res, obj, errors)
}

/// Refuses `new` replacing `old` as the real server would: the metadata
/// update checks and the kind's (its status checks on the `status`
/// subresource).
pub(crate) fn validate_update(
    res: &ResourceInfo,
    new: &Value,
    old: &Value,
    subresource: Option<&str>,
) -> Result<(), Status> {
    if res.group == "events.k8s.io" && res.kind == "Event" {
        // Refused as the core kind it is stored as.
        let mut core = res.clone();
        core.group = String::new();
        return refuse(&core, new, super::events::validate_update(new, old));
    }
    let Some(rules) = rules(res) else {
        return Ok(());
    };
    let empty = Value::Object(Default::default());
    let (new_meta, old_meta) = (
        new.get("metadata").unwrap_or(&empty),
        old.get("metadata").unwrap_or(&empty),
    );
    // Built-in kinds allow an unconditional update: the real server takes
    // the stored resourceVersion before it checks the metadata.
    let mut given = new_meta.clone();
    if let (Some(meta), Some(version)) = (given.as_object_mut(), old_meta.get("resourceVersion"))
        && meta
            .get("resourceVersion")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
    {
        meta.insert("resourceVersion".into(), version.clone());
    }
    let mut errors = validate_object_meta_update(&given, old_meta, &Path::new(["metadata"]));
    errors.extend(kube_finalizer_names(new_meta));
    match subresource {
        Some("status") => {
            if let Some(validate_status) = rules.validate_status {
                errors.extend(validate_status(new, old));
            }
        }
        // `ValidateNamespaceFinalizeUpdate`.
        Some("finalize") => errors.extend(core::namespace::validate_finalize(new)),
        // A Pod's `ephemeralcontainers` and `resize`.
        Some(sub) if res.group.is_empty() && res.kind == "Pod" => {
            errors.extend(core::pod::validate_subresource_update(sub, new, old));
        }
        _ => errors.extend((rules.validate_update)(new, old)),
    }
    refuse(res, new, errors)
}

/// `pkg/apis/core`'s metadata check on top of apimachinery's: each of the
/// finalizer names ([`kube_finalizer_name`]).
fn kube_finalizer_names(meta: &Value) -> ErrorList {
    let path = Path::new(["metadata", "finalizers"]);
    let names = meta.get("finalizers").and_then(Value::as_array);
    names
        .into_iter()
        .flatten()
        .enumerate()
        .filter_map(|(i, name)| kube_finalizer_name(&path.index(i), name.as_str()?))
        .collect()
}

fn refuse(res: &ResourceInfo, obj: &Value, errors: ErrorList) -> Result<(), Status> {
    if errors.is_empty() {
        return Ok(());
    }
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    Err(Status::from_field_errors(
        &res.group, &res.kind, name, &errors,
    ))
}

/// Refuses, as the real server's decoding does (`400 BadRequest`, `Kind in
/// version "v1" cannot be handled as a Kind: why`), an object that does
/// not fit its kind's Go type: Secret data that is not base64, a quantity
/// that does not parse.
pub(crate) fn decode(res: &ResourceInfo, obj: &Value) -> Result<(), Status> {
    if res.custom.is_some() {
        return Ok(());
    }
    let why = match (res.group.as_str(), res.kind.as_str()) {
        ("", "Secret") => core::secret::decode(obj),
        ("", "ConfigMap") => core::configmap::decode(obj),
        ("coordination.k8s.io", "Lease") => coordination::lease::decode(obj),
        ("", "ResourceQuota") => core::resourcequota::decode(obj),
        ("", "LimitRange") => core::limitrange::decode(obj),
        ("", "PersistentVolumeClaim") => core::persistentvolumeclaim::decode(obj),
        ("", "Pod") => core::pod::decode_spec(obj, "/spec"),
        ("apps", "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet")
        | ("batch", "Job")
        | ("", "ReplicationController") => core::pod::decode_spec(obj, "/spec/template/spec"),
        ("batch", "CronJob") => core::pod::decode_spec(obj, "/spec/jobTemplate/spec/template/spec"),
        ("autoscaling", "HorizontalPodAutoscaler") if res.version == "v2" => {
            autoscaling::horizontalpodautoscaler::decode(obj)
        }
        _ => None,
    };
    match why {
        Some(why) => Err(Status::cannot_handle(&res.kind, &res.version, &why)),
        None => Ok(()),
    }
}

/// Decodes a body of `res`'s kind as the real server decodes it into the
/// kind's Go type: the fields the kind does not declare are dropped
/// ([`fields`]) and, with the body's duplicate fields, reported as
/// `fieldValidation` says (`Strict`: `400 ... strict decoding error:
/// unknown field "spec.replica"`; `Warn`: a warning each); its times read
/// and served in UTC ([`fields::times`]).
pub(crate) fn decode_fields(
    res: &ResourceInfo,
    obj: &mut Value,
    opts: &WriteOptions,
) -> Result<(), Status> {
    // A time that does not parse fails the decoding itself, before any
    // unknown field is reported.
    fields::times(res, obj).map_err(|why| Status::cannot_handle(&res.kind, &res.version, &why))?;
    match fields::prune(res, obj) {
        Some(unknown) => opts.report_dropped(&res.kind, &res.version, &unknown),
        None => Ok(()),
    }
}

/// The warnings a write of an object of `res`'s kind gets once accepted
/// (`WarningsOnCreate`, or `WarningsOnUpdate` when it replaces `old`).
pub(crate) fn warnings(res: &ResourceInfo, obj: &Value, old: Option<&Value>) -> Vec<String> {
    if res.custom.is_some() {
        return Vec::new();
    }
    match (res.group.as_str(), res.kind.as_str()) {
        ("", "Secret") => core::secret::warnings(obj),
        ("", "Service") => core::service::warnings(obj),
        ("", "ResourceQuota") if old.is_none() => core::resourcequota::warnings(obj),
        ("networking.k8s.io", "Ingress") if old.is_none() => networking::ingress::warnings(obj),
        ("networking.k8s.io", "NetworkPolicy") => networking::networkpolicy::warnings(obj),
        ("", "Pod") => core::pod::pod_warnings(obj),
        ("apps", "Deployment" | "ReplicaSet") | ("batch", "Job") => {
            core::pod::template_warnings(obj, old, "/spec/template")
        }
        ("apps", "StatefulSet") => apps::statefulset::warnings(obj, old),
        ("apps", "DaemonSet") => apps::daemonset::warnings(obj, old),
        ("batch", "CronJob") => batch::cronjob::warnings(obj, old),
        ("storage.k8s.io", "CSIDriver") => storage::csidriver::warnings(obj, old),
        _ => Vec::new(),
    }
}

/// The checks of the metadata of an object of `res`'s kind that the store
/// makes when the kind has no rules of its own here (and, for the labels'
/// types, when it has): the name's format and the labels'.
pub(crate) fn validate_generic(res: &ResourceInfo, obj: &Value, name: &str) -> Result<(), Status> {
    // A CRD's metadata is checked with the rest of it (`validate_crd`),
    // its errors all listed.
    let own_checks = is_crd(res) || rules(res).is_some();
    let ok = own_checks
        || if res.kind == "Namespace" && res.group.is_empty() {
            is_dns1123_label(name).is_empty()
        } else {
            is_dns1123_subdomain(name).is_empty()
        };
    if !ok {
        let rule = if res.kind == "Namespace" {
            dns1123_label_message()
        } else {
            subdomain_regex_error()
        };
        return Err(Status::invalid(
            res,
            name,
            "metadata.name",
            "FieldValueInvalid",
            &format!("Invalid value: \"{name}\": {rule}"),
        ));
    }
    if let Some(labels) = obj.pointer("/metadata/labels").and_then(Value::as_object) {
        for (k, v) in labels {
            if !v.is_string() {
                return Err(Status::bad_request(format!(
                    "{} in version \"{}\" cannot be handled as a {}: json: cannot unmarshal {} into Go struct field ObjectMeta.metadata.labels of type string",
                    res.kind, res.version, res.kind, v
                )));
            }
            let vs = v.as_str().unwrap_or("");
            let key_name = k.rsplit('/').next().unwrap_or("");
            let valid_value = vs.len() <= 63
                && vs
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
                && (vs.is_empty()
                    || (vs.starts_with(|c: char| c.is_ascii_alphanumeric())
                        && vs.ends_with(|c: char| c.is_ascii_alphanumeric())));
            if !own_checks && (key_name.is_empty() || !valid_value) {
                return Err(Status::invalid(
                    res,
                    name,
                    "metadata.labels",
                    "FieldValueInvalid",
                    &format!(
                        "Invalid value: \"{vs}\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
                    ),
                ));
            }
        }
    }
    Ok(())
}
