//! The converter installed on the registry, handed to the custom
//! resources it converts; and the 500 of a failed conversion.

use super::registry::Registry;
use crate::meta::status::Status;
use crate::resource::conversion::Conversion;

/// The 500 of a conversion that failed during a request: no reason, the
/// converter's words alone, as kube-apiserver answers it.
pub(crate) fn conversion_failed(message: String) -> Status {
    Status {
        code: 500,
        reason: String::new(),
        message,
        details: None,
    }
}

impl Registry {
    /// Sets (or clears) the conversion of every served version of the
    /// custom resources `converter` converts, from their CRDs' storage
    /// versions.
    pub(crate) fn apply_converter(&mut self) {
        let converter = self.converter.clone();
        for res in &mut self.resources {
            res.conversion = match (&converter, &res.storage_version) {
                (Some(converter), Some(version)) if converter.converts(&res.group, &res.kind) => {
                    Some(Conversion {
                        converter: converter.clone(),
                        storage_api_version: format!("{}/{version}", res.group),
                    })
                }
                _ => None,
            };
        }
        // Open watches keep their resource: bring them up to date too.
        let resources = self.resources.clone();
        for sub in &mut self.subs {
            if let Some(res) = resources.iter().find(|r| {
                r.group == sub.res.group
                    && r.version == sub.res.version
                    && r.plural == sub.res.plural
            }) {
                sub.res.conversion = res.conversion.clone();
            }
        }
    }
}
