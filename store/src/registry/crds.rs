//! The resources CRDs add to the registry: registered when a CRD is
//! stored (its objects read anew when its schemas change), removed with
//! their objects when it goes.

use std::sync::Arc;

use serde_json::Value;

use super::registry::Registry;
use crate::apis::apiextensions::customresourcedefinition::resources;
use crate::machinery::object::meta;
use crate::meta::status::Status;
use crate::meta::types::EventType;
use crate::resource::custom::CustomSchemas;
use crate::resource::info::ResourceInfo;

impl Registry {
    pub(crate) fn register_crd(&mut self, crd: &Value, old: Option<&Value>) -> Result<(), Status> {
        let crd_res = self
            .resources
            .iter()
            .find(|r| r.plural == "customresourcedefinitions")
            .cloned()
            .expect("CRDs are built in");
        let name = meta(crd, "name").unwrap_or_default();
        let infos = resources(crd).map_err(|m| {
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
        let schemas = CustomSchemas::of_crd(crd);
        let schemas_changed =
            old.is_some_and(|old| old.pointer("/spec/versions") != crd.pointer("/spec/versions"));
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
                schemas.redecode(Arc::make_mut(object));
            }
        }
        Ok(())
    }

    pub(crate) fn unregister_crd(&mut self, crd: &Value) {
        if let Ok(infos) = resources(crd) {
            for info in infos {
                self.resources
                    .retain(|r| !(r.group == info.group && r.plural == info.plural));
            }
        }
    }

    pub(crate) fn remove_crd_objects(&mut self, crd: &Value) {
        let Ok(infos) = resources(crd) else {
            return;
        };
        let Some(info) = infos.into_iter().next() else {
            return;
        };
        let objs: Vec<Arc<Value>> = self
            .objects
            .get(&info.key())
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default();
        for o in objs {
            self.commit(&info, EventType::Deleted, Arc::unwrap_or_clone(o));
        }
    }
}
