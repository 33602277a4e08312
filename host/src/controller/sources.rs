//! The kinds a controller follows (its primary, owned and watched kinds)
//! and the informers it holds for them: a sharded module's primaries are
//! cached for its own ranges only.

use std::sync::Arc;

use super::sharding::Sharded;
use super::triggers::Role;
use crate::config::ShardBy;
use crate::contract::{Gvk, Predicate, Verbs};
use crate::discovery::ResolveError;
use crate::dispatch::Dispatcher;
use crate::ha::Shards;
use crate::informer::{Informer, Informers};

pub(crate) type Subscription = (Arc<Informer>, Source);

/// One kind a controller follows: the informer it needs (kind and label
/// selector), its role, and which of its updates count.
#[derive(Clone, Debug)]
pub(crate) struct Source {
    pub kind: Gvk,
    pub selector: Option<String>,
    pub role: Role,
    pub predicates: Vec<Predicate>,
    /// The namespaces it is followed in (every one when empty); ignored
    /// for cluster-scoped kinds.
    pub namespaces: Vec<String>,
}

/// The informers of the module's primary, owned and watched kinds.
pub(crate) async fn subscribe(
    module: &Dispatcher,
    informers: &Informers,
    sharding: Option<(ShardBy, &Shards)>,
) -> Result<Vec<Subscription>, ResolveError> {
    let mut subscriptions: Vec<Subscription> = Vec::new();
    for source in wanted(module.manifest()) {
        let namespaces: Vec<Option<&str>> = if source.namespaces.is_empty() {
            vec![None]
        } else {
            source.namespaces.iter().map(|n| Some(n.as_str())).collect()
        };
        let mut mine: Vec<Arc<Informer>> = Vec::new();
        for namespace in namespaces {
            let selector = source.selector.as_deref();
            // A watched kind is mapped to primaries by its metadata alone:
            // its objects are cached as metadata, unless the module may
            // read them. Then the informer that queues its reconciles is
            // the one its reads are served from, so a reconcile never
            // reads a cache older than the event that queued it.
            let informer = match (&source.role, sharding) {
                // A sharded module caches its own share of its primaries
                // and of the objects they own.
                (Role::Primary | Role::Owned, Some((by, shards))) => {
                    let field = match source.role {
                        Role::Primary => Sharded::field(by),
                        _ => Sharded::owned_field(by),
                    };
                    let informer = informers
                        .sharded(&source.kind, selector, namespace, field, &shards.held())
                        .await?;
                    if let Some(synced) = informer.shard_synced() {
                        shards.follow_cache(synced);
                    }
                    informer
                }
                (Role::Watched(_), _) if !reads(module.manifest(), &source.kind) => {
                    informers
                        .metadata_informer(&source.kind, selector, namespace)
                        .await?
                }
                _ => {
                    informers
                        .informer(&source.kind, selector, namespace)
                        .await?
                }
            };
            // A cluster-scoped kind has one informer whatever the namespaces.
            if !mine.iter().any(|m| Arc::ptr_eq(m, &informer)) {
                mine.push(informer);
            }
        }
        subscriptions.extend(mine.into_iter().map(|i| (i, source.clone())));
    }
    Ok(subscriptions)
}

/// Whether a manifest lets its module read objects of `kind`.
fn reads(manifest: &crate::contract::Manifest, kind: &Gvk) -> bool {
    manifest.permissions.iter().any(|p| {
        p.kind.group == kind.group
            && p.kind.kind == kind.kind
            && p.verbs.intersects(Verbs::GET | Verbs::LIST)
    })
}

/// The kinds a manifest follows, primary first.
pub(crate) fn wanted(manifest: &crate::contract::Manifest) -> Vec<Source> {
    let mut wanted = vec![Source {
        kind: manifest.primary.clone(),
        selector: manifest.primary_selector.clone(),
        role: Role::Primary,
        predicates: manifest.primary_predicates.clone(),
        namespaces: manifest.primary_namespaces.clone(),
    }];
    for owned in &manifest.owns {
        wanted.push(Source {
            kind: owned.kind.clone(),
            selector: None,
            role: Role::Owned,
            predicates: owned.predicates.clone(),
            namespaces: manifest.primary_namespaces.clone(),
        });
    }
    for watch in &manifest.watches {
        wanted.push(Source {
            kind: watch.kind.clone(),
            selector: watch.label_selector.clone(),
            role: Role::Watched(watch.mapping.clone()),
            predicates: watch.predicates.clone(),
            namespaces: manifest.primary_namespaces.clone(),
        });
    }
    wanted
}
