//! Update, with the strategy's defaults and checks, generation
//! and status rules, and the write that removes the last finalizer.

use serde_json::{Map, Value, json};

use super::allocate::allocate;
use super::preconditions::status_write_keeps;
use super::registry::Registry;
use super::storage::{check_stored, omit_empty_metadata};
use super::unchanged::{same_object, spec_differs};
use crate::apis::apiextensions::customresource::Write;
use crate::apis::apiextensions::customresourcedefinition::{self, is_crd};
use crate::apis::builtin::{
    decode, default, generation_also_moves, prepare_update, validate_generic, validate_update,
    warnings,
};
use crate::apis::core::pod;
use crate::apis::versions;
use crate::fieldmanager::managed::{
    ManagedEntry, decodable, track_update_in_versions, write_managed,
};
use crate::machinery::field::{FieldError, Path};
use crate::machinery::object::{finalizers, is_deleting, meta, meta_mut};
use crate::meta::status::Status;
use crate::meta::types::{EventType, WriteOptions};
use crate::resource::info::ResourceInfo;

impl Registry {
    /// The update path shared by replace and patch: `incoming` becomes the
    /// object, keeping system metadata (and status or spec, by subresource).
    pub(crate) fn update(
        &mut self,
        res: &ResourceInfo,
        existing: &Value,
        incoming: Value,
        opts: &WriteOptions,
        managed: Option<Vec<ManagedEntry>>,
    ) -> Result<Value, Status> {
        let name = meta(existing, "name").unwrap_or_default();
        let subresource = opts.subresource.as_deref();
        // A Namespace's `finalize` subresource writes its `spec.finalizers`
        // (`FinalizeREST`, `pkg/registry/core/namespace/storage`).
        let finalize =
            subresource == Some("finalize") && res.group.is_empty() && res.kind == "Namespace";
        // A Pod's subresources that write part of its spec.
        let spec_part = subresource.filter(|s| {
            res.group.is_empty() && res.kind == "Pod" && pod::SPEC_SUBRESOURCES.contains(s)
        });
        if subresource.is_some_and(|s| s != "status" && !finalize && spec_part.is_none())
            || (subresource == Some("status") && !res.status_subresource)
        {
            return Err(Status::not_found(res, &name));
        }
        decode(res, &incoming)?;
        // managedFields the field manager cannot decode are the live
        // object's (it runs before the checks), but for the one empty entry
        // that resets them (`isResetManagedFields`, below).
        let mut incoming = incoming;
        if let Some(sent) = incoming
            .pointer("/metadata/managedFields")
            .and_then(Value::as_array)
            && !decodable(sent)
            && !(sent.len() == 1 && sent[0].as_object().is_some_and(Map::is_empty))
        {
            match existing.pointer("/metadata/managedFields") {
                Some(live) => meta_mut(&mut incoming).insert("managedFields".into(), live.clone()),
                None => meta_mut(&mut incoming).remove("managedFields"),
            };
        }
        if res.custom.is_none() {
            validate_generic(res, &incoming, &name)?;
        }
        // A write cannot change the uid (an empty one is the stored one);
        // the metadata checks run twice on an update, so it is said twice.
        if let Some(sent) = meta(&incoming, "uid").filter(|u| !u.is_empty())
            && Some(&sent) != meta(existing, "uid").as_ref()
        {
            let message = format!("Invalid value: \"{sent}\": field is immutable");
            let cause = ("metadata.uid", "FieldValueInvalid", message.as_str());
            return Err(Status::invalid_causes(res, &name, &[cause, cause]));
        }
        // One empty entry is a reset, as an empty list is
        // (`isResetManagedFields`).
        if let Some(entries) = incoming
            .pointer_mut("/metadata/managedFields")
            .and_then(Value::as_array_mut)
            && entries.len() == 1
            && entries[0].as_object().is_some_and(Map::is_empty)
        {
            entries.clear();
        }
        // What the client did with managedFields: kept them, cleared them
        // (an empty list), or wrote others.
        let incoming_mf = incoming.pointer("/metadata/managedFields");
        let rewrites_mf =
            incoming_mf.is_some() && incoming_mf != existing.pointer("/metadata/managedFields");
        let clears_mf = incoming_mf
            .and_then(Value::as_array)
            .is_some_and(|a| a.is_empty());
        let sent_deletion = DeletionMarks::sent(&incoming);
        let mut new = if subresource == Some("status") {
            let mut n = existing.clone();
            // A built-in kind's status strategy puts back only the spec
            // (and, by kind, some metadata): the write's labels,
            // annotations, finalizers and owners stay. A custom resource's
            // takes nothing but the status.
            if res.custom.is_none() {
                for key in status_write_keeps(res) {
                    let sent = incoming.pointer(&format!("/metadata/{key}")).cloned();
                    let md = meta_mut(&mut n);
                    match sent {
                        Some(value) => {
                            md.insert(key.to_string(), value);
                        }
                        None => {
                            md.remove(*key);
                        }
                    }
                }
            }
            if let Some(m) = n.as_object_mut() {
                let mut incoming = incoming;
                match incoming.as_object_mut().and_then(|i| i.remove("status")) {
                    Some(s) => {
                        m.insert("status".into(), s);
                    }
                    None => {
                        m.remove("status");
                    }
                }
            }
            n
        } else {
            let mut n = incoming;
            if res.status_subresource
                && let Some(m) = n.as_object_mut()
            {
                match existing.get("status") {
                    Some(s) => {
                        m.insert("status".into(), s.clone());
                    }
                    None => {
                        m.remove("status");
                    }
                }
            }
            let empty = Map::new();
            let old_md = existing
                .get("metadata")
                .and_then(Value::as_object)
                .unwrap_or(&empty);
            let md = meta_mut(&mut n);
            md.remove("selfLink");
            for k in [
                "name",
                "namespace",
                "uid",
                "creationTimestamp",
                "generation",
            ] {
                match old_md.get(k) {
                    Some(v) => {
                        md.insert(k.into(), v.clone());
                    }
                    None => {
                        md.remove(k);
                    }
                }
            }
            // `rest.BeforeUpdate`: an update never removes or changes a
            // deletionTimestamp, nor removes a grace period; one that sets
            // them is refused below.
            for k in ["deletionTimestamp", "deletionGracePeriodSeconds"] {
                let given = md.get(k).is_some_and(|v| !v.is_null());
                match old_md.get(k) {
                    Some(v) if k == "deletionTimestamp" || !given => {
                        md.insert(k.into(), v.clone());
                    }
                    _ if !given => {
                        md.remove(k);
                    }
                    _ => {}
                }
            }
            if md.get("managedFields").is_none()
                && let Some(mf) = old_md.get("managedFields")
            {
                md.insert("managedFields".into(), mf.clone());
            }
            n
        };
        if let Some(m) = new.as_object_mut() {
            m.insert("apiVersion".into(), json!(res.api_version()));
            m.insert("kind".into(), json!(res.kind));
        }
        default(res, &mut new);
        if res.custom.is_none() {
            // What the Go type writes even when zero is there, so the field
            // manager sees it as the real one does.
            crate::fieldmanager::builtin::encoded(&mut new);
        }
        // What the field manager sees: the object before the strategy's
        // `PrepareForUpdate` (it runs in the handler, before
        // `rest.BeforeUpdate`), which records what the strategy then puts
        // back or drops (a Namespace's `spec.finalizers`, the fields a
        // Service's change of type leaves behind).
        let tracked_from = (managed.is_none() && !rewrites_mf).then(|| new.clone());
        match spec_part {
            Some(sub) => pod::prepare_subresource_update(sub, &mut new, existing),
            None if subresource.is_none() => prepare_update(res, &mut new, existing),
            None => {}
        }
        immutable_deletion(res, &name, &new, existing)?;
        if is_deleting(existing) {
            let old_f = finalizers(existing);
            let added: Vec<String> = finalizers(&new)
                .into_iter()
                .filter(|f| !old_f.contains(f))
                .collect();
            if !added.is_empty() {
                let quoted: Vec<String> = added.iter().map(|f| format!("\"{f}\"")).collect();
                let msg = format!(
                    "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
                    quoted.join(", ")
                );
                return Err(Status::invalid_causes(
                    res,
                    &name,
                    &[
                        ("metadata.finalizers", "FieldValueForbidden", &msg),
                        ("metadata.finalizers", "FieldValueForbidden", &msg),
                    ],
                ));
            }
        }
        // managedFields: explicitly rewritten by the client, computed by apply, or tracked.
        match managed {
            Some(entries) => write_managed(&mut new, &entries),
            None if rewrites_mf => {
                if clears_mf {
                    meta_mut(&mut new).remove("managedFields");
                }
            }
            None => {
                let manager = opts
                    .field_manager
                    .clone()
                    .unwrap_or_else(|| "unknown".into());
                // The field manager sees the deletion marks the write
                // sent, before `rest.BeforeUpdate` puts the stored ones
                // back (`registry/rest/update.go`).
                let mut seen = tracked_from.unwrap_or_else(|| new.clone());
                if is_crd(res) {
                    customresourcedefinition::default_before_tracking(&mut seen);
                }
                sent_deletion.put(&mut seen);
                let convert = |o: &Value, to: &str| versions::convert(res, o, to);
                track_update_in_versions(
                    res,
                    Some(existing),
                    &mut seen,
                    &manager,
                    subresource,
                    Some(&convert),
                );
                let tracked = seen.pointer_mut("/metadata/managedFields").map(Value::take);
                match tracked {
                    Some(entries) => meta_mut(&mut new).insert("managedFields".into(), entries),
                    None => meta_mut(&mut new).remove("managedFields"),
                };
            }
        }
        // The Service allocators run after the field manager
        // (`BeginUpdate`): what they allocate is nobody's.
        if subresource.is_none() {
            allocate(self, res, &mut new, Some(existing), opts.dry_run)?;
        }
        if res.custom.is_none() {
            // As the storage gives it back (the field manager saw it sent).
            crate::fieldmanager::builtin::stored(&mut new);
        }
        omit_empty_metadata(&mut new);
        // The storage compares what it would write with what it holds
        // (`GuaranteedUpdate`): an object stored otherwise than it is read
        // (an older version of a custom resource, a Job stored without the
        // labels its decoding defaults) is written again.
        if same_object(&new, existing) && !self.stored_otherwise(res, existing) {
            return Ok(existing.clone());
        }
        // A status write never moves the generation (only the main
        // strategy's PrepareForUpdate does, and a Pod's for its spec
        // subresources, `updatePodGeneration`).
        if res.has_generation()
            && (subresource.is_none() && generation_also_moves(res, &new, existing)
                || (subresource.is_none() || spec_part.is_some()) && spec_differs(&new, existing))
        {
            let g = existing
                .pointer("/metadata/generation")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            meta_mut(&mut new).insert("generation".into(), json!(g + 1));
        }
        if !opts.skip_validation {
            let write = if subresource == Some("status") {
                Write::Status
            } else {
                Write::Update
            };
            validate_update(res, &new, existing, subresource)?;
            if subresource.is_none() {
                for warning in warnings(res, &new, Some(existing)) {
                    opts.warnings.add(warning);
                }
            }
            self.validate_custom(res, &new, Some(existing), write, opts)?;
            self.admit_update(res, &new, existing, subresource)?;
        }
        if is_crd(res) && subresource.is_none() {
            customresourcedefinition::prepare(&mut new, Some(existing), opts)?;
        }
        if opts.dry_run {
            return Ok(new);
        }
        if is_crd(res) {
            self.register_crd(&new, Some(existing))?;
            new = customresourcedefinition::status(new, Some(existing));
        }
        if should_delete_during_update(res, &new, existing) {
            // The write that removes the last finalizer deletes the object;
            // like the real server, it answers with the previous version
            // while the DELETED event carries a new one.
            let previous = existing.pointer("/metadata/resourceVersion").cloned();
            let mut out = self.finish_delete(res, new);
            if let Some(rv) = previous {
                meta_mut(&mut out).insert("resourceVersion".into(), rv);
            }
            self.collect_garbage();
            return Ok(out);
        }
        check_stored(res, &new)?;
        let out = self.commit(res, EventType::Modified, new);
        if is_deleting(&out) {
            self.collect_garbage();
        }
        Ok(out)
    }
}

impl Registry {
    /// Whether `object` is stored otherwise than a read gives it, so that
    /// a write changing nothing still writes it again: a custom resource
    /// stored in an older version (a storage migration), or a built-in
    /// object whose decoding defaults something its stored form lacks (a
    /// Job created without labels).
    fn stored_otherwise(&self, res: &ResourceInfo, object: &Value) -> bool {
        let namespace = meta(object, "namespace").unwrap_or_default();
        let name = meta(object, "name").unwrap_or_default();
        let Some(stored) = self.find_shared(res, &namespace, &name) else {
            return false;
        };
        match &res.custom {
            Some(custom) => {
                let storage = format!("{}/{}", res.group, custom.storage());
                stored.get("apiVersion").and_then(Value::as_str) != Some(&storage)
            }
            None => versions::decoded(res, &stored).is_some(),
        }
    }
}

/// The 422 of an update that sets a deletionTimestamp or changes a
/// deletionGracePeriodSeconds (`ValidateObjectMetaAccessorUpdate`: both
/// are immutable). The metadata checks run twice on an update
/// (`rest.BeforeUpdate`, then the strategy's), so it is said twice.
fn immutable_deletion(
    res: &ResourceInfo,
    name: &str,
    new: &Value,
    old: &Value,
) -> Result<(), Status> {
    let mut errors = Vec::new();
    for key in ["deletionTimestamp", "deletionGracePeriodSeconds"] {
        let value = |o: &Value| {
            o.pointer(&format!("/metadata/{key}"))
                .cloned()
                .unwrap_or(Value::Null)
        };
        if value(new) != value(old) {
            let error = FieldError::invalid(
                &Path::new(["metadata", key]),
                value(new),
                "field is immutable",
            );
            errors.push(error.clone());
            errors.push(error);
        }
    }
    if errors.is_empty() {
        return Ok(());
    }
    Err(Status::from_field_errors(
        &res.group, &res.kind, name, &errors,
    ))
}

/// Whether an update of an object being deleted deletes it
/// (`ShouldDeleteDuringUpdate` in `store.go`): it leaves no finalizer, and
/// the delete gave no grace period (a Pod deleted gracefully stays until
/// its grace period is over); a namespace also waits for its
/// `spec.finalizers` (`ShouldDeleteNamespaceDuringUpdate`).
fn should_delete_during_update(res: &ResourceInfo, new: &Value, old: &Value) -> bool {
    let no_grace = old
        .pointer("/metadata/deletionGracePeriodSeconds")
        .and_then(Value::as_i64)
        .is_none_or(|g| g == 0);
    let namespace_waits = res.group.is_empty()
        && res.kind == "Namespace"
        && new
            .pointer("/spec/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|f| !f.is_empty());
    finalizers(new).is_empty() && is_deleting(old) && no_grace && !namespace_waits
}

/// An object's deletion marks (`deletionTimestamp`,
/// `deletionGracePeriodSeconds`), each there or not.
struct DeletionMarks([Option<Value>; 2]);

impl DeletionMarks {
    const KEYS: [&str; 2] = ["deletionTimestamp", "deletionGracePeriodSeconds"];

    /// The marks `obj` holds.
    fn sent(obj: &Value) -> DeletionMarks {
        DeletionMarks(Self::KEYS.map(|key| obj.pointer(&format!("/metadata/{key}")).cloned()))
    }

    /// Puts these marks in `obj`, in place of its own.
    fn put(&self, obj: &mut Value) {
        let md = meta_mut(obj);
        for (key, value) in Self::KEYS.iter().zip(&self.0) {
            match value {
                Some(value) => md.insert((*key).into(), value.clone()),
                None => md.remove(*key),
            };
        }
    }
}
