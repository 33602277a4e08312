//! What a CRD says about its objects' storage: the version they are written
//! in now, the versions `status.storedVersions` says some may still be in,
//! and so whether a migration is due.

use serde_json::Value;

/// A CRD's storage as read from the API server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    /// The CRD's name (`<plural>.<group>`).
    pub crd: String,
    /// The CRD's resourceVersion when read.
    pub resource_version: String,
    /// The API group.
    pub group: String,
    /// The kind of its objects.
    pub kind: String,
    /// The resource (plural) name.
    pub plural: String,
    /// Whether its objects live in namespaces.
    pub namespaced: bool,
    /// The version objects are written in now (`storage: true`).
    pub storage: String,
    /// The versions served, in the CRD's order.
    pub served: Vec<String>,
    /// `status.storedVersions`: every version objects may be stored in.
    pub stored: Vec<String>,
    /// Whether the module converts between versions (`Webhook`), rather
    /// than the API server by changing `apiVersion` alone (`None`).
    pub webhook: bool,
}

impl Plan {
    /// The plan of a CRD object, or why it has none.
    pub fn of(crd: &Value) -> Result<Plan, String> {
        let text = |pointer: &str| {
            crd.pointer(pointer)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let versions = crd
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .ok_or("the CRD has no spec.versions")?;
        let storage = versions
            .iter()
            .find(|v| v["storage"] == true)
            .and_then(|v| v["name"].as_str())
            .ok_or("the CRD has no storage version")?
            .to_string();
        let served = versions
            .iter()
            .filter(|v| v["served"] == true)
            .filter_map(|v| v["name"].as_str().map(str::to_string))
            .collect();
        let stored = crd
            .pointer("/status/storedVersions")
            .and_then(Value::as_array)
            .map(|s| {
                s.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        Ok(Plan {
            crd: text("/metadata/name"),
            resource_version: text("/metadata/resourceVersion"),
            group: text("/spec/group"),
            kind: text("/spec/names/kind"),
            plural: text("/spec/names/plural"),
            namespaced: text("/spec/scope") != "Cluster",
            storage,
            served,
            stored,
            webhook: text("/spec/conversion/strategy") == "Webhook",
        })
    }

    /// The plan of CRD `crd` as the API server has it now (none: not
    /// installed).
    pub async fn read(client: &kube::Client, crd: &str) -> Result<Option<Plan>, String> {
        let read = crate::webhook::apis::crds(client)
            .get_opt(crd)
            .await
            .map_err(|e| format!("cannot read CRD {crd}: {e}"))?;
        read.map(|object| Plan::of(&serde_json::to_value(object).unwrap_or_default()))
            .transpose()
    }

    /// Whether the API server writes objects in the storage version yet:
    /// its discovery of the resource names the storage version's hash
    /// (the API server's CRD handler and discovery follow CRD changes from
    /// one informer, so the conversion set before the storage version
    /// changed is in use by then — the signal kube-storage-version-migrator
    /// waits for too).
    pub async fn in_use(&self, client: &kube::Client) -> Result<bool, String> {
        let listed = client
            .list_api_group_resources(&format!("{}/{}", self.group, self.storage))
            .await;
        let resources = match listed {
            Ok(resources) => resources,
            // Not served in that version yet.
            Err(kube::Error::Api(status)) if status.code == 404 => return Ok(false),
            Err(e) => return Err(format!("cannot read the discovery of {}: {e}", self.crd)),
        };
        let expected = rekon_rules::storage_version_hash(&self.group, &self.storage, &self.kind);
        Ok(resources
            .resources
            .iter()
            .any(|r| r.name == self.plural && r.storage_version_hash.as_deref() == Some(&expected)))
    }

    /// Whether objects may still be stored in a version other than the
    /// storage version (`storedVersions` lists another).
    pub fn due(&self) -> bool {
        self.stored.iter().any(|v| *v != self.storage)
    }

    /// The versions that are not the storage version and may hold objects.
    pub fn old_versions(&self) -> Vec<&str> {
        self.stored
            .iter()
            .filter(|v| **v != self.storage)
            .map(String::as_str)
            .collect()
    }

    /// The resource in version `version`, for a dynamic client.
    pub fn resource(&self, version: &str) -> kube::api::ApiResource {
        kube::api::ApiResource {
            group: self.group.clone(),
            version: version.to_string(),
            api_version: format!("{}/{version}", self.group),
            kind: self.kind.clone(),
            plural: self.plural.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd(stored: &[&str]) -> Value {
        json!({
            "metadata": {"name": "apps.demo.rekon.dev", "resourceVersion": "7"},
            "spec": {
                "group": "demo.rekon.dev", "scope": "Namespaced",
                "names": {"kind": "App", "plural": "apps"},
                "conversion": {"strategy": "Webhook"},
                "versions": [
                    {"name": "v1", "served": true, "storage": false},
                    {"name": "v2", "served": true, "storage": true},
                    {"name": "v0", "served": false, "storage": false},
                ],
            },
            "status": {"storedVersions": stored},
        })
    }

    #[test]
    fn a_migration_is_due_while_another_version_is_stored() {
        let plan = Plan::of(&crd(&["v1", "v2"])).unwrap();
        assert_eq!(plan.storage, "v2");
        assert_eq!(plan.served, ["v1", "v2"]);
        assert!(plan.due());
        assert_eq!(plan.old_versions(), ["v1"]);
        assert!(plan.webhook && plan.namespaced);
        assert_eq!(plan.resource("v2").api_version, "demo.rekon.dev/v2");
        assert!(!Plan::of(&crd(&["v2"])).unwrap().due());
    }

    #[test]
    fn a_crd_without_a_storage_version_has_no_plan() {
        let mut no_storage = crd(&["v1"]);
        no_storage["spec"]["versions"] = json!([{"name": "v1", "served": true}]);
        assert!(Plan::of(&no_storage).is_err());
        assert!(Plan::of(&json!({})).is_err());
    }
}
