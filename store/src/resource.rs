//! The resources a store serves: what discovery lists and what objects are keyed by.

use crate::prelude::*;

/// A served resource: what discovery lists and what the store keys objects by.
#[derive(Clone, Debug, PartialEq)]
pub struct ResourceInfo {
    /// API group; empty for the core group.
    pub group: String,
    /// API version, such as `v1`.
    pub version: String,
    /// Kind, such as `ConfigMap`.
    pub kind: String,
    /// Plural resource name used in URLs, such as `configmaps`.
    pub plural: String,
    /// Singular name, such as `configmap`.
    pub singular: String,
    /// Short names kubectl accepts, such as `cm`.
    pub short_names: Vec<String>,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Whether the `status` subresource is enabled.
    pub status_subresource: bool,
}

impl ResourceInfo {
    /// The `apiVersion` of objects of this resource: `v1` or `apps/v1`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The group-qualified resource name used in messages: `configmaps`,
    /// `deployments.apps`.
    pub fn qualified_plural(&self) -> String {
        if self.group.is_empty() {
            self.plural.clone()
        } else {
            format!("{}.{}", self.plural, self.group)
        }
    }

    pub(crate) fn builtin(
        group: &str,
        version: &str,
        kind: &str,
        plural: &str,
        short: &[&str],
        namespaced: bool,
        status: bool,
    ) -> ResourceInfo {
        ResourceInfo {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            plural: plural.into(),
            singular: kind.to_ascii_lowercase(),
            short_names: short.iter().map(|s| s.to_string()).collect(),
            namespaced,
            status_subresource: status,
        }
    }

    /// Whether objects of this kind carry `metadata.generation`.
    pub(crate) fn has_generation(&self) -> bool {
        let no_generation_core = [
            "ConfigMap",
            "Secret",
            "Event",
            "ServiceAccount",
            "Namespace",
            "Service",
            "Endpoints",
        ];
        !((self.group.is_empty() && no_generation_core.contains(&self.kind.as_str()))
            || matches!(
                self.group.as_str(),
                "coordination.k8s.io" | "events.k8s.io" | "rbac.authorization.k8s.io"
            ))
    }

    /// Where its objects are stored: events.k8s.io/v1 Events are core/v1
    /// Events, as upstream (see [`event_view`]).
    pub(crate) fn key(&self) -> (String, String) {
        if self.is_events_api() {
            return (String::new(), self.plural.clone());
        }
        (self.group.clone(), self.plural.clone())
    }

    /// events.k8s.io Events: a view of core/v1 Events.
    pub(crate) fn is_events_api(&self) -> bool {
        self.group == "events.k8s.io" && self.plural == "events"
    }

    /// `o` (as stored) as this resource's clients see its fields.
    pub(crate) fn view<'a>(&self, o: &'a Value) -> std::borrow::Cow<'a, Value> {
        if self.is_events_api() {
            std::borrow::Cow::Owned(event_view(o))
        } else {
            std::borrow::Cow::Borrowed(o)
        }
    }
}

/// The built-in resources every store serves.
pub fn builtin_resources() -> Vec<ResourceInfo> {
    let b = ResourceInfo::builtin;
    vec![
        b("", "v1", "Namespace", "namespaces", &["ns"], false, true),
        b("", "v1", "ConfigMap", "configmaps", &["cm"], true, false),
        b("", "v1", "Secret", "secrets", &[], true, false),
        b("", "v1", "Event", "events", &["ev"], true, false),
        b(
            "",
            "v1",
            "ServiceAccount",
            "serviceaccounts",
            &["sa"],
            true,
            false,
        ),
        b("", "v1", "Pod", "pods", &["po"], true, true),
        b("", "v1", "Service", "services", &["svc"], true, true),
        b(
            "apps",
            "v1",
            "Deployment",
            "deployments",
            &["deploy"],
            true,
            true,
        ),
        b(
            "coordination.k8s.io",
            "v1",
            "Lease",
            "leases",
            &[],
            true,
            false,
        ),
        b(
            "events.k8s.io",
            "v1",
            "Event",
            "events",
            &["ev"],
            true,
            false,
        ),
        b(
            "rbac.authorization.k8s.io",
            "v1",
            "Role",
            "roles",
            &[],
            true,
            false,
        ),
        b(
            "rbac.authorization.k8s.io",
            "v1",
            "RoleBinding",
            "rolebindings",
            &[],
            true,
            false,
        ),
        b(
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRole",
            "clusterroles",
            &[],
            false,
            false,
        ),
        b(
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRoleBinding",
            "clusterrolebindings",
            &[],
            false,
            false,
        ),
        b(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            "customresourcedefinitions",
            &["crd", "crds"],
            false,
            true,
        ),
    ]
}
