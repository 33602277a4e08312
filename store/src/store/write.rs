//! Writes: create, replace, patch (telling whether it created), delete.

use serde_json::Value;

use super::handle::Store;
use crate::meta::status::Status;
use crate::meta::types::{DeleteOutcome, Deletion, PatchType, Propagation, WriteOptions};
use crate::registry::present::present_owned;
use crate::registry::registry::Registry;
use crate::resource::info::ResourceInfo;

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

    /// A write of `name` that may create it: the object as a client reads
    /// it, and whether it was created.
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
