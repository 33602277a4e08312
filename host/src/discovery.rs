//! Discovery: resolves a kind (group, version, kind) to the resource the
//! API server serves, once, for the informers and the API client alike.
//! It calls only the API server.

use std::collections::HashMap;
use std::sync::Mutex;

use kube::api::GroupVersionKind;
use kube::discovery::Scope;

use crate::contract::Gvk;
use crate::names::{Resolved, display_kind};

/// Why a kind could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// Discovery does not know the kind (a CRD not installed yet, a typo).
    #[error("the API server does not serve {kind}")]
    Unknown {
        /// The kind, as `Kind.group/version`.
        kind: String,
        /// What discovery said.
        #[source]
        source: kube::Error,
    },
}

/// The kinds resolved so far. A kind found is kept; one not found is asked
/// again next time, so CRDs created later are picked up.
pub(crate) struct Discovery {
    client: kube::Client,
    resolved: Mutex<HashMap<(String, String, String), Resolved>>,
}

impl Discovery {
    pub fn new(client: kube::Client) -> Discovery {
        Discovery {
            client,
            resolved: Mutex::new(HashMap::new()),
        }
    }

    /// The client discovery (and everything above it) talks through.
    pub fn client(&self) -> &kube::Client {
        &self.client
    }

    /// Resolves a kind through discovery.
    pub async fn resolve(&self, gvk: &Gvk) -> Result<Resolved, ResolveError> {
        let key = (gvk.group.clone(), gvk.version.clone(), gvk.kind.clone());
        if let Some(found) = self.resolved.lock().expect("discovery lock").get(&key) {
            return Ok(found.clone());
        }
        let (resource, capabilities) = kube::discovery::pinned_kind(
            &self.client,
            &GroupVersionKind::gvk(&gvk.group, &gvk.version, &gvk.kind),
        )
        .await
        .map_err(|source| ResolveError::Unknown {
            kind: display_kind(gvk),
            source,
        })?;
        let resolved = Resolved {
            resource,
            namespaced: capabilities.scope == Scope::Namespaced,
        };
        self.resolved
            .lock()
            .expect("discovery lock")
            .insert(key, resolved.clone());
        Ok(resolved)
    }
}
