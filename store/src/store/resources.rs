//! The resources a store serves: found by kind or plural, registered
//! without a CRD, or served from a discovery document.

use serde_json::Value;

use super::handle::Store;
use crate::resource::info::ResourceInfo;

impl Store {
    /// The resource serving `kind` in `group`/`version`.
    pub fn resource_for_kind(
        &self,
        group: &str,
        version: &str,
        kind: &str,
    ) -> Option<ResourceInfo> {
        self.lock()
            .resources
            .iter()
            .find(|r| r.group == group && r.version == version && r.kind == kind)
            .cloned()
    }

    /// The resource serving `plural` in `group`/`version`.
    pub fn resource_for_plural(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Option<ResourceInfo> {
        self.lock()
            .resources
            .iter()
            .find(|r| r.group == group && r.version == version && r.plural == plural)
            .cloned()
    }

    /// The resource whose objects carry the metadata the real server
    /// answers a metadata-only read of `res` with: the object as its
    /// internal version holds it, before a served version's conversion —
    /// the storage version of a kind served in several (an autoscaler read
    /// through autoscaling/v1 has no conversion annotations there), else
    /// `res` itself.
    pub fn metadata_resource(&self, res: &ResourceInfo) -> ResourceInfo {
        // The storage's apiVersion (`autoscaling/v2`).
        crate::apis::versions::storage_version(res)
            .map(|storage| storage.rsplit('/').next().unwrap_or(storage))
            .filter(|storage| *storage != res.version)
            .and_then(|storage| self.resource_for_plural(&res.group, storage, &res.plural))
            .unwrap_or_else(|| res.clone())
    }

    /// Whether any resource of `group`/`version` is served.
    pub fn serves_group_version(&self, group: &str, version: &str) -> bool {
        self.lock()
            .resources
            .iter()
            .any(|r| r.group == group && r.version == version)
    }

    /// Every served resource, built-in ones first.
    pub fn resources(&self) -> Vec<ResourceInfo> {
        self.lock().resources.clone()
    }

    /// Serves a resource without a CRD (replacing one with the same
    /// group, version and plural).
    pub fn register(&self, info: ResourceInfo) {
        let mut g = self.lock();
        g.resources.retain(|r| {
            !(r.group == info.group && r.version == info.version && r.plural == info.plural)
        });
        g.resources.push(info);
    }

    /// Serves the resources of one group-version given as its discovery
    /// document (an `APIResourceList`, as `kubectl get --raw
    /// /apis/GROUP/VERSION` prints it): an aggregated API, a kind of
    /// another version, without a CRD. Objects are stored generically,
    /// with the verbs, scope, short names and subresources the document
    /// gives. Returns what is now served.
    pub fn serve_api_resources(&self, document: &Value) -> Result<Vec<ResourceInfo>, String> {
        if document["kind"] != "APIResourceList" {
            return Err(format!(
                "expected an APIResourceList, got kind {}",
                document["kind"]
            ));
        }
        let resources = ResourceInfo::from_discovery(document)?;
        if resources.is_empty() {
            return Err("the APIResourceList lists no resources".into());
        }
        for res in &resources {
            if res.group.is_empty() && res.version != "v1" {
                return Err(format!(
                    "the core group serves v1 only, not {} of {}",
                    res.version, res.kind
                ));
            }
            self.register(res.clone());
        }
        Ok(resources)
    }

    /// The store's current resourceVersion.
    pub fn resource_version(&self) -> String {
        self.lock().rv.to_string()
    }
}
