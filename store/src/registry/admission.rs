//! The built-in validating admission plugins the registry runs on a write
//! its kind's strategy accepted (the real store's `updateValidation`,
//! after `rest.BeforeUpdate`): `PersistentVolumeClaimResize`.

use serde_json::Value;

use super::registry::Registry;
use crate::apis::core::resources::quantity;
use crate::meta::status::Status;
use crate::resource::info::ResourceInfo;

impl Registry {
    /// The validating admission of an update of `res` from `old` to `new`
    /// through `subresource` (none for the main resource).
    pub(super) fn admit_update(
        &self,
        res: &ResourceInfo,
        new: &Value,
        old: &Value,
        subresource: Option<&str>,
    ) -> Result<(), Status> {
        if res.custom.is_none() && res.group.is_empty() && res.plural == "persistentvolumeclaims" {
            return self.admit_claim_resize(res, new, old, subresource);
        }
        Ok(())
    }

    /// `PersistentVolumeClaimResize`
    /// (`plugin/pkg/admission/storage/persistentvolume/resize/admission.go`):
    /// a claim's storage request grows only once it is bound, and only
    /// when its class (the same before and after) is a StorageClass that
    /// allows volume expansion.
    fn admit_claim_resize(
        &self,
        res: &ResourceInfo,
        new: &Value,
        old: &Value,
        subresource: Option<&str>,
    ) -> Result<(), Status> {
        if subresource.is_some() {
            return Ok(());
        }
        let size = |claim: &Value| {
            quantity(
                claim
                    .pointer("/spec/resources/requests/storage")
                    .unwrap_or(&Value::Null),
            )
        };
        if size(new) <= size(old) {
            return Ok(());
        }
        let name = new
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let forbidden = |why: &str| Status {
            code: 403,
            reason: "Forbidden".into(),
            message: format!("{} \"{name}\" is forbidden: {why}", res.qualified_plural()),
            details: Some(Status::details_for(res, name)),
        };
        if old.pointer("/status/phase").and_then(Value::as_str) != Some("Bound") {
            return Err(forbidden(
                "Only bound persistent volume claims can be expanded",
            ));
        }
        let (class, old_class) = (claim_class(new), claim_class(old));
        let expandable = !class.is_empty()
            && class == old_class
            && self
                .resources
                .iter()
                .find(|r| r.group == "storage.k8s.io" && r.plural == "storageclasses")
                .and_then(|classes| self.find(classes, "", class))
                .and_then(|c| c.get("allowVolumeExpansion"))
                .and_then(Value::as_bool)
                .unwrap_or(false);
        if !expandable {
            return Err(forbidden(
                "only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize",
            ));
        }
        Ok(())
    }
}

/// A claim's class (`GetPersistentVolumeClaimClass`): the beta annotation,
/// else `storageClassName`, else none.
fn claim_class(claim: &Value) -> &str {
    claim
        .pointer("/metadata/annotations/volume.beta.kubernetes.io~1storage-class")
        .or_else(|| claim.pointer("/spec/storageClassName"))
        .and_then(Value::as_str)
        .unwrap_or_default()
}
