//! Conversion between the versions of a custom resource: objects are kept
//! in the CRD's storage version; a [`Converter`] installed on the store
//! (`rekon dev` installs the loaded modules' conversion webhooks) turns
//! them into the version a client reads or writes, as kube-apiserver does
//! with a CRD whose `spec.conversion.strategy` is `Webhook`. Without one,
//! versions differ only by `apiVersion` (strategy `None`).

use std::sync::Arc;

use serde_json::Value;

/// Converts objects of some custom resources between their versions.
pub trait Converter: Send + Sync + 'static {
    /// Whether it converts the objects of `kind` in `group`.
    fn converts(&self, group: &str, kind: &str) -> bool;

    /// `object` in `api_version` (`group/version`), or why it cannot be.
    fn convert(&self, object: &Value, api_version: &str) -> Result<Value, String>;
}

/// The conversion a resource's objects go through: the converter, and the
/// storage version they are kept in.
#[derive(Clone)]
pub struct Conversion {
    pub(crate) converter: Arc<dyn Converter>,
    /// The `apiVersion` objects are stored in.
    pub storage_api_version: String,
}

impl std::fmt::Debug for Conversion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Conversion")
            .field("storage_api_version", &self.storage_api_version)
            .finish_non_exhaustive()
    }
}

impl PartialEq for Conversion {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.converter, &other.converter)
            && self.storage_api_version == other.storage_api_version
    }
}

impl Conversion {
    /// `object` in `api_version` (`None`: it is there already), or the
    /// error as kube-apiserver words a failed conversion webhook:
    /// `conversion webhook for group/v1, Kind=App failed: why`.
    pub(crate) fn to(&self, object: &Value, api_version: &str) -> Result<Option<Value>, String> {
        let from = object
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if from == api_version {
            return Ok(None);
        }
        self.converter
            .convert(object, api_version)
            .map(Some)
            .map_err(|why| {
                let kind = object
                    .get("kind")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                format!("conversion webhook for {from}, Kind={kind} failed: {why}")
            })
    }
}
