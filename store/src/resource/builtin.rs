//! The built-in resources: every resource of a real kube-apiserver 1.36,
//! as its discovery documents (`store/discovery/*.json`) describe them.

use serde_json::Value;

use super::info::ResourceInfo;

/// Whether `res` is a built-in resource of Kubernetes (by group and
/// plural: any version), not a custom or an added one.
pub fn is_builtin(res: &ResourceInfo) -> bool {
    builtins()
        .iter()
        .any(|b| b.group == res.group && b.plural == res.plural)
}

/// The discovery documents of a real kube-apiserver 1.36, one per
/// group-version, in the order its `/apis` lists the groups (the core
/// group first).
const DISCOVERY: [&str; 22] = [
    include_str!("../../discovery/api_v1.json"),
    include_str!("../../discovery/apis_apiregistration.k8s.io_v1.json"),
    include_str!("../../discovery/apis_apps_v1.json"),
    include_str!("../../discovery/apis_events.k8s.io_v1.json"),
    include_str!("../../discovery/apis_authentication.k8s.io_v1.json"),
    include_str!("../../discovery/apis_authorization.k8s.io_v1.json"),
    include_str!("../../discovery/apis_autoscaling_v2.json"),
    include_str!("../../discovery/apis_autoscaling_v1.json"),
    include_str!("../../discovery/apis_batch_v1.json"),
    include_str!("../../discovery/apis_certificates.k8s.io_v1.json"),
    include_str!("../../discovery/apis_networking.k8s.io_v1.json"),
    include_str!("../../discovery/apis_policy_v1.json"),
    include_str!("../../discovery/apis_rbac.authorization.k8s.io_v1.json"),
    include_str!("../../discovery/apis_storage.k8s.io_v1.json"),
    include_str!("../../discovery/apis_admissionregistration.k8s.io_v1.json"),
    include_str!("../../discovery/apis_apiextensions.k8s.io_v1.json"),
    include_str!("../../discovery/apis_scheduling.k8s.io_v1.json"),
    include_str!("../../discovery/apis_coordination.k8s.io_v1.json"),
    include_str!("../../discovery/apis_node.k8s.io_v1.json"),
    include_str!("../../discovery/apis_discovery.k8s.io_v1.json"),
    include_str!("../../discovery/apis_resource.k8s.io_v1.json"),
    include_str!("../../discovery/apis_flowcontrol.apiserver.k8s.io_v1.json"),
];

/// The built-in resources every store serves: every resource of
/// Kubernetes 1.36, as its discovery documents describe them.
pub fn builtin_resources() -> Vec<ResourceInfo> {
    builtins().to_vec()
}

/// The built-in resources, parsed once.
pub(crate) fn builtins() -> &'static [ResourceInfo] {
    static BUILTIN: std::sync::LazyLock<Vec<ResourceInfo>> = std::sync::LazyLock::new(|| {
        DISCOVERY
            .iter()
            .flat_map(|text| {
                let document: Value =
                    serde_json::from_str(text).expect("the recorded discovery documents are JSON");
                ResourceInfo::from_discovery(&document)
                    .expect("the recorded discovery documents are APIResourceLists")
            })
            .collect()
    });
    &BUILTIN
}

/// The warning every request to a deprecated built-in resource gets, as
/// the real server's installer adds it to each of its handlers
/// (`deprecation.WarningMessage` in apiserver's
/// `pkg/endpoints/deprecation/deprecation.go`, from the lifecycle its
/// type declares in `k8s.io/api`: `core/v1/lifecycle.go` for the two of
/// core/v1; every other deprecated version is no longer served).
pub(crate) fn deprecation_warning(res: &ResourceInfo) -> Option<&'static str> {
    match (
        res.group.as_str(),
        res.version.as_str(),
        res.plural.as_str(),
    ) {
        ("", "v1", "componentstatuses") => Some("v1 ComponentStatus is deprecated in v1.19+"),
        ("", "v1", "endpoints") => {
            Some("v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice")
        }
        _ => None,
    }
}

/// The recorded discovery documents of the built-in group-versions: the
/// answers of a real kube-apiserver 1.36 to `GET /api/v1` and `GET
/// /apis/GROUP/VERSION`.
pub fn builtin_discovery_documents() -> Vec<Value> {
    DISCOVERY
        .iter()
        .map(|text| serde_json::from_str(text).expect("the recorded discovery documents are JSON"))
        .collect()
}
