//! Compaction, snapshots and restore (`rekon dev --state`).

use std::sync::Arc;

use serde_json::{Value, json};

use super::handle::Store;
use crate::machinery::object::{meta, strings};
use crate::meta::status::Status;
use crate::meta::types::StoreConfig;
use crate::resource::builtin::builtin_resources;
use crate::resource::info::ResourceInfo;

impl Store {
    /// Forgets the watch history: any watch resuming from a version before
    /// now gets 410 Expired, and so do older continue tokens.
    pub fn compact(&self) {
        let mut g = self.lock();
        g.history.clear();
        g.history_start = g.rv;
    }

    /// Every object and served resource as one JSON document, for
    /// [`Store::restore`] (`rekon dev` keeps its state across restarts this way).
    pub fn snapshot(&self) -> Value {
        let g = self.lock();
        let builtin = builtin_resources();
        let resources: Vec<Value> = g
            .resources
            .iter()
            .filter(|r| !builtin.contains(r))
            .map(|r| json!({"groupVersion": r.api_version(), "resources": r.to_discovery()}))
            .collect();
        let mut objects = Vec::new();
        for ((group, plural), m) in g.objects.iter() {
            for o in m.values() {
                objects.push(json!({"group": group, "plural": plural, "object": &**o}));
            }
        }
        json!({"resourceVersion": g.rv, "resources": resources, "objects": objects})
    }

    /// A store holding the state of a [`Store::snapshot`]. Watches start
    /// after the snapshot's resourceVersion (older ones get 410).
    pub fn restore(config: StoreConfig, snapshot: &Value) -> Result<Store, Status> {
        let bad = |what: &str| Status::bad_request(format!("invalid store snapshot: {what}"));
        let store = Store::new(config);
        {
            let mut g = store.lock();
            g.objects.clear();
            for r in snapshot
                .get("resources")
                .and_then(Value::as_array)
                .ok_or_else(|| bad("resources"))?
            {
                for info in resource_of_snapshot(r).map_err(|e| bad(&e))? {
                    g.resources.retain(|x| {
                        !(x.group == info.group
                            && x.version == info.version
                            && x.plural == info.plural)
                    });
                    g.resources.push(info);
                }
            }
            for e in snapshot
                .get("objects")
                .and_then(Value::as_array)
                .ok_or_else(|| bad("objects"))?
            {
                let group = e
                    .get("group")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                let plural = e
                    .get("plural")
                    .and_then(Value::as_str)
                    .ok_or_else(|| bad("plural"))?
                    .to_string();
                let o = e.get("object").cloned().ok_or_else(|| bad("object"))?;
                let ns = meta(&o, "namespace").unwrap_or_default();
                let name = meta(&o, "name").ok_or_else(|| bad("name"))?;
                g.objects
                    .entry((group, plural))
                    .or_default()
                    .insert((ns, name), Arc::new(o));
            }
            let rv = snapshot
                .get("resourceVersion")
                .and_then(Value::as_u64)
                .ok_or_else(|| bad("resourceVersion"))?;
            g.rv = g.rv.max(rv);
            g.history.clear();
            g.history_start = g.rv;
            g.services = None;
        }
        Ok(store)
    }

    /// The oldest resourceVersion a watch can still resume from.
    pub fn oldest_resource_version(&self) -> String {
        self.lock().history_start.to_string()
    }
}

/// The resources of one snapshot entry: a discovery document, or (older
/// snapshots) one resource's fields.
fn resource_of_snapshot(entry: &Value) -> Result<Vec<ResourceInfo>, String> {
    if entry.get("groupVersion").is_some() {
        return ResourceInfo::from_discovery(entry);
    }
    let text = |k: &str| {
        entry
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let mut info = ResourceInfo::new(
        &text("group"),
        &text("version"),
        &text("kind"),
        &text("plural"),
        entry
            .get("namespaced")
            .and_then(Value::as_bool)
            .unwrap_or(true),
    );
    info.singular = text("singular");
    info.short_names = strings(entry.get("shortNames"));
    info.status_subresource = entry
        .get("statusSubresource")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    Ok(vec![info])
}
