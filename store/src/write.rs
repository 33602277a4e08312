//! Create, replace and update, with defaults, generation and status rules.

use serde_json::{Map, Value, json};

use crate::api::status::Status;
use crate::api::types::{EventType, WriteOptions};
use crate::apis::apiextensions::customresource::Write;
use crate::apis::apiextensions::customresourcedefinition::{self, is_crd};
use crate::apis::builtin::{
    allocate, allow_create_on_update, decode, default, prepare_create, prepare_update, rules,
    validate_create, validate_update, warnings,
};
use crate::machinery::field::{FieldError, Path};
use crate::machinery::names::generate_name;
use crate::machinery::object::{finalizers, is_deleting, meta, meta_mut, now};
use crate::managed::{ManagedEntry, track_update, write_managed};
use crate::meta::{omit_empty_metadata, same_object, spec_differs};
use crate::resource::info::ResourceInfo;
use crate::store::Inner;

impl Inner {
    pub(crate) fn create(
        &mut self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        mut obj: Value,
        opts: &WriteOptions,
    ) -> Result<Value, Status> {
        if !obj.is_object() {
            return Err(Status::bad_request(format!(
                "the body of the request was not a {} object",
                res.kind
            )));
        }
        self.decode_body(res, &mut obj, None, opts)?;
        decode(res, &obj)?;
        default(res, &mut obj);
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
            self.validate(res, &obj, &name)?;
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
            if res.has_generation() {
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
        if res.status_subresource
            && let Some(m) = obj.as_object_mut()
        {
            m.remove("status");
        }
        prepare_create(res, &mut obj);
        allocate(self, res, &mut obj, None)?;
        if !opts.skip_validation {
            validate_create(res, &obj)?;
            for warning in warnings(res, &obj, None) {
                opts.warnings.add(warning);
            }
            self.validate_custom(res, &obj, None, Write::Create, opts)?;
        }
        if obj.pointer("/metadata/managedFields").is_none() {
            let manager = opts
                .field_manager
                .clone()
                .unwrap_or_else(|| "unknown".into());
            track_update(res, None, &mut obj, &manager, None);
        }
        let mut full = obj;
        if let Some(m) = full.as_object_mut() {
            m.insert("apiVersion".into(), json!(res.api_version()));
            m.insert("kind".into(), json!(res.kind));
        }
        if is_crd(res) {
            customresourcedefinition::prepare(&mut full, None, opts)?;
        }
        if given_version.is_some() && !opts.dry_run {
            return Err(Status::version_set_on_create());
        }
        if self.find(res, &ns, &name).is_some() {
            return Err(Status::already_exists(res, &name));
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
            let established = customresourcedefinition::status(created.clone(), None);
            self.commit(res, EventType::Modified, established);
            return Ok(created);
        }
        res.check_stored(&full)?;
        Ok(self.commit(res, EventType::Added, full))
    }

    pub(crate) fn replace(
        &mut self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        mut obj: Value,
        opts: &WriteOptions,
    ) -> Result<Value, Status> {
        if !obj.is_object() {
            return Err(Status::bad_request(format!(
                "the body of the request was not a {} object",
                res.kind
            )));
        }
        self.decode_body(res, &mut obj, None, opts)?;
        if let Some(n) = meta(&obj, "name").filter(|n| !n.is_empty())
            && n != name
        {
            return Err(Status::bad_request(format!(
                "the name of the object ({n}) does not match the name on the URL ({name})"
            )));
        }
        let ns = self.resolve_ns(res, namespace, &obj, name)?;
        let given = meta(&obj, "resourceVersion").filter(|s| !s.is_empty());
        let stored = self.find_shared(res, &ns, name);
        let Some(existing) = stored.as_deref().map(|o| res.view(o)) else {
            // Some kinds are created by an update of a missing object
            // (`AllowCreateOnUpdate`), when it names no version.
            if given.is_none() && opts.subresource.is_none() && allow_create_on_update(res) {
                if let Some(md) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
                    md.insert("name".into(), json!(name));
                }
                return self.create(res, Some(ns.as_str()).filter(|n| !n.is_empty()), obj, opts);
            }
            return Err(Status::not_found(res, name));
        };
        if given.is_none() && res.custom.is_some() {
            // Custom resources allow no unconditional update.
            return Err(Status::from_field_errors(
                &res.group,
                &res.plural,
                name,
                &[FieldError::invalid(
                    &Path::new(["metadata", "resourceVersion"]),
                    0i64,
                    "must be specified for an update",
                )],
            ));
        }
        if let Some(rv) = given {
            if rv.parse::<u64>().is_err() {
                return Err(Status::internal(format!(
                    "strconv.ParseUint: parsing \"{rv}\": invalid syntax"
                )));
            }
            if Some(rv) != meta(&existing, "resourceVersion") {
                return Err(Status::conflict(res, name));
            }
        }
        self.update(res, &existing, obj, opts, None)
    }

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
        if subresource.is_some_and(|s| s != "status")
            || (subresource == Some("status") && !res.status_subresource)
        {
            return Err(Status::not_found(res, &name));
        }
        decode(res, &incoming)?;
        if res.custom.is_none() {
            self.validate(res, &incoming, &name)?;
        }
        // What the client did with managedFields: kept them, cleared them
        // (an empty list), or wrote others.
        let incoming_mf = incoming.pointer("/metadata/managedFields");
        let rewrites_mf =
            incoming_mf.is_some() && incoming_mf != existing.pointer("/metadata/managedFields");
        let clears_mf = incoming_mf
            .and_then(Value::as_array)
            .is_some_and(|a| a.is_empty());
        let mut new = if subresource == Some("status") {
            let mut n = existing.clone();
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
            for k in [
                "name",
                "namespace",
                "uid",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
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
        if subresource.is_none() {
            prepare_update(res, &mut new, existing);
            allocate(self, res, &mut new, Some(existing))?;
        }
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
                track_update(res, Some(existing), &mut new, &manager, subresource);
            }
        }
        omit_empty_metadata(&mut new);
        if same_object(&new, existing) {
            return Ok(existing.clone());
        }
        if res.has_generation() && spec_differs(&new, existing) {
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
            validate_update(res, &new, existing, subresource == Some("status"))?;
            if subresource.is_none() {
                for warning in warnings(res, &new, Some(existing)) {
                    opts.warnings.add(warning);
                }
            }
            self.validate_custom(res, &new, Some(existing), write, opts)?;
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
        if is_deleting(&new) && finalizers(&new).is_empty() {
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
        res.check_stored(&new)?;
        let out = self.commit(res, EventType::Modified, new);
        if is_deleting(&out) {
            self.collect_garbage();
        }
        Ok(out)
    }
}
