//! Names and shapes shared by every room: how a kind is written
//! (`Deployment.apps/v1`), split and joined, a kind as the API server
//! serves it, and text cut to a size. No I/O, no state.

use std::fmt::Write as _;

use kube::api::ApiResource;
use serde_json::{Value, json};

use crate::contract::{Gvk, ObjectRef};

/// The label on every object the host publishes (webhook configurations,
/// Leases, Events' series).
pub const MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "rekon");

/// `Deployment.apps/v1`, `ConfigMap/v1`.
pub(crate) fn display_kind(kind: &Gvk) -> String {
    if kind.group.is_empty() {
        format!("{}/{}", kind.kind, kind.version)
    } else {
        format!("{}.{}/{}", kind.kind, kind.group, kind.version)
    }
}

/// The group and version of an apiVersion (`v1` -> `("", "v1")`).
pub(crate) fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.rsplit_once('/').unwrap_or(("", api_version))
}

/// `v1` or `apps/v1`.
pub(crate) fn api_version(kind: &Gvk) -> String {
    if kind.group.is_empty() {
        kind.version.clone()
    } else {
        format!("{}/{}", kind.group, kind.version)
    }
}

/// An [`ObjectRef`] as JSON.
pub(crate) fn object_ref_json(target: &ObjectRef) -> Value {
    json!({
        "apiVersion": api_version(&target.kind),
        "kind": target.kind.kind,
        "namespace": target.namespace,
        "name": target.name,
    })
}

/// `namespace/name`, or `name` for a cluster-scoped object.
pub(crate) fn namespaced_name(namespace: Option<&str>, name: &str) -> String {
    match namespace {
        Some(ns) => format!("{ns}/{name}"),
        None => name.to_string(),
    }
}

/// The [`ObjectRef`] naming a Kubernetes object given as JSON, if it has
/// apiVersion, kind and metadata.name.
pub fn object_ref_of(object: &Value) -> Option<ObjectRef> {
    let api_version = object["apiVersion"].as_str()?;
    let (group, version) = split_api_version(api_version);
    Some(ObjectRef {
        kind: Gvk {
            group: group.to_string(),
            version: version.to_string(),
            kind: object["kind"].as_str()?.to_string(),
        },
        namespace: object["metadata"]["namespace"].as_str().map(str::to_string),
        name: object["metadata"]["name"].as_str()?.to_string(),
    })
}

/// The core/v1 ConfigMap kind.
pub(crate) fn config_map_kind() -> Gvk {
    Gvk {
        group: String::new(),
        version: "v1".into(),
        kind: "ConfigMap".into(),
    }
}

/// A kind as the API server serves it.
#[derive(Clone, Debug)]
pub(crate) struct Resolved {
    pub resource: ApiResource,
    pub namespaced: bool,
}

impl Resolved {
    /// `/api/v1` or `/apis/group/version`, then the namespace, then the plural.
    pub fn url_path(&self, namespace: Option<&str>) -> String {
        let mut path = if self.resource.group.is_empty() {
            format!("/api/{}", self.resource.version)
        } else {
            format!("/apis/{}/{}", self.resource.group, self.resource.version)
        };
        if let (true, Some(ns)) = (self.namespaced, namespace) {
            path.push_str("/namespaces/");
            path.push_str(ns);
        }
        path.push('/');
        path.push_str(&self.resource.plural);
        path
    }

    /// `deployments.apps`, `configmaps`: how the API server names the
    /// resource in messages.
    pub fn qualified_plural(&self) -> String {
        if self.resource.group.is_empty() {
            self.resource.plural.clone()
        } else {
            format!("{}.{}", self.resource.plural, self.resource.group)
        }
    }
}

/// Cuts `text` to at most `max` bytes on a character boundary, saying so.
pub(crate) fn truncate(mut text: String, max: usize) -> String {
    if text.len() > max {
        let total = text.len();
        let mut cut = max;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        let _ = write!(text, "... ({total} bytes, truncated)");
    }
    text
}

/// A random number in `[0, 1)`, from the standard library's hasher seeds.
pub(crate) fn random_unit() -> f64 {
    use std::hash::{BuildHasher as _, Hasher as _};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(0);
    (hasher.finish() >> 11) as f64 / (1u64 << 53) as f64
}

/// The usual resource name of a kind when discovery cannot say: lower
/// case, plural (`App` -> `apps`, `Policy` -> `policies`).
pub fn plural_of(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    if let Some(stem) = lower.strip_suffix('y')
        && !stem.ends_with(['a', 'e', 'i', 'o', 'u'])
    {
        format!("{stem}ies")
    } else if lower.ends_with('s') || lower.ends_with('x') || lower.ends_with("ch") {
        format!("{lower}es")
    } else {
        format!("{lower}s")
    }
}
