//! Patches (merge, JSON, strategic merge) and server-side apply.

use crate::prelude::*;

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
        let ns = if res.namespaced {
            namespace.unwrap_or("").to_string()
        } else {
            String::new()
        };
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
            let config: Value = serde_yaml::from_slice(body)
                .map_err(|e| Status::bad_request(format!("error decoding YAML: {e}")))?;
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
        let existing = self
            .find(res, ns, name)
            .map(|o| res.view(o).into_owned())
            .ok_or_else(|| Status::not_found(res, name))?;
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
                json_patch::patch(&mut doc, &p).map_err(|_| Status::json_patch_failed())?;
            }
            PatchType::StrategicMerge => {
                if !is_builtin(res) {
                    return Err(Status::unsupported_patch());
                }
                let p: Value = serde_json::from_slice(body)
                    .map_err(|e| Status::bad_request(format!("error decoding patch: {e}")))?;
                patch::strategic_merge(&mut doc, &p);
            }
            PatchType::Apply { .. } => {
                let st =
                    Status::bad_request("server-side apply is not a patch of an existing object");
                return Err(st);
            }
        }
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
        let patched = doc.clone();
        self.decode_custom(res, &mut doc, opts).map_err(|status| {
            if status.code != 400 {
                return status;
            }
            let why = status
                .message
                .split_once("strict decoding error: ")
                .map_or(status.message.as_str(), |(_, why)| why);
            Status::from_field_errors(
                "",
                "",
                "",
                &[crate::field::FieldError::invalid(
                    &crate::field::Path::new(["patch"]),
                    crate::field::go_json(&patched).as_str(),
                    format!("strict decoding error: {why}"),
                )],
            )
        })?;
        self.update(res, existing, doc, opts, None)
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
        // Fields the schema does not know cannot be typed for apply.
        if let Some(custom) = self.custom(res)
            && let Some(unknown) = custom.undeclared(&res.version, &config).first()
        {
            return Err(Status {
                code: 500,
                reason: String::new(),
                message: format!(
                    "failed to create typed patch object (/{name}; {}, Kind={}): .{unknown}: field not declared in schema",
                    res.api_version(),
                    res.kind
                ),
                details: None,
            });
        }
        let sub = opts.subresource.as_deref();
        let applied = ownable(res, &config, sub);
        let existing = self.find(res, ns, name).map(|o| res.view(o).into_owned());
        let mut live = existing
            .clone()
            .unwrap_or_else(|| json!({"metadata": {"name": name}}));
        let mut entries = read_managed(&live);
        let api_version = res.api_version();
        // Conflicts: another manager owns a field this apply sets to a different value.
        let mut conflicts: Vec<(FieldPath, String)> = Vec::new();
        for e in entries.iter() {
            if e.manager == manager && e.operation == "Apply" {
                continue;
            }
            for p in applied.iter() {
                if e.fields.contains(p) && patch::get_path(&live, p) != patch::get_path(&config, p)
                {
                    let who = if e.operation == "Apply" {
                        format!("conflict with \"{}\"", e.manager)
                    } else {
                        format!("conflict with \"{}\" using {}", e.manager, e.api_version)
                    };
                    conflicts.push((p.clone(), who));
                }
            }
        }
        if !conflicts.is_empty() && !force {
            let causes: Vec<Value> = conflicts
                .iter()
                .map(|(p, who)| json!({"reason": "FieldManagerConflict", "message": who, "field": path_display(p)}))
                .collect();
            let message = if conflicts.len() == 1 {
                format!(
                    "Apply failed with 1 conflict: {}: {}",
                    conflicts[0].1,
                    path_display(&conflicts[0].0)
                )
            } else {
                let lines: Vec<String> = conflicts
                    .iter()
                    .map(|(p, w)| format!("- {w}: {}", path_display(p)))
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
            return Err(Status {
                code: 409,
                reason: "Conflict".into(),
                message,
                details: Some(d),
            });
        }
        if force {
            for e in entries.iter_mut() {
                if !(e.manager == manager && e.operation == "Apply") {
                    e.fields.retain(|p| !applied.contains(p));
                }
            }
        }
        // Fields this manager applied before and no longer applies, owned by nobody else, go away.
        let previous: BTreeSet<FieldPath> = entries
            .iter()
            .filter(|e| {
                e.manager == manager && e.operation == "Apply" && e.subresource.as_deref() == sub
            })
            .flat_map(|e| e.fields.iter().cloned())
            .collect();
        for p in previous.difference(&applied) {
            let others = entries
                .iter()
                .any(|e| !(e.manager == manager && e.operation == "Apply") && e.fields.contains(p));
            if !others {
                patch::remove_path(&mut live, p);
            }
        }
        for p in applied.iter() {
            if let Some(v) = patch::get_path(&config, p) {
                patch::set_path(&mut live, p, v.clone());
            }
        }
        let sub_owned = sub.map(str::to_string);
        entries.retain(|e| {
            !(e.manager == manager && e.operation == "Apply" && e.subresource == sub_owned)
        });
        entries.push(ManagedEntry {
            manager: manager.into(),
            operation: "Apply".into(),
            api_version,
            time: now(),
            subresource: sub_owned,
            fields: applied,
        });
        match existing {
            None => {
                if sub == Some("status") {
                    return Err(Status::not_found(res, name));
                }
                write_managed(&mut live, &entries);
                self.create(res, Some(ns).filter(|n| !n.is_empty()), live, opts)
            }
            Some(existing) => {
                if let Some(rv) = meta(&config, "resourceVersion")
                    && Some(&rv) != meta(&existing, "resourceVersion").as_ref()
                {
                    return Err(Status::conflict(res, name));
                }
                self.update(res, existing, live, opts, Some(entries))
            }
        }
    }
}
