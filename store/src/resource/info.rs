//! The resources a store serves: what discovery lists and what objects are keyed by.

use serde_json::{Map, Value, json};

use super::builtin::{deprecation_warning, is_builtin};
use super::conversion::Conversion;
use super::custom::CustomSchemas;

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
    /// The verbs served: `create`, `delete`, `deletecollection`, `get`,
    /// `list`, `patch`, `update`, `watch`. A request with another verb gets
    /// 405 MethodNotAllowed.
    pub verbs: Vec<String>,
    /// Categories (`all`, ...) kubectl expands, as in `kubectl get all`.
    pub categories: Vec<String>,
    /// Subresources other than `status` listed by discovery (`scale`,
    /// `log`, `eviction`...), with their verbs.
    pub subresources: Vec<Subresource>,
    /// The storage version hash discovery shows for built-in resources.
    pub storage_version_hash: Option<String>,
    /// For a custom resource: the version its CRD stores objects in.
    pub storage_version: Option<String>,
    /// For a version of a custom resource whose objects a converter
    /// converts: how (see [`Store::set_converter`](crate::Store::set_converter)).
    pub conversion: Option<Conversion>,
    /// For a custom resource: its CRD's schemas (validation, defaults,
    /// pruning, CEL rules).
    pub custom: Option<CustomSchemas>,
}

/// A subresource as discovery lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct Subresource {
    /// The name after the slash: `scale`, `log`...
    pub name: String,
    /// The kind it takes and returns (`Scale`, `Pod`...).
    pub kind: String,
    /// The group of that kind, when not the resource's (`autoscaling` for `Scale`).
    pub group: Option<String>,
    /// The version of that kind, when not the resource's.
    pub version: Option<String>,
    /// Its verbs.
    pub verbs: Vec<String>,
}

/// Every verb a resource can serve, as custom resources do.
pub const ALL_VERBS: [&str; 8] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

impl ResourceInfo {
    /// A resource with every verb, no short names, categories or
    /// subresources: what a custom kind added by hand looks like.
    pub fn new(
        group: &str,
        version: &str,
        kind: &str,
        plural: &str,
        namespaced: bool,
    ) -> ResourceInfo {
        ResourceInfo {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            plural: plural.into(),
            singular: kind.to_ascii_lowercase(),
            short_names: Vec::new(),
            namespaced,
            status_subresource: false,
            verbs: ALL_VERBS.iter().map(|v| v.to_string()).collect(),
            categories: Vec::new(),
            subresources: Vec::new(),
            storage_version_hash: None,
            storage_version: None,
            conversion: None,
            custom: None,
        }
    }

    /// The `apiVersion` of objects of this resource: `v1` or `apps/v1`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// Whether `api_version` is [`ResourceInfo::api_version`] (without
    /// building it).
    pub fn is_api_version(&self, api_version: &str) -> bool {
        if self.group.is_empty() {
            return api_version == self.version;
        }
        api_version
            .strip_prefix(self.group.as_str())
            .and_then(|rest| rest.strip_prefix('/'))
            == Some(self.version.as_str())
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

    /// Whether the resource serves `verb`.
    pub fn serves(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }

    /// Whether objects of this kind are kept: not a review or a binding that
    /// a real server answers without storing (`create` is its only verb).
    pub fn is_stored(&self) -> bool {
        self.serves("get") || self.serves("list")
    }

    /// This resource's entries in its group-version's discovery document:
    /// the resource, then `status` and the other subresources.
    pub fn to_discovery(&self) -> Vec<Value> {
        let mut main = Map::new();
        main.insert("name".into(), json!(self.plural));
        main.insert("singularName".into(), json!(self.singular));
        main.insert("namespaced".into(), json!(self.namespaced));
        main.insert("kind".into(), json!(self.kind));
        main.insert("verbs".into(), json!(self.verbs));
        if !self.short_names.is_empty() {
            main.insert("shortNames".into(), json!(self.short_names));
        }
        if !self.categories.is_empty() {
            main.insert("categories".into(), json!(self.categories));
        }
        if let Some(hash) = &self.storage_version_hash {
            main.insert("storageVersionHash".into(), json!(hash));
        }
        let mut out = vec![Value::Object(main)];
        let mut subresources: Vec<(&str, Value)> = self
            .subresources
            .iter()
            .map(|sub| {
                let mut m = Map::new();
                m.insert(
                    "name".into(),
                    json!(format!("{}/{}", self.plural, sub.name)),
                );
                m.insert("singularName".into(), json!(""));
                m.insert("namespaced".into(), json!(self.namespaced));
                if let Some(group) = &sub.group {
                    m.insert("group".into(), json!(group));
                }
                if let Some(version) = &sub.version {
                    m.insert("version".into(), json!(version));
                }
                m.insert("kind".into(), json!(sub.kind));
                m.insert("verbs".into(), json!(sub.verbs));
                (sub.name.as_str(), Value::Object(m))
            })
            .collect();
        if self.status_subresource {
            subresources.push((
                "status",
                json!({"name": format!("{}/status", self.plural), "singularName": "",
                    "namespaced": self.namespaced, "kind": self.kind,
                    "verbs": ["get", "patch", "update"]}),
            ));
        }
        subresources.sort_by(|a, b| a.0.cmp(b.0));
        out.extend(subresources.into_iter().map(|(_, v)| v));
        out
    }

    /// The resources of one group-version as discovery lists them (an
    /// `APIResourceList` document, as `/api/v1` or `/apis/GROUP/VERSION`
    /// serve it): the resources, their `status` and other subresources.
    pub fn from_discovery(document: &Value) -> Result<Vec<ResourceInfo>, String> {
        let group_version = document["groupVersion"]
            .as_str()
            .ok_or("the document has no groupVersion")?;
        let (group, version) = group_version
            .rsplit_once('/')
            .unwrap_or(("", group_version));
        let entries = document["resources"]
            .as_array()
            .ok_or("the document has no resources")?;
        let strings = |v: &Value| -> Vec<String> {
            v.as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default()
        };
        let mut out: Vec<ResourceInfo> = Vec::new();
        for entry in entries {
            let name = entry["name"].as_str().ok_or("a resource has no name")?;
            let kind = entry["kind"].as_str().ok_or("a resource has no kind")?;
            if let Some((parent, sub)) = name.split_once('/') {
                let Some(owner) = out.iter_mut().find(|r| r.plural == parent) else {
                    continue;
                };
                if sub == "status" {
                    owner.status_subresource = true;
                } else {
                    owner.subresources.push(Subresource {
                        name: sub.to_string(),
                        kind: kind.to_string(),
                        group: entry["group"].as_str().map(str::to_string),
                        version: entry["version"].as_str().map(str::to_string),
                        verbs: strings(&entry["verbs"]),
                    });
                }
                continue;
            }
            let mut info = ResourceInfo::new(
                group,
                version,
                kind,
                name,
                entry["namespaced"].as_bool().unwrap_or(true),
            );
            info.singular = entry["singularName"]
                .as_str()
                .unwrap_or(&info.singular)
                .to_string();
            info.short_names = strings(&entry["shortNames"]);
            if entry.get("verbs").is_some() {
                // (Without verbs, a hand-written entry serves every verb.)
                info.verbs = strings(&entry["verbs"]);
            }
            info.categories = strings(&entry["categories"]);
            info.storage_version_hash = entry["storageVersionHash"].as_str().map(str::to_string);
            out.push(info);
        }
        Ok(out)
    }

    /// Whether objects of this kind carry `metadata.generation`.
    /// The namespace an object of this resource is kept under: the one
    /// asked for when it is namespaced, none otherwise.
    pub(crate) fn namespace_of<'a>(&self, namespace: Option<&'a str>) -> &'a str {
        if self.namespaced {
            namespace.unwrap_or("")
        } else {
            ""
        }
    }

    pub(crate) fn has_generation(&self) -> bool {
        // Built-in kinds whose strategy sets generation 1 on create and
        // bumps it on spec changes; every custom resource does. (The
        // HorizontalPodAutoscaler's strategy sets none.)
        const WITH_GENERATION: [(&str, &str); 26] = [
            ("", "Pod"),
            ("", "PodTemplate"),
            ("", "ReplicationController"),
            ("apps", "Deployment"),
            ("apps", "ReplicaSet"),
            ("apps", "StatefulSet"),
            ("apps", "DaemonSet"),
            ("batch", "Job"),
            ("batch", "CronJob"),
            ("policy", "PodDisruptionBudget"),
            ("networking.k8s.io", "Ingress"),
            ("networking.k8s.io", "IngressClass"),
            ("networking.k8s.io", "NetworkPolicy"),
            ("discovery.k8s.io", "EndpointSlice"),
            ("apiextensions.k8s.io", "CustomResourceDefinition"),
            (
                "admissionregistration.k8s.io",
                "ValidatingWebhookConfiguration",
            ),
            (
                "admissionregistration.k8s.io",
                "MutatingWebhookConfiguration",
            ),
            ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy"),
            (
                "admissionregistration.k8s.io",
                "ValidatingAdmissionPolicyBinding",
            ),
            ("admissionregistration.k8s.io", "MutatingAdmissionPolicy"),
            (
                "admissionregistration.k8s.io",
                "MutatingAdmissionPolicyBinding",
            ),
            ("flowcontrol.apiserver.k8s.io", "FlowSchema"),
            ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration"),
            ("resource.k8s.io", "DeviceClass"),
            ("resource.k8s.io", "ResourceClaim"),
            ("resource.k8s.io", "ResourceSlice"),
        ];
        !is_builtin(self)
            || WITH_GENERATION
                .iter()
                .any(|(group, kind)| self.group == *group && self.kind == *kind)
    }

    /// Whether objects of this kind are created with `generation: 1`:
    /// those that carry one ([`ResourceInfo::has_generation`]), and a
    /// PriorityClass, whose strategy sets it on create and never moves it
    /// (`pkg/registry/scheduling/priorityclass/strategy.go`).
    pub(crate) fn created_with_generation(&self) -> bool {
        self.has_generation()
            || (is_builtin(self)
                && self.group == "scheduling.k8s.io"
                && self.kind == "PriorityClass")
    }

    /// The warning every request to this resource gets when its version
    /// is deprecated: a custom resource's from its CRD, a built-in one's
    /// from its Go type's lifecycle.
    pub fn deprecation_warning(&self) -> Option<&str> {
        match &self.custom {
            Some(custom) => custom.deprecation_warning(&self.version),
            None if is_builtin(self) => deprecation_warning(self),
            None => None,
        }
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
}
