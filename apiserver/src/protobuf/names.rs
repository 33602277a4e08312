//! Where Go's JSON and the protobuf descriptors disagree, field by field:
//! what the descriptors cannot say (which Go fields are embedded, which are
//! pointers) and the few fields whose proto name is not their JSON name.
//! Found by comparing every message with the JSON keys of k8s-openapi's
//! types; messages are named without their package, as the fields mean the
//! same in every version.

use std::borrow::Cow;

/// Structs Go embeds (`json:",inline"`): go-to-protobuf makes each a field,
/// but in JSON its fields belong to the parent (`Volume.volumeSource` is
/// where `emptyDir` and `configMap` are).
pub(super) const INLINE: &[(&str, &str)] = &[
    ("ConfigMapEnvSource", "localObjectReference"),
    ("ConfigMapKeySelector", "localObjectReference"),
    ("ConfigMapProjection", "localObjectReference"),
    ("ConfigMapVolumeSource", "localObjectReference"),
    ("SecretEnvSource", "localObjectReference"),
    ("SecretKeySelector", "localObjectReference"),
    ("SecretProjection", "localObjectReference"),
    ("Volume", "volumeSource"),
    ("PersistentVolumeSpec", "persistentVolumeSource"),
    ("Probe", "handler"),
    ("EphemeralContainer", "ephemeralContainerCommon"),
    ("IngressRule", "ingressRuleValue"),
    ("RuleWithOperations", "rule"),
    ("NamedRuleWithOperations", "ruleWithOperations"),
    ("DeviceAllocationConfiguration", "deviceConfiguration"),
    ("DeviceClaimConfiguration", "deviceConfiguration"),
    ("DeviceClassConfiguration", "deviceConfiguration"),
];

/// Fields whose proto name is not their JSON name (besides those of
/// `JSONSchemaProps`, see [`json_name`]). `DaemonEndpoint.Port` and the
/// v1beta1 `CustomResourceColumnDefinition.JSONPath` are capitalised in
/// JSON too.
pub(super) const RENAMED: &[(&str, &str, &str)] = &[
    ("BoundObjectReference", "uID", "uid"),
    ("IngressClassParametersReference", "aPIGroup", "apiGroup"),
    ("MutatingWebhookConfiguration", "Webhooks", "webhooks"),
    ("ValidatingWebhookConfiguration", "Webhooks", "webhooks"),
    ("Validation", "Expression", "expression"),
    ("Variable", "Name", "name"),
    ("Variable", "Expression", "expression"),
];

/// Go pointer fields whose zero (`0`, `false`, `""`) says something else
/// than unset, and numbers Go's JSON writes even when zero: kept when zero.
/// Every other zero scalar is left out, since Go's protobuf writes every
/// non-pointer field, set or not, and its JSON leaves them out
/// (`omitempty`); the wire cannot tell `replicas: 0` from an unset
/// `minReadySeconds`, only this list can.
pub(super) const ZERO_IS_SET: &[(&str, &str)] = &[
    ("DeploymentSpec", "replicas"),
    ("DeploymentSpec", "revisionHistoryLimit"),
    ("DeploymentSpec", "progressDeadlineSeconds"),
    ("StatefulSetSpec", "replicas"),
    ("StatefulSetSpec", "revisionHistoryLimit"),
    ("ReplicaSetSpec", "replicas"),
    ("ReplicationControllerSpec", "replicas"),
    ("DaemonSetSpec", "revisionHistoryLimit"),
    ("HorizontalPodAutoscalerSpec", "minReplicas"),
    ("HPAScalingRules", "stabilizationWindowSeconds"),
    ("JobSpec", "parallelism"),
    ("JobSpec", "completions"),
    ("JobSpec", "activeDeadlineSeconds"),
    ("JobSpec", "backoffLimit"),
    ("JobSpec", "backoffLimitPerIndex"),
    ("JobSpec", "maxFailedIndexes"),
    ("JobSpec", "ttlSecondsAfterFinished"),
    ("CronJobSpec", "startingDeadlineSeconds"),
    ("CronJobSpec", "successfulJobsHistoryLimit"),
    ("CronJobSpec", "failedJobsHistoryLimit"),
    ("PodSpec", "terminationGracePeriodSeconds"),
    ("PodSpec", "activeDeadlineSeconds"),
    ("PodSpec", "automountServiceAccountToken"),
    ("PodSpec", "enableServiceLinks"),
    ("PodSpec", "hostUsers"),
    ("PodSpec", "priority"),
    ("Probe", "terminationGracePeriodSeconds"),
    ("ServiceAccount", "automountServiceAccountToken"),
    ("SecurityContext", "runAsUser"),
    ("SecurityContext", "runAsGroup"),
    ("SecurityContext", "runAsNonRoot"),
    ("SecurityContext", "allowPrivilegeEscalation"),
    ("PodSecurityContext", "runAsUser"),
    ("PodSecurityContext", "runAsGroup"),
    ("PodSecurityContext", "runAsNonRoot"),
    ("PodSecurityContext", "fsGroup"),
    ("ServiceSpec", "allocateLoadBalancerNodePorts"),
    ("ConfigMapVolumeSource", "defaultMode"),
    ("SecretVolumeSource", "defaultMode"),
    ("ProjectedVolumeSource", "defaultMode"),
    ("DownwardAPIVolumeSource", "defaultMode"),
    ("KeyToPath", "mode"),
    ("DownwardAPIVolumeFile", "mode"),
    ("PersistentVolumeClaimSpec", "storageClassName"),
    ("ObjectMeta", "deletionGracePeriodSeconds"),
    ("PriorityClass", "value"),
    ("JSONSchemaProps", "maximum"),
    ("JSONSchemaProps", "minimum"),
    ("JSONSchemaProps", "multipleOf"),
    ("JSONSchemaProps", "maxLength"),
    ("JSONSchemaProps", "minLength"),
    ("JSONSchemaProps", "maxItems"),
    ("JSONSchemaProps", "minItems"),
    ("JSONSchemaProps", "maxProperties"),
    ("JSONSchemaProps", "minProperties"),
];

/// Whether `message.field` is embedded in its parent in JSON.
pub(super) fn is_inline(message: &str, field: &str) -> bool {
    INLINE.contains(&(message, field))
}

/// Whether a zero in `message.field` is kept.
pub(super) fn zero_is_set(message: &str, field: &str) -> bool {
    ZERO_IS_SET.contains(&(message, field))
}

/// The JSON name of `message.field`. The proto names are the JSON names
/// (`FieldDescriptor::json_name` is the same string, as none has an
/// underscore) but for [`RENAMED`] and the JSON Schema keywords that are
/// no proto identifiers (`$ref`, `x-kubernetes-list-type`).
pub(super) fn json_name<'a>(message: &str, field: &'a str) -> Cow<'a, str> {
    if let Some(&(_, _, json)) = RENAMED
        .iter()
        .find(|&&(m, f, _)| m == message && f == field)
    {
        return Cow::Borrowed(json);
    }
    if message != "JSONSchemaProps" {
        return Cow::Borrowed(field);
    }
    match field {
        "ref" => Cow::Borrowed("$ref"),
        "schema" => Cow::Borrowed("$schema"),
        _ => match field.strip_prefix("xKubernetes") {
            Some(rest) => {
                let mut name = String::from("x-kubernetes");
                for c in rest.chars() {
                    if c.is_ascii_uppercase() {
                        name.push('-');
                    }
                    name.push(c.to_ascii_lowercase());
                }
                Cow::Owned(name)
            }
            None => Cow::Borrowed(field),
        },
    }
}
