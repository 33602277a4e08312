//! Create, with the strategy's defaults, allocation and checks, the
//! system fields and managedFields.

use serde_json::{Value, json};

use super::allocate::allocate;
use super::registry::Registry;
use super::storage::check_stored;
use crate::apis::apiextensions::customresource::Write;
use crate::apis::apiextensions::customresourcedefinition::{self, is_crd};
use crate::apis::builtin::{
    decode, default, keeps_status_on_create, prepare_create, rules, validate_create,
    validate_generic, versioned, warnings,
};
use crate::fieldmanager::managed::track_update;
use crate::machinery::names::generate_name;
use crate::machinery::object::{is_deleting, meta, meta_mut, now};
use crate::meta::status::Status;
use crate::meta::types::{EventType, WriteOptions};
use crate::resource::info::ResourceInfo;

impl Registry {
    pub(crate) fn create(
        &mut self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        obj: Value,
        opts: &WriteOptions,
    ) -> Result<Value, Status> {
        self.create_tracked(res, namespace, obj, opts, false)
    }

    /// [`create`](Self::create); with `tracked`, the object's
    /// managedFields are the field manager's already (an apply that
    /// creates) and are kept.
    pub(crate) fn create_tracked(
        &mut self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        mut obj: Value,
        opts: &WriteOptions,
        tracked: bool,
    ) -> Result<Value, Status> {
        self.decode_request(res, &mut obj, opts)?;
        decode(res, &obj)?;
        default(res, &mut obj);
        if res.custom.is_none() {
            // What the Go type writes even when zero is there, so the field
            // manager sees it as the real one does.
            crate::fieldmanager::builtin::encoded(&mut obj);
        }
        let mut name = meta(&obj, "name").unwrap_or_default();
        if name.is_empty() {
            match meta(&obj, "generateName").filter(|g| !g.is_empty()) {
                Some(prefix) => {
                    name = generate_name(&prefix);
                }
                // Custom resources and CRDs are refused by their own checks,
                // with their other errors.
                None if res.custom.is_some() || is_crd(res) || rules(res).is_some() => {}
                None => {
                    return Err(Status::invalid(
                        res,
                        "",
                        "metadata.name",
                        "FieldValueRequired",
                        "Required value: name or generateName is required",
                    ));
                }
            }
        }
        let ns = self.resolve_ns(res, namespace, &obj, &name)?;
        if res.custom.is_none() {
            validate_generic(res, &obj, &name)?;
        }
        self.check_namespace(res, &ns, &name)?;
        // Storage refuses an object that names a version (after validation).
        let given_version = meta(&obj, "resourceVersion")
            .and_then(|rv| rv.parse::<u64>().ok())
            .filter(|rv| *rv != 0);
        {
            let md = meta_mut(&mut obj);
            md.insert("name".into(), json!(name));
            if res.namespaced {
                md.insert("namespace".into(), json!(ns));
            } else {
                md.remove("namespace");
            }
            md.insert("uid".into(), json!(uuid::Uuid::new_v4().to_string()));
            md.insert("creationTimestamp".into(), json!(now()));
            md.remove("deletionTimestamp");
            md.remove("deletionGracePeriodSeconds");
            md.remove("resourceVersion");
            md.remove("selfLink");
            if res.created_with_generation() {
                md.insert("generation".into(), json!(1));
            } else {
                md.remove("generation");
            }
            if md
                .get("managedFields")
                .is_some_and(|v| v.as_array().is_some_and(|a| a.is_empty()))
            {
                md.remove("managedFields");
            }
        }
        // The status is the status subresource's (but a kind whose
        // strategy keeps it on create: not owned by the creator, there).
        let sent_status = match obj.as_object_mut() {
            Some(m) if res.status_subresource => m.remove("status"),
            _ => None,
        };
        // The field manager sees the object as it was sent and defaulted:
        // what the kind's strategy, the allocators and admission add
        // after it (a claim's protection finalizer, a Service's addresses)
        // is owned by no one.
        versioned(res, &mut obj);
        // managedFields sent with a create are read, then the creator's
        // update takes every field it sets from them: the creator owns
        // the object alone (`FieldManager.Update` over an empty object).
        if !tracked {
            if let Some(md) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
                md.remove("managedFields");
            }
            let manager = opts
                .field_manager
                .clone()
                .unwrap_or_else(|| "unknown".into());
            if is_crd(res) {
                customresourcedefinition::default_before_tracking(&mut obj);
            }
            if res.custom.is_none() {
                crate::fieldmanager::omitempty::without_zero_scalars(
                    &res.group,
                    &res.version,
                    &res.kind,
                    &mut obj,
                );
            }
            track_update(res, None, &mut obj, &manager, None);
        }
        if keeps_status_on_create(res)
            && let Some(m) = obj.as_object_mut()
        {
            // As sent, or the zero status the Go type writes.
            m.insert("status".into(), sent_status.unwrap_or_else(|| json!({})));
            crate::fieldmanager::builtin::encoded(&mut obj);
        }
        prepare_create(res, &mut obj);
        allocate(self, res, &mut obj, None, opts.dry_run)?;
        if !opts.skip_validation {
            validate_create(res, &obj)?;
            for warning in warnings(res, &obj, None) {
                opts.warnings.add(warning);
            }
            self.validate_custom(res, &obj, None, Write::Create, opts)?;
        }
        let mut full = obj;
        if let Some(m) = full.as_object_mut() {
            m.insert("apiVersion".into(), json!(res.api_version()));
            m.insert("kind".into(), json!(res.kind));
        }
        if res.custom.is_none() {
            // As the storage gives it back (the field manager saw it sent).
            crate::fieldmanager::builtin::stored(&mut full);
        }
        if is_crd(res) {
            customresourcedefinition::prepare(&mut full, None, opts)?;
        }
        if given_version.is_some() && !opts.dry_run {
            return Err(Status::version_set_on_create());
        }
        if let Some(held) = self.find(res, &ns, &name) {
            // Over an object still being deleted, the storage's words say
            // so (`Store.Create` in `generic/registry/store.go`).
            let mut refused = Status::already_exists(res, &name);
            if is_deleting(held) {
                refused.message = format!("object is being deleted: {}", refused.message);
            }
            return Err(refused);
        }
        if opts.dry_run {
            return Ok(full);
        }
        if is_crd(res) {
            // Stored as the real server stores it, then established by
            // its controller: ADDED, then MODIFIED with the conditions.
            self.register_crd(&full, None)?;
            let created = self.commit(
                res,
                EventType::Added,
                customresourcedefinition::initial_status(full),
            );
            let established = customresourcedefinition::established_by_controllers(
                customresourcedefinition::status(created.clone(), None),
            );
            self.commit(res, EventType::Modified, established);
            return Ok(created);
        }
        check_stored(res, &full)?;
        let created = self.commit(res, EventType::Added, full);
        if res.group.is_empty() && res.kind == "Namespace" {
            self.fill_namespace(&name);
        }
        Ok(created)
    }
}
