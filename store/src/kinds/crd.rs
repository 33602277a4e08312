//! CustomResourceDefinitions: the resources they add, their status, their removal.

use crate::prelude::*;

/// The strings of a JSON array (none when absent).
fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Whether `res` is the CustomResourceDefinitions resource.
pub(crate) fn is_crd(res: &ResourceInfo) -> bool {
    res.group == "apiextensions.k8s.io" && res.kind == "CustomResourceDefinition"
}

impl Inner {
    pub(crate) fn crd_resources(crd: &Value) -> Result<Vec<ResourceInfo>, String> {
        let spec = crd.get("spec").ok_or("spec: Required value")?;
        let group = spec
            .get("group")
            .and_then(Value::as_str)
            .ok_or("spec.group: Required value")?;
        let names = spec.get("names").ok_or("spec.names: Required value")?;
        let kind = names
            .get("kind")
            .and_then(Value::as_str)
            .ok_or("spec.names.kind: Required value")?;
        let plural = names
            .get("plural")
            .and_then(Value::as_str)
            .ok_or("spec.names.plural: Required value")?;
        let singular = names
            .get("singular")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| kind.to_ascii_lowercase());
        let short_names: Vec<String> = names
            .get("shortNames")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let namespaced = spec.get("scope").and_then(Value::as_str) != Some("Cluster");
        let storage_version = spec
            .get("versions")
            .and_then(Value::as_array)
            .and_then(|versions| {
                versions
                    .iter()
                    .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
            })
            .and_then(|v| v.get("name"))
            .and_then(Value::as_str)
            .map(str::to_string);
        let versions = spec
            .get("versions")
            .and_then(Value::as_array)
            .ok_or("spec.versions: Required value")?;
        Ok(versions
            .iter()
            .filter(|v| v.get("served").and_then(Value::as_bool) != Some(false))
            .filter_map(|v| {
                let version = v.get("name")?.as_str()?;
                let mut info = ResourceInfo::new(group, version, kind, plural, namespaced);
                info.singular = singular.clone();
                info.short_names = short_names.clone();
                info.categories = strings(names.get("categories"));
                info.storage_version.clone_from(&storage_version);
                info.status_subresource = v.pointer("/subresources/status").is_some();
                if v.pointer("/subresources/scale").is_some() {
                    info.subresources.push(Subresource {
                        name: "scale".into(),
                        kind: "Scale".into(),
                        group: Some("autoscaling".into()),
                        version: Some("v1".into()),
                        verbs: vec!["get".into(), "patch".into(), "update".into()],
                    });
                }
                Some(info)
            })
            .collect())
    }

    pub(crate) fn register_crd(&mut self, crd: &Value, old: Option<&Value>) -> Result<(), Status> {
        let crd_res = self
            .resources
            .iter()
            .find(|r| r.plural == "customresourcedefinitions")
            .cloned()
            .expect("CRDs are built in");
        let name = meta(crd, "name").unwrap_or_default();
        let infos = Inner::crd_resources(crd).map_err(|m| {
            let (field, detail) = m.split_once(": ").unwrap_or((&m, ""));
            Status::invalid(&crd_res, &name, field, "FieldValueRequired", detail)
        })?;
        if let Some(first) = infos.first() {
            let expected = format!("{}.{}", first.plural, first.group);
            if expected != name {
                return Err(Status::invalid(
                    &crd_res,
                    &name,
                    "metadata.name",
                    "FieldValueInvalid",
                    &format!(
                        "Invalid value: \"{name}\": must be spec.names.plural+\".\"+spec.group"
                    ),
                ));
            }
        }
        let schemas = super::custom::CustomSchemas::of_crd(crd);
        let schemas_changed = old.is_some_and(|old| {
            old.pointer("/spec/versions") != crd.pointer("/spec/versions")
        });
        if let Some(old) = old {
            self.unregister_crd(old);
        }
        let key = infos.first().map(ResourceInfo::key);
        for mut info in infos {
            info.custom = Some(schemas.clone());
            self.resources.retain(|r| {
                !(r.group == info.group && r.version == info.version && r.plural == info.plural)
            });
            self.resources.push(info);
        }
        self.apply_converter();
        // The stored objects read anew through the new schemas, as a real
        // server's storage decodes them after its CRD changed.
        if schemas_changed
            && let Some(key) = key
            && let Some(objects) = self.objects.get_mut(&key)
        {
            for object in objects.values_mut() {
                schemas.redecode(object);
            }
        }
        Ok(())
    }

    /// What the CRD strategy does before it validates a CRD: v1's
    /// defaults, the stored versions (the old ones and the new storage
    /// version); then the CRD's own checks, a 422 when they fail.
    pub(crate) fn prepare_crd(
        crd: &mut Value,
        old: Option<&Value>,
        opts: &WriteOptions,
    ) -> Result<(), Status> {
        crate::schema::crd::default_crd(crd);
        let stored = crate::schema::crd::stored_versions(crd, old);
        if let Some(m) = crd.as_object_mut() {
            let status = m.entry("status").or_insert_with(|| json!({}));
            if let Some(status) = status.as_object_mut() {
                status.insert("storedVersions".into(), json!(stored));
            }
        }
        let errors = crate::schema::crd::validate_crd(crd, old);
        if errors.is_empty() {
            for warning in crate::schema::crd::warnings(crd, old) {
                opts.warnings.add(warning);
            }
            return Ok(());
        }
        let name = meta(crd, "name").unwrap_or_default();
        Err(Status::from_field_errors(
            "apiextensions.k8s.io",
            "CustomResourceDefinition",
            &name,
            &errors,
        ))
    }

    /// The status of a CRD just created, before it is established (what
    /// the real server answers a create with).
    pub(crate) fn crd_initial_status(mut crd: Value) -> Value {
        let stored = crate::schema::crd::stored_versions(&crd, None);
        if let Some(m) = crd.as_object_mut() {
            m.insert(
                "status".into(),
                json!({
                    "conditions": null,
                    "acceptedNames": {"plural": "", "kind": ""},
                    "storedVersions": stored,
                }),
            );
        }
        crd
    }

    pub(crate) fn crd_status(&self, mut crd: Value, old: Option<&Value>) -> Value {
        let names = crd
            .pointer("/spec/names")
            .cloned()
            .unwrap_or_else(|| json!({}));
        let mut accepted = names.clone();
        if let Some(m) = accepted.as_object_mut()
            && !m.contains_key("singular")
            && let Some(k) = names.get("kind").and_then(Value::as_str)
        {
            m.insert("singular".into(), json!(k.to_ascii_lowercase()));
        }
        let stored = crate::schema::crd::stored_versions(&crd, old);
        let t = old
            .and_then(|o| o.pointer("/status/conditions/0/lastTransitionTime"))
            .and_then(Value::as_str)
            .map_or_else(now, str::to_string);
        if let Some(m) = crd.as_object_mut() {
            m.insert(
                "status".into(),
                json!({
                    "conditions": [
                        {"type": "NamesAccepted", "status": "True", "lastTransitionTime": t, "reason": "NoConflicts", "message": "no conflicts found"},
                        {"type": "Established", "status": "True", "lastTransitionTime": t, "reason": "InitialNamesAccepted", "message": "the initial names have been accepted"}
                    ],
                    "acceptedNames": accepted,
                    "storedVersions": stored,
                }),
            );
        }
        crd
    }

    pub(crate) fn unregister_crd(&mut self, crd: &Value) {
        if let Ok(infos) = Inner::crd_resources(crd) {
            for info in infos {
                self.resources
                    .retain(|r| !(r.group == info.group && r.plural == info.plural));
            }
        }
    }

    pub(crate) fn remove_crd_objects(&mut self, crd: &Value) {
        let Ok(infos) = Inner::crd_resources(crd) else {
            return;
        };
        let Some(info) = infos.into_iter().next() else {
            return;
        };
        let objs: Vec<Value> = self
            .objects
            .get(&info.key())
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default();
        for o in objs {
            self.commit(&info, EventType::Deleted, o.clone(), Some(o));
        }
    }
}
