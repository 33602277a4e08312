//! Compaction, snapshots and restore (`rekon dev --state`).

use crate::prelude::*;

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
            .map(|r| {
                json!({"group": r.group, "version": r.version, "kind": r.kind, "plural": r.plural,
                       "singular": r.singular, "shortNames": r.short_names, "namespaced": r.namespaced,
                       "statusSubresource": r.status_subresource})
            })
            .collect();
        let mut objects = Vec::new();
        for ((group, plural), m) in g.objects.iter() {
            for o in m.values() {
                objects.push(json!({"group": group, "plural": plural, "object": o}));
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
                let text = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("").to_string();
                let info = ResourceInfo {
                    group: text("group"),
                    version: text("version"),
                    kind: text("kind"),
                    plural: text("plural"),
                    singular: text("singular"),
                    short_names: r
                        .get("shortNames")
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(Value::as_str)
                                .map(str::to_string)
                                .collect()
                        })
                        .unwrap_or_default(),
                    namespaced: r.get("namespaced").and_then(Value::as_bool).unwrap_or(true),
                    status_subresource: r
                        .get("statusSubresource")
                        .and_then(Value::as_bool)
                        .unwrap_or(false),
                };
                g.resources.retain(|x| {
                    !(x.group == info.group && x.version == info.version && x.plural == info.plural)
                });
                g.resources.push(info);
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
                    .insert((ns, name), o);
            }
            let rv = snapshot
                .get("resourceVersion")
                .and_then(Value::as_u64)
                .ok_or_else(|| bad("resourceVersion"))?;
            g.rv = g.rv.max(rv);
            g.history.clear();
            g.history_start = g.rv;
        }
        Ok(store)
    }

    /// The oldest resourceVersion a watch can still resume from.
    pub fn oldest_resource_version(&self) -> String {
        self.lock().history_start.to_string()
    }
}
