//! Which built-in kinds an update may create (`AllowCreateOnUpdate`) or
//! write over what is stored without naming a resourceVersion
//! (`AllowUnconditionalUpdate`), as their strategies say.

use super::apiextensions::customresourcedefinition::is_crd;
use crate::resource::info::ResourceInfo;

/// Whether an update of a missing object of `res`'s kind creates it (the
/// strategies whose `AllowCreateOnUpdate` is true).
pub(crate) fn allow_create_on_update(res: &ResourceInfo) -> bool {
    res.custom.is_none()
        && matches!(
            (res.group.as_str(), res.kind.as_str()),
            ("coordination.k8s.io", "Lease" | "LeaseCandidate")
                | ("", "Endpoints" | "Event" | "LimitRange" | "Service")
                | ("events.k8s.io", "Event")
                | ("node.k8s.io", "RuntimeClass")
                | (
                    "rbac.authorization.k8s.io",
                    "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding"
                )
        )
}

/// Whether an update of `res`'s kind may name no resourceVersion (or
/// `"0"`) and write over whatever is stored (`AllowUnconditionalUpdate`):
/// not for custom resources, CRDs, Leases, PodDisruptionBudgets, webhook
/// configurations and admission policies, RuntimeClasses and the storage
/// kinds whose strategies say so.
pub(crate) fn allow_unconditional_update(res: &ResourceInfo) -> bool {
    res.custom.is_none()
        && !is_crd(res)
        && !matches!(
            (res.group.as_str(), res.kind.as_str()),
            (
                "admissionregistration.k8s.io",
                "MutatingAdmissionPolicy"
                    | "MutatingAdmissionPolicyBinding"
                    | "MutatingWebhookConfiguration"
                    | "ValidatingAdmissionPolicy"
                    | "ValidatingAdmissionPolicyBinding"
                    | "ValidatingWebhookConfiguration"
            ) | ("internal.apiserver.k8s.io", "StorageVersion")
                | (
                    "certificates.k8s.io",
                    "ClusterTrustBundle" | "PodCertificateRequest"
                )
                | ("coordination.k8s.io", "Lease" | "LeaseCandidate")
                | ("node.k8s.io", "RuntimeClass")
                | ("policy", "PodDisruptionBudget")
                | ("resource.k8s.io", "ResourcePoolStatusRequest")
                | (
                    "storage.k8s.io",
                    "CSIDriver" | "CSINode" | "CSIStorageCapacity" | "VolumeAttachment"
                )
                | ("storagemigration.k8s.io", "StorageVersionMigration")
        )
}
