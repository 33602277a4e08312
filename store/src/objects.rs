//! The write path's core: finding objects, committing them with a new resourceVersion, and validation.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::api::status::Status;
use crate::api::types::EventType;
use crate::apis::apiextensions::customresourcedefinition::is_crd;
use crate::apis::builtin::rules;
use crate::apis::core::service::is_service;
use crate::apis::events::event_stored;
use crate::machinery::names::{
    dns1123_label_message, is_dns1123_label, is_dns1123_subdomain, subdomain_regex_error,
};
use crate::machinery::object::{meta, meta_mut};
use crate::meta::{canonical_bytes, omit_empty_metadata, put_in_order};
use crate::resource::info::ResourceInfo;
use crate::store::Inner;
use crate::watch::HistEvent;

impl Inner {
    pub(crate) fn find(&self, res: &ResourceInfo, ns: &str, name: &str) -> Option<&Value> {
        self.objects
            .get(&res.key())?
            .get(&(ns.to_string(), name.to_string()))
            .map(Arc::as_ref)
    }

    /// The stored object, shared (reading it while the store changes).
    pub(crate) fn find_shared(
        &self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
    ) -> Option<Arc<Value>> {
        self.objects
            .get(&res.key())?
            .get(&(ns.to_string(), name.to_string()))
            .cloned()
    }

    pub(crate) fn resource_by_key(&self, key: &(String, String)) -> Option<ResourceInfo> {
        self.resources
            .iter()
            .find(|r| r.group == key.0 && r.plural == key.1)
            .cloned()
    }

    /// Stores `obj` (or removes it for Deleted) at a new resourceVersion and
    /// notifies watches, whose events carry the object it replaces. Returns
    /// the object as stored.
    pub(crate) fn commit(
        &mut self,
        res: &ResourceInfo,
        event_type: EventType,
        obj: Value,
    ) -> Value {
        let mut obj = if res.is_events_api() {
            event_stored(obj)
        } else {
            res.stored(obj)
        };
        canonical_bytes(res, &mut obj);
        omit_empty_metadata(&mut obj);
        self.rv += 1;
        let rv = self.rv;
        meta_mut(&mut obj).insert("resourceVersion".into(), json!(rv.to_string()));
        put_in_order(&mut obj);
        let ns = meta(&obj, "namespace").unwrap_or_default();
        let name = meta(&obj, "name").unwrap_or_default();
        let obj = Arc::new(obj);
        let map = self.objects.entry(res.key()).or_default();
        let previous = if event_type == EventType::Deleted {
            if let Some(uid) = meta(&obj, "uid") {
                self.deleted_uids.insert(uid);
            }
            map.remove(&(ns, name))
        } else {
            map.insert((ns, name), obj.clone())
        };
        if is_service(res)
            && let Some(held) = &mut self.services
        {
            if let Some(previous) = &previous {
                held.remove(previous);
            }
            if event_type != EventType::Deleted {
                held.add(&obj);
            }
        }
        let ev = HistEvent {
            rv,
            key: res.key(),
            event_type,
            object: obj.clone(),
            old: previous,
        };
        self.subs.retain_mut(|s| s.deliver(&ev));
        self.history.push_back(ev);
        while self.history.len() > self.config.history_limit.max(1) {
            if let Some(old) = self.history.pop_front() {
                self.history_start = old.rv;
            }
        }
        Arc::unwrap_or_clone(obj)
    }

    pub(crate) fn resolve_ns(
        &self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        obj: &Value,
        name: &str,
    ) -> Result<String, Status> {
        if !res.namespaced {
            return Ok(String::new());
        }
        let from_obj = meta(obj, "namespace").filter(|s| !s.is_empty());
        match (namespace, from_obj) {
            (Some(a), Some(b)) if a != b => Err(Status::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            )),
            (Some(a), _) => Ok(a.to_string()),
            (None, Some(b)) => Ok(b),
            (None, None) => Err(Status::bad_request(format!(
                "an empty namespace may not be set during creation of {} \"{name}\"",
                res.qualified_plural()
            ))),
        }
    }
}

impl Inner {
    pub(crate) fn validate(
        &self,
        res: &ResourceInfo,
        obj: &Value,
        name: &str,
    ) -> Result<(), Status> {
        // A CRD's metadata is checked with the rest of it (`validate_crd`),
        // its errors all listed.
        let own_checks = is_crd(res) || rules(res).is_some();
        let ok = own_checks
            || if res.kind == "Namespace" && res.group.is_empty() {
                is_dns1123_label(name).is_empty()
            } else {
                is_dns1123_subdomain(name).is_empty()
            };
        if !ok {
            let rule = if res.kind == "Namespace" {
                dns1123_label_message()
            } else {
                subdomain_regex_error()
            };
            return Err(Status::invalid(
                res,
                name,
                "metadata.name",
                "FieldValueInvalid",
                &format!("Invalid value: \"{name}\": {rule}"),
            ));
        }
        if let Some(labels) = obj.pointer("/metadata/labels").and_then(Value::as_object) {
            for (k, v) in labels {
                if !v.is_string() {
                    return Err(Status::bad_request(format!(
                        "{} in version \"{}\" cannot be handled as a {}: json: cannot unmarshal {} into Go struct field ObjectMeta.metadata.labels of type string",
                        res.kind, res.version, res.kind, v
                    )));
                }
                let vs = v.as_str().unwrap_or("");
                let key_name = k.rsplit('/').next().unwrap_or("");
                let valid_value = vs.len() <= 63
                    && vs
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
                    && (vs.is_empty()
                        || (vs.starts_with(|c: char| c.is_ascii_alphanumeric())
                            && vs.ends_with(|c: char| c.is_ascii_alphanumeric())));
                if !own_checks && (key_name.is_empty() || !valid_value) {
                    return Err(Status::invalid(
                        res,
                        name,
                        "metadata.labels",
                        "FieldValueInvalid",
                        &format!(
                            "Invalid value: \"{vs}\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}
