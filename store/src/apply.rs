//! Patches (merge, JSON, strategic merge) and server-side apply.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use crate::api::status::Status;
use crate::api::types::{PatchType, WriteOptions};
use crate::apis::fields::{Shape, undeclared};
use crate::go::fmt::go_print;
use crate::go::json::duplicates::duplicate_fields;
use crate::go::json::encode::{go_json, go_json_patched};
use crate::go::strconv::go_quote;
use crate::machinery::field::{FieldError, Path};
use crate::machinery::object::{meta, now};
use crate::managed::{
    ManagedEntry, ownable, path_display, read_managed, root_type, strip_meta, write_managed,
};
use crate::patch::strategic_merge;
use crate::resource::builtin::is_builtin;
use crate::resource::info::ResourceInfo;
use crate::store::Inner;
use crate::structured;
use crate::structured::{FieldPath, FieldSet};

impl Inner {
    pub(crate) fn patch(
        &mut self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        ptype: &PatchType,
        body: &[u8],
        opts: &WriteOptions,
    ) -> Result<Value, Status> {
        let ns = res.namespace_of(namespace).to_string();
        let force = match ptype {
            PatchType::Apply { force } => *force,
            other => return self.patch_existing(res, &ns, name, other, body, opts),
        };
        {
            let Some(manager) = opts.field_manager.clone().filter(|m| !m.is_empty()) else {
                return Err(Status {
                    code: 422,
                    reason: "Invalid".into(),
                    message: "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch".into(),
                    details: Some(json!({"group": "meta.k8s.io", "kind": "PatchOptions", "causes": [{"reason": "FieldValueRequired", "message": "Required value: is required for apply patch", "field": "fieldManager"}]})),
                });
            };
            // JSON (what clients send) read as JSON; YAML, and JSON that
            // repeats a field (which YAML refuses), as YAML.
            let json = serde_json::from_slice::<Value>(body)
                .ok()
                .filter(|_| duplicate_fields(body).is_empty());
            let config: Value = match json {
                Some(config) => config,
                None => serde_yaml::from_slice(body)
                    .map_err(|e| Status::bad_request(format!("error decoding YAML: {e}")))?,
            };
            if !config.is_object() {
                return Err(Status::bad_request(
                    "error decoding YAML: the body is not an object",
                ));
            }
            self.apply(res, &ns, name, config, &manager, force, opts)
        }
    }

    /// Merge, JSON and strategic merge patches of an existing object.
    pub(crate) fn patch_existing(
        &mut self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
        ptype: &PatchType,
        body: &[u8],
        opts: &WriteOptions,
    ) -> Result<Value, Status> {
        let stored = self
            .find_shared(res, ns, name)
            .ok_or_else(|| Status::not_found(res, name))?;
        let existing = res.view(&stored);
        let mut doc = patched(&existing, ptype, body, res)?;
        if let Some(rv) = meta(&doc, "resourceVersion")
            && Some(&rv) != meta(&existing, "resourceVersion").as_ref()
        {
            return Err(Status::conflict(res, name));
        }
        if meta(&doc, "name").as_deref() != Some(name) {
            return Err(Status::bad_request(format!(
                "the name of the object ({}) does not match the name on the URL ({name})",
                meta(&doc, "name").unwrap_or_default()
            )));
        }
        // The patched object is decoded as a body is: unknown fields are
        // refused under Strict with the patched object in the message.
        self.decode_body(res, &mut doc, Some(&existing), opts)
            .map_err(|status| {
                if status.code != 400 {
                    return status;
                }
                // What the real server shows: a strategic merge patch as Go
                // prints its map, the patched object (again, as it was
                // before decoding) otherwise.
                let value = match ptype {
                    PatchType::StrategicMerge => {
                        go_print(&serde_json::from_slice(body).unwrap_or_default())
                    }
                    _ => {
                        let patched = patched(&existing, ptype, body, res).unwrap_or_default();
                        if res.custom.is_some() {
                            go_json(&patched)
                        } else {
                            go_json_patched(&patched, &existing)
                        }
                    }
                };
                let why = status
                    .message
                    .split_once("strict decoding error: ")
                    .map_or(status.message.as_str(), |(_, why)| why);
                Status::from_field_errors(
                    "",
                    "",
                    "",
                    &[FieldError::invalid(
                        &Path::new(["patch"]),
                        value.as_str(),
                        format!("strict decoding error: {why}"),
                    )],
                )
            })?;
        self.update(res, &existing, doc, opts, None)
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn apply(
        &mut self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
        config: Value,
        manager: &str,
        force: bool,
        opts: &WriteOptions,
    ) -> Result<Value, Status> {
        if let Some(n) = meta(&config, "name").filter(|n| n != name) {
            return Err(Status::bad_request(format!(
                "the name of the object ({n}) does not match the name on the URL ({name})"
            )));
        }
        // Fields the schema (or the built-in kind) does not know cannot be
        // typed for apply.
        let undeclared = match &res.custom {
            Some(custom) => custom.undeclared(&res.version, &config),
            None => undeclared(res, &config),
        };
        if let Some(unknown) = undeclared.first() {
            return Err(Status {
                code: 500,
                reason: String::new(),
                message: format!(
                    "failed to create typed patch object (/{name}; {}/{}, Kind={}): .{unknown}: field not declared in schema",
                    res.group, res.version, res.kind
                ),
                details: None,
            });
        }
        let sub = opts.subresource.as_deref();
        let ty = root_type(res);
        let applied = ownable(res, &config, sub);
        // Map and set lists need keys, each given once.
        let untyped = structured::check(&applied, ty);
        if !untyped.is_empty() {
            let why = if untyped.len() == 1 {
                untyped[0].clone()
            } else {
                format!("errors:\n  {}", untyped.join("\n  "))
            };
            return Err(Status {
                code: 500,
                reason: String::new(),
                message: format!(
                    "failed to create typed patch object (/{name}; {}/{}, Kind={}): {why}",
                    res.group, res.version, res.kind
                ),
                details: None,
            });
        }
        let set = strip_meta(structured::field_set(&applied, ty));
        let stored = self.find_shared(res, ns, name);
        let existing = stored.as_deref().map(|o| res.view(o));
        let stub;
        let live: &Value = match &existing {
            Some(existing) => existing,
            None => {
                stub = json!({"metadata": {"name": name}});
                &stub
            }
        };
        let mut entries = read_managed(live);
        let api_version = res.api_version();
        let sub_owned = sub.map(str::to_string);
        let is_self = |e: &ManagedEntry| {
            e.manager == manager && e.operation == "Apply" && e.subresource == sub_owned
        };
        // The applied object merged into the live one, as
        // structured-merge-diff merges them (map and set lists item by item).
        let mut merged =
            structured::merge(Some(live), Some(&applied), ty).unwrap_or_else(|| live.clone());
        // What this manager applied last time and no longer does, owned by
        // nobody else, goes away.
        let last: FieldSet = entries
            .iter()
            .filter(|e| is_self(e))
            .flat_map(|e| e.fields.iter().cloned())
            .collect();
        // (Nothing is gone when it applies all it applied before.)
        if !last.is_empty() && !last.is_subset(&set) {
            let owned: FieldSet = entries
                .iter()
                .filter(|e| !is_self(e))
                .flat_map(|e| e.fields.iter().cloned())
                .chain(set.iter().cloned())
                .collect();
            let owned = structured::with_named_fields(&owned, ty);
            let gone: FieldSet = structured::with_named_fields(&last, ty)
                .difference(&owned)
                .cloned()
                .collect();
            if !gone.is_empty() {
                merged = structured::remove(&merged, &gone, ty);
            }
        }
        // Conflicts: another manager owns a field this apply adds or changes.
        let changes = if merged == *live {
            structured::Comparison::default()
        } else {
            structured::compare(
                Some(&ownable(res, live, sub)),
                Some(&ownable(res, &merged, sub)),
                ty,
            )
        };
        let touched: FieldSet = changes.added.union(&changes.modified).cloned().collect();
        let mut conflicts: Vec<(FieldPath, String)> = Vec::new();
        let mut conflicting: Vec<FieldSet> = Vec::new();
        for e in entries.iter() {
            let theirs: FieldSet = if is_self(e) {
                FieldSet::new()
            } else {
                e.fields.intersection(&touched).cloned().collect()
            };
            let who = conflict_manager(e);
            for p in structured::ordered(&theirs) {
                conflicts.push((p, who.clone()));
            }
            conflicting.push(theirs);
        }
        if !conflicts.is_empty() && !force {
            return Err(conflict_status(res, name, &conflicts));
        }
        // Forced: the others lose what conflicted; everyone loses what is gone.
        let removed = strip_meta(changes.removed);
        for (e, lost) in entries.iter_mut().zip(&conflicting) {
            if !is_self(e) {
                e.fields
                    .retain(|p| !lost.contains(p) && !removed.contains(p));
            }
        }
        let live = merged;
        entries.retain(|e| !is_self(e));
        entries.push(ManagedEntry {
            manager: manager.into(),
            operation: "Apply".into(),
            api_version,
            time: now(),
            subresource: sub_owned,
            fields: set,
        });
        match existing {
            None => {
                if sub == Some("status") {
                    return Err(Status::not_found(res, name));
                }
                let mut live = live;
                write_managed(&mut live, &entries);
                self.create(res, Some(ns).filter(|n| !n.is_empty()), live, opts)
            }
            Some(existing) => {
                if let Some(rv) = meta(&config, "resourceVersion")
                    && Some(&rv) != meta(&existing, "resourceVersion").as_ref()
                {
                    return Err(Status::conflict(res, name));
                }
                // The merged object is decoded as a body is (the schema's
                // defaults for the items it gained).
                let mut live = live;
                self.decode_body(res, &mut live, Some(&existing), opts)?;
                self.update(res, &existing, live, opts, Some(entries))
            }
        }
    }
}

/// A JSON patch applied as the real server applies it (evanphx/json-patch
/// v4): operation by operation, and a `replace` of a key an object does not
/// have adds it, where RFC 6902 refuses it.
fn json_patch_as_the_server(doc: &mut Value, patch: json_patch::Patch) -> Result<(), Status> {
    use json_patch::{AddOperation, PatchOperation};
    for op in patch.0 {
        let op = match op {
            PatchOperation::Replace(replace)
                if missing_key_of_object(doc, replace.path.as_str()) =>
            {
                PatchOperation::Add(AddOperation {
                    path: replace.path,
                    value: replace.value,
                })
            }
            op => op,
        };
        json_patch::patch(doc, std::slice::from_ref(&op))
            .map_err(|_| Status::json_patch_failed())?;
    }
    Ok(())
}

/// Whether `pointer` names a key its parent, an object, does not have.
fn missing_key_of_object(doc: &Value, pointer: &str) -> bool {
    let Some((parent, key)) = pointer.rsplit_once('/') else {
        return false;
    };
    let key = key.replace("~1", "/").replace("~0", "~");
    doc.pointer(parent)
        .and_then(Value::as_object)
        .is_some_and(|map| !map.contains_key(&key))
}

/// `existing` with `body` applied as a patch of type `ptype`.
fn patched(
    existing: &Value,
    ptype: &PatchType,
    body: &[u8],
    res: &ResourceInfo,
) -> Result<Value, Status> {
    let mut doc = existing.clone();
    match ptype {
        PatchType::Merge => {
            let p: Value = serde_json::from_slice(body)
                .map_err(|e| Status::bad_request(format!("error decoding patch: {e}")))?;
            json_patch::merge(&mut doc, &p);
        }
        PatchType::Json => {
            let p: json_patch::Patch = serde_json::from_slice(body)
                .map_err(|e| Status::bad_request(format!("error decoding patch: {e}")))?;
            json_patch_as_the_server(&mut doc, p)?;
        }
        PatchType::StrategicMerge => {
            if !is_builtin(res) {
                return Err(Status::unsupported_patch());
            }
            let p: Value = serde_json::from_slice(body)
                .map_err(|e| Status::bad_request(format!("error decoding patch: {e}")))?;
            strategic_merge(&mut doc, &p, Shape::of(res));
        }
        PatchType::Apply { .. } => {
            let st = Status::bad_request("server-side apply is not a patch of an existing object");
            return Err(st);
        }
    }
    Ok(doc)
}

/// A manager as a conflict names it: `"m"`, `"m" with subresource "status"`,
/// `"m" using v1` for an Update.
fn conflict_manager(e: &ManagedEntry) -> String {
    let mut who = go_quote(&e.manager);
    if let Some(sub) = e.subresource.as_deref().filter(|s| !s.is_empty()) {
        who.push_str(&format!(" with subresource {}", go_quote(sub)));
    }
    // The manager's identifier has no time: none is printed.
    if e.operation == "Update" {
        who.push_str(&format!(" using {}", e.api_version));
    }
    who
}

/// The 409 of an apply's conflicts (`NewConflictError`): one conflict in
/// the message, or each manager's, by name.
fn conflict_status(res: &ResourceInfo, name: &str, conflicts: &[(FieldPath, String)]) -> Status {
    let causes: Vec<Value> = conflicts
        .iter()
        .map(|(p, who)| {
            json!({"reason": "FieldManagerConflict", "message": format!("conflict with {who}"), "field": path_display(p)})
        })
        .collect();
    let message = if let [(path, who)] = conflicts {
        format!(
            "Apply failed with 1 conflict: conflict with {who}: {}",
            path_display(path)
        )
    } else {
        let mut by_manager: BTreeMap<&str, Vec<String>> = BTreeMap::new();
        for (p, who) in conflicts {
            by_manager
                .entry(who.as_str())
                .or_default()
                .push(path_display(p));
        }
        let lines: Vec<String> = by_manager
            .iter()
            .flat_map(|(who, paths)| {
                std::iter::once(format!("conflicts with {who}:"))
                    .chain(paths.iter().map(|p| format!("- {p}")))
            })
            .collect();
        format!(
            "Apply failed with {} conflicts: {}",
            conflicts.len(),
            lines.join("\n")
        )
    };
    let mut d = Status::details_for(res, name);
    if let Some(m) = d.as_object_mut() {
        m.insert("causes".into(), Value::Array(causes));
    }
    Status {
        code: 409,
        reason: "Conflict".into(),
        message,
        details: Some(d),
    }
}
