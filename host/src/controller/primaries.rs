//! The cache of a controller's primary kind: one informer, or one per
//! namespace when the module (or the operator) scopes it to namespaces.

use std::sync::Arc;

use crate::informer::{Cached, Informer};

/// The primary objects of one controller, across its informers.
#[derive(Clone, Debug)]
pub(crate) struct Primaries {
    /// Ordered by namespace (one informer without a namespace when the
    /// kind is followed everywhere).
    informers: Vec<Arc<Informer>>,
}

impl Primaries {
    /// The primaries of these informers (at least one).
    pub fn new(mut informers: Vec<Arc<Informer>>) -> Primaries {
        assert!(!informers.is_empty(), "a controller has a primary informer");
        informers.sort_by(|a, b| a.namespace.cmp(&b.namespace));
        Primaries { informers }
    }

    /// Whether the primary kind is namespaced.
    pub fn namespaced(&self) -> bool {
        self.informers[0].resolved.namespaced
    }

    /// One primary, from the informer that covers its namespace.
    pub fn get(&self, namespace: Option<&str>, name: &str) -> Option<Arc<Cached>> {
        self.informers
            .iter()
            .find(|i| i.namespace.is_none() || i.namespace.as_deref() == namespace)?
            .get(namespace, name)
    }

    /// Every primary, ordered by namespace then name.
    pub fn list(&self) -> Vec<Arc<Cached>> {
        self.informers.iter().flat_map(|i| i.list(None)).collect()
    }

    /// How many primaries are cached.
    pub fn len(&self) -> usize {
        self.informers.iter().map(|i| i.len()).sum()
    }

    /// Waits until every informer has listed once.
    pub async fn wait_ready(&self) {
        for informer in &self.informers {
            informer.wait_ready().await;
        }
    }
}
