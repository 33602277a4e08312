//! Fixtures: objects created or replaced whatever is there, resolving
//! their kind, with the fields a test may need kept as given.

use serde_json::{Value, json};

use super::handle::Store;
use crate::machinery::object::{finalizers, meta, meta_mut};
use crate::meta::status::Status;
use crate::meta::types::{EventType, WriteOptions};
use crate::registry::present::{present, present_owned};

impl Store {
    /// Creates `object`, or replaces it if it exists, resolving its
    /// apiVersion and kind. A CustomResourceDefinition makes its kind served.
    pub fn apply_object(&self, object: Value) -> Result<Value, Status> {
        let api_version = object
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g, v),
            None => ("", api_version),
        };
        let res = self
            .resource_for_kind(group, version, kind)
            .ok_or_else(|| {
                Status::new(
                    404,
                    "NotFound",
                    format!("no matches for kind \"{kind}\" in version \"{api_version}\""),
                )
            })?;
        let name = meta(&object, "name").unwrap_or_default();
        let ns = if res.namespaced {
            Some(meta(&object, "namespace").unwrap_or_else(|| "default".into()))
        } else {
            None
        };
        let opts = WriteOptions {
            field_manager: Some("rekon".into()),
            ..WriteOptions::default()
        };
        let mut g = self.lock();
        let nsr = ns.clone().unwrap_or_default();
        let current = (!name.is_empty())
            .then(|| g.find(&res, &nsr, &name))
            .flatten()
            .and_then(|o| o.pointer("/metadata/resourceVersion").cloned());
        let out = if let Some(current) = current {
            // Replaces whatever is there: the current resourceVersion (a
            // custom resource allows no unconditional update).
            let mut object = object;
            meta_mut(&mut object).insert("resourceVersion".into(), current);
            g.replace(&res, ns.as_deref(), &name, object, &opts)?
        } else {
            // A fixture may carry the resourceVersion it had elsewhere:
            // storage refuses to create with one.
            let mut object = object;
            meta_mut(&mut object).remove("resourceVersion");
            g.create(&res, ns.as_deref(), object, &opts)?
        };
        Ok(present(&res, &out))
    }

    /// Adds or replaces `object` as a fixture: as [`Store::apply_object`],
    /// but the fields the server owns that a test may need as given are
    /// kept: `metadata.creationTimestamp` (for age-based logic) and
    /// `metadata.deletionTimestamp` when the object still has finalizers
    /// (an object being deleted).
    pub fn seed_object(&self, object: Value) -> Result<Value, Status> {
        let created = object.pointer("/metadata/creationTimestamp").cloned();
        let deleting = object
            .pointer("/metadata/deletionTimestamp")
            .cloned()
            .filter(|_| !finalizers(&object).is_empty());
        let stored = self.apply_object(object)?;
        if created.is_none() && deleting.is_none() {
            return Ok(stored);
        }
        let api_version = stored["apiVersion"].as_str().unwrap_or_default();
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let kind = stored["kind"].as_str().unwrap_or_default();
        let res = self
            .resource_for_kind(group, version, kind)
            .ok_or_else(Status::resource_not_found)?;
        let ns = meta(&stored, "namespace").unwrap_or_default();
        let name = meta(&stored, "name").unwrap_or_default();
        let mut g = self.lock();
        let old = g
            .find(&res, &ns, &name)
            .ok_or_else(|| Status::not_found(&res, &name))?;
        let mut updated = old.clone();
        let md = meta_mut(&mut updated);
        if let Some(created) = created {
            md.insert("creationTimestamp".into(), created);
        }
        if let Some(deleting) = deleting {
            md.insert("deletionTimestamp".into(), deleting);
            md.insert("deletionGracePeriodSeconds".into(), json!(0));
        }
        let out = g.commit(&res, EventType::Modified, updated);
        Ok(present_owned(&res, out))
    }
}
