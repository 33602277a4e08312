//! Server-side apply: the applied configuration merged into the live
//! object, what the manager no longer applies removed, and the conflicts
//! with other managers.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::registry::Registry;
use super::replace::check_name;
use super::storage::view;
use crate::apis::fields::undeclared;
use crate::fieldmanager::compare::Comparison;
use crate::fieldmanager::fieldpath::{FieldPath, FieldSet};
use crate::fieldmanager::lastapplied::{
    KUBECTL, allowed_conflicts, last_applied, update_last_applied,
};
use crate::fieldmanager::managed::{
    ManagedEntry, drop_unconvertible, ownable, path_display, read_managed, root_type, strip_meta,
    track_update, write_managed,
};
use crate::fieldmanager::versions::{ByVersion, Converter};
use crate::fieldmanager::{compare, fieldpath, merge, set};
use crate::go::strconv::go_quote;
use crate::machinery::object::{meta, meta_mut, now};
use crate::meta::status::Status;
use crate::meta::types::WriteOptions;
use crate::resource::info::ResourceInfo;

impl Registry {
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
        // The field manager takes no managedFields from an applier.
        if config
            .pointer("/metadata/managedFields")
            .is_some_and(|m| !m.is_null())
        {
            return Err(Status::bad_request("metadata.managedFields must be nil"));
        }
        // `checkName`: the configuration names the object of the URL.
        check_name(&config, name)?;
        if let Some(theirs) = meta(&config, "namespace").filter(|n| !n.is_empty() && n != ns)
            && res.namespaced
        {
            return Err(Status::bad_request(if self.find(res, ns, name).is_some() {
                format!(
                    "the namespace of the object ({theirs}) does not match the namespace on the URL ({ns})"
                )
            } else {
                // Created through apply: the create's own check.
                "the namespace of the provided object does not match the namespace sent on the request".to_string()
            }));
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
        let stored = self.find_shared(res, ns, name);
        let existing = stored.as_deref().map(|o| view(res, o));
        // An explicit null in a built-in kind's configuration over a live
        // struct keeps the live one (a Deployment's defaulted
        // `rollingUpdate`), as structured-merge-diff merges it.
        let mut config = config;
        if res.custom.is_none() {
            crate::fieldmanager::omitempty::without_null_structs(
                &res.group,
                &res.version,
                &res.kind,
                &mut config,
                existing.as_deref(),
            );
        }
        let sub = opts.subresource.as_deref();
        let ty = root_type(res);
        let applied = ownable(res, &config, sub);
        // Map and set lists need keys, each given once.
        let untyped = set::check(&applied, ty);
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
        let set = strip_meta(set::field_set(&applied, ty));
        let stub;
        let live: &Value = match &existing {
            Some(existing) => existing,
            None => {
                stub = json!({"metadata": {"name": name}});
                &stub
            }
        };
        let mut entries = read_managed(live);
        drop_unconvertible(res, &mut entries);
        // An object nobody was tracked on (its managedFields reset): what
        // it holds is owned by `before-first-apply`, as the real field
        // manager's first apply records it (`skipNonAppliedManager`).
        if existing.is_some() && entries.is_empty() {
            let mut before = live.clone();
            track_update(res, None, &mut before, "before-first-apply", sub);
            entries = read_managed(&before);
        }
        let api_version = res.api_version();
        let sub_owned = sub.map(str::to_string);
        let is_self = |e: &ManagedEntry| {
            e.manager == manager && e.operation == "Apply" && e.subresource == sub_owned
        };
        // The applied object merged into the live one, as
        // structured-merge-diff merges them (map and set lists item by item).
        let mut merged =
            merge::merge(Some(live), Some(&applied), ty).unwrap_or_else(|| live.clone());
        // What the merge gives is read into the kind's Go type.
        crate::apis::versions::typed_nulls(res, &mut merged);
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
            // What it applied itself, not the fields above them: those
            // stay while the object has others there (`prune`'s
            // `addBackDanglingItems`), as metadata does for its
            // resourceVersion when the last finalizer goes.
            let owned = set::with_named_fields(&owned, ty);
            let gone: FieldSet = last.difference(&owned).cloned().collect();
            if !gone.is_empty() {
                merged = merge::remove(&merged, &gone, ty);
            }
        }
        // Conflicts: another manager owns a field this apply adds or changes.
        let unchanged = merged == *live;
        let changes = if unchanged {
            Comparison::default()
        } else {
            compare::compare(
                Some(&ownable(res, live, sub)),
                Some(&ownable(res, &merged, sub)),
                ty,
            )
        };
        // Each manager sees the change in its own version (another
        // version's is compared on the objects converted to it); an apply
        // that changes nothing changes nothing in any version.
        let convert = |o: &Value, to: &str| crate::apis::versions::convert(res, o, to);
        let convert = (!unchanged).then_some(&convert as Converter);
        let mut by_version = ByVersion::new(res, live, &merged, sub, convert, changes);
        let mut conflicts: Vec<(FieldPath, String)> = Vec::new();
        let mut conflicting: Vec<FieldSet> = Vec::new();
        for e in entries.iter() {
            let theirs: FieldSet = if is_self(e) {
                FieldSet::new()
            } else {
                let seen = by_version.of(&e.api_version);
                e.fields.intersection(&seen.touched).cloned().collect()
            };
            let who = conflict_manager(e);
            for p in fieldpath::ordered(&theirs) {
                conflicts.push((p, who.clone()));
            }
            conflicting.push(theirs);
        }
        if !conflicts.is_empty() && !force {
            // kubectl's first server-side apply may take over what its
            // client-side apply set (`lastappliedmanager.go`): forced when
            // that is all that conflicts, the rest refused otherwise.
            let allowed = (manager == KUBECTL)
                .then(|| client_side_applied(res, live))
                .flatten();
            let refused: Vec<(FieldPath, String)> = conflicts
                .iter()
                .filter(|(p, _)| !allowed.as_ref().is_some_and(|a| a.contains(p)))
                .cloned()
                .collect();
            if !refused.is_empty() {
                return Err(conflict_status(&refused));
            }
        }
        // Forced: the others lose what conflicted; everyone loses what is gone.
        for (e, lost) in entries.iter_mut().zip(&conflicting) {
            if !is_self(e) {
                let seen = by_version.of(&e.api_version);
                e.fields
                    .retain(|p| !lost.contains(p) && !seen.removed.contains(p));
            }
        }
        // An apply that changes nothing keeps its entry's time (a first
        // one gets none), as the real field manager's times go.
        let time = if unchanged {
            entries
                .iter()
                .find(|e| is_self(e))
                .map(|e| e.time.clone())
                .unwrap_or_default()
        } else {
            now()
        };
        let mut live = merged;
        // The client-side apply annotation follows what kubectl applied
        // (`lastappliedupdater.go`), after the field manager's own work.
        update_last_applied(manager, &mut live, &config);
        entries.retain(|e| !is_self(e));
        entries.push(ManagedEntry {
            manager: manager.into(),
            operation: "Apply".into(),
            api_version,
            time,
            subresource: sub_owned,
            fields: set,
        });
        // The uid the configuration names is the object's: it is not
        // reset (structured-merge-diff merges it as any field), so another
        // than the stored one is refused by the update's checks, and one
        // naming an object that does not exist is a conflict (the
        // patcher's `applyPatch` in `endpoints/handlers/patch.go`).
        let sent_uid = meta(&config, "uid").filter(|u| !u.is_empty());
        match existing {
            None => {
                if sub == Some("status") {
                    return Err(Status::not_found(res, name));
                }
                if let Some(uid) = sent_uid {
                    let why = format!(
                        "uid mismatch: the provided object specified uid {uid}, and no existing object was found"
                    );
                    return Err(Status::conflict_because(res, name, &why));
                }
                let mut live = live;
                write_managed(&mut live, &entries);
                self.create_tracked(res, Some(ns).filter(|n| !n.is_empty()), live, opts, true)
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
                if let Some(uid) = sent_uid {
                    meta_mut(&mut live).insert("uid".into(), json!(uid));
                }
                self.decode_body(res, &mut live, Some(&existing), opts)?;
                self.update(res, &existing, live, opts, Some(entries))
            }
        }
    }
}

/// The fields kubectl's client-side apply annotation on `live` lets its
/// server-side apply take over, when the annotation holds a configuration
/// of the object's type (`allowedConflictsFromLastApplied`).
fn client_side_applied(res: &ResourceInfo, live: &Value) -> Option<FieldSet> {
    let applied = last_applied(live)?;
    let undeclared = match &res.custom {
        Some(custom) => custom.undeclared(&res.version, &applied),
        None => undeclared(res, &applied),
    };
    if !undeclared.is_empty() {
        return None;
    }
    allowed_conflicts(res, live, &applied)
}

/// A manager as a conflict names it: `"m"`, `"m" with subresource "status"`,
/// `"m" using v1` for an Update.
pub(super) fn conflict_manager(e: &ManagedEntry) -> String {
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
/// the message, or each manager's, by name; its details name no object.
pub(super) fn conflict_status(conflicts: &[(FieldPath, String)]) -> Status {
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
    // `NewApplyConflict`: the causes, and nothing of the object.
    Status {
        code: 409,
        reason: "Conflict".into(),
        message,
        details: Some(json!({ "causes": causes })),
    }
}
