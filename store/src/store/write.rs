//! Writes: create, replace, patch (telling whether it created), delete.

use serde_json::Value;

use super::handle::Store;
use crate::meta::status::Status;
use crate::meta::types::{
    DeleteOutcome, Deletion, ListOptions, ObjectList, PatchType, Propagation, WriteOptions,
};
use crate::registry::present::present_owned;
use crate::registry::registry::Registry;
use crate::resource::info::ResourceInfo;

/// The page size a deletecollection lists with when it asks no limit
/// (`deleteCollectionPageSize` in `store.go`).
const DELETE_COLLECTION_PAGE_SIZE: usize = 500;

impl Store {
    /// Creates an object. `namespace` (or the object's own) must exist.
    pub fn create(
        &self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        object: Value,
        opts: &WriteOptions,
    ) -> Result<Value, Status> {
        let mut g = self.lock();
        let out = g.create(res, namespace, object, opts)?;
        Ok(present_owned(res, out))
    }

    /// Replaces an object (PUT). A `metadata.resourceVersion` in `object` is a
    /// precondition: a stale one gets 409 Conflict.
    pub fn replace(
        &self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        object: Value,
        opts: &WriteOptions,
    ) -> Result<Value, Status> {
        self.replace_created(res, namespace, name, object, opts)
            .map(|(out, _)| out)
    }

    /// Replaces an object, telling whether the update created it (kinds
    /// that allow it, as Leases do).
    pub fn replace_created(
        &self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        object: Value,
        opts: &WriteOptions,
    ) -> Result<(Value, bool), Status> {
        self.write_created(res, namespace, name, |g| {
            g.replace(res, namespace, name, object, opts)
        })
    }

    /// Patches an object. Apply creates it when missing and needs
    /// `opts.field_manager` (422 otherwise).
    pub fn patch(
        &self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        patch: &PatchType,
        body: &[u8],
        opts: &WriteOptions,
    ) -> Result<Value, Status> {
        self.patch_created(res, namespace, name, patch, body, opts)
            .map(|(out, _)| out)
    }

    /// Patches an object, telling whether apply created it.
    pub fn patch_created(
        &self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        patch: &PatchType,
        body: &[u8],
        opts: &WriteOptions,
    ) -> Result<(Value, bool), Status> {
        self.write_created(res, namespace, name, |g| {
            g.patch(res, namespace, name, patch, body, opts)
        })
    }

    /// Deletes an object. With finalizers (or Foreground/Orphan propagation)
    /// the object first gets `deletionTimestamp` and is returned as pending.
    pub fn delete(
        &self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        propagation: Option<Propagation>,
    ) -> Result<DeleteOutcome, Status> {
        let how = Deletion {
            propagation,
            ..Deletion::default()
        };
        self.delete_with(res, namespace, name, how)
    }

    /// Deletes an object as a DELETE with these options does (see
    /// [`Deletion`]); a dry run stores nothing.
    pub fn delete_with(
        &self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        how: Deletion,
    ) -> Result<DeleteOutcome, Status> {
        let mut g = self.lock();
        let out = g.delete(res, namespace, name, how, false)?;
        g.collect_garbage();
        Ok(match out {
            DeleteOutcome::Deleted(o) => DeleteOutcome::Deleted(present_owned(res, o)),
            DeleteOutcome::Pending(o) => DeleteOutcome::Pending(present_owned(res, o)),
        })
    }

    /// Evicts the Pod `name` (`res` is `pods`) as a POST of an Eviction to
    /// its `eviction` subresource does, with the Eviction's DeleteOptions
    /// `how`: the `Status` to answer, or why it is refused (a 429 while
    /// its PodDisruptionBudget allows no disruption).
    pub fn evict(
        &self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        how: Deletion,
    ) -> Result<Value, Status> {
        let mut g = self.lock();
        let out = g.evict(res, res.namespace_of(namespace), name, how)?;
        g.collect_garbage();
        Ok(out)
    }

    /// Binds the Pod `name` (`pods` is the Pods' resource) to the node a
    /// v1 Binding names, as a POST of it to the Pod's `binding`
    /// subresource does: its uid and resourceVersion, when given, must be
    /// the Pod's; a Pod already on a node, being deleted or gated is a 409.
    pub fn bind(
        &self,
        pods: &ResourceInfo,
        namespace: &str,
        name: &str,
        binding: &Value,
        dry_run: bool,
    ) -> Result<(), Status> {
        self.lock().bind(pods, namespace, name, binding, dry_run)
    }

    /// Whether the log of `container` of the Pod `name` can be read: `Ok`
    /// when the Pod is on no node yet (its log is empty), else why not (no
    /// such Pod or container, and no kubelet to read it from).
    pub fn pod_log(
        &self,
        pods: &ResourceInfo,
        namespace: &str,
        name: &str,
        container: Option<&str>,
    ) -> Result<(), Status> {
        self.lock().pod_log(pods, namespace, name, container)
    }

    /// Deletes every object a list with `list` selects, each as a DELETE
    /// with `how` (`Store.DeleteCollection` in `store.go`; one gone
    /// meanwhile is skipped, another refusal ends it), and answers the
    /// list of them as they were listed: with a limit, only the first page
    /// is deleted and answered; without, pages of 500 are, answered as
    /// the first page with all the items. A dry run answers the same and
    /// deletes nothing.
    pub fn delete_collection(
        &self,
        res: &ResourceInfo,
        list: &ListOptions,
        how: &Deletion,
    ) -> Result<ObjectList, Status> {
        let has_limit = list.limit.is_some_and(|l| l > 0);
        let mut options = list.clone();
        if !has_limit {
            options.limit = Some(DELETE_COLLECTION_PAGE_SIZE);
        }
        let mut answer: Option<ObjectList> = None;
        loop {
            let page = self.list(res, &options)?;
            for o in &page.items {
                let name = o.pointer("/metadata/name").and_then(Value::as_str);
                let namespace = o.pointer("/metadata/namespace").and_then(Value::as_str);
                match self.delete_with(res, namespace, name.unwrap_or_default(), how.clone()) {
                    Err(e) if e.code != 404 => return Err(e),
                    _ => {}
                }
            }
            if has_limit {
                return Ok(page);
            }
            let next = page.continue_token.clone().filter(|c| !c.is_empty());
            let all = match answer.take() {
                None => page,
                Some(mut all) => {
                    all.items.extend(page.items);
                    all
                }
            };
            let Some(next) = next else {
                return Ok(all);
            };
            answer = Some(all);
            // The next pages read the latest state, at no resourceVersion.
            options = ListOptions {
                namespace: list.namespace.clone(),
                label_selector: list.label_selector.clone(),
                field_selector: list.field_selector.clone(),
                limit: options.limit,
                continue_token: Some(next),
                ..ListOptions::default()
            };
        }
    }

    /// A write of `name` that may create it: the object as a client reads
    /// it, and whether it was created.
    /// The `autoscaling/v1` Scale of an object with replicas (a
    /// Deployment, ReplicaSet, StatefulSet, ReplicationController or
    /// custom resource with a scale subresource), after `write` when one
    /// is given: the object's replicas are written through it, with its
    /// checks and its managedFields as the real scale registries keep
    /// them.
    pub fn scale(
        &self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        write: Option<crate::registry::scale::ScaleWrite<'_>>,
        opts: &WriteOptions,
    ) -> Result<Value, Status> {
        let ns = res.namespace_of(namespace);
        let object = {
            let mut g = self.lock();
            g.scale(res, ns, name, write, opts)?
        };
        let object = present_owned(res, object);
        crate::registry::scale::scale_of(res, &object).map(|(scale, _)| scale)
    }

    fn write_created(
        &self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        write: impl FnOnce(&mut Registry) -> Result<Value, Status>,
    ) -> Result<(Value, bool), Status> {
        let mut g = self.lock();
        let existed = g.find(res, res.namespace_of(namespace), name).is_some();
        let out = write(&mut g)?;
        Ok((present_owned(res, out), !existed))
    }
}
