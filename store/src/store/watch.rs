//! Watches: opened from a resourceVersion (or 410 Gone when it is too
//! old), fed to a callback or a channel, bookmarked, closed.

use std::sync::Arc;

use serde_json::{Map, json};

use super::handle::Store;
use super::paging::parse_rv;
use crate::apis::selectors::field_labels;
use crate::meta::selector::{FieldSelector, LabelSelector};
use crate::meta::status::Status;
use crate::meta::types::{EventType, ListOptions, WatchEvent, WatchId, WatchSink};
use crate::registry::watch::{HistEvent, Subscription};
use crate::resource::info::ResourceInfo;

impl Store {
    /// Opens a watch on `res`, filtered by `opts`' namespace and selectors
    /// (limit and continue are ignored).
    ///
    /// With `resource_version` `None` or `"0"`, the sink first gets a
    /// synthetic ADDED event per matching object, then live events. With a
    /// version, it gets every event after it, then live events; a version
    /// older than the kept history is a 410 Expired error. The sink is called
    /// with the store locked: it must not block or call back into the store.
    pub fn watch(
        &self,
        res: &ResourceInfo,
        opts: &ListOptions,
        resource_version: Option<&str>,
        sink: WatchSink,
    ) -> Result<WatchId, Status> {
        let labels = LabelSelector::parse(opts.label_selector.as_deref().unwrap_or(""))?;
        let fields = FieldSelector::parse_for(
            opts.field_selector.as_deref().unwrap_or(""),
            &field_labels(res),
        )?;
        let shard = self.shard_selector(opts)?;
        let mut g = self.lock();
        let namespace = if res.namespaced {
            opts.namespace.clone()
        } else {
            None
        };
        let id = g.next_watch;
        g.next_watch += 1;
        let mut sub = Subscription {
            id,
            res: res.clone(),
            namespace,
            labels,
            fields,
            shard,
            min_rv: 0,
            sink,
        };
        match resource_version.filter(|v| !v.is_empty() && *v != "0") {
            None => {
                sub.min_rv = g.rv;
                if let Some(m) = g.objects.get(&res.key()) {
                    for o in m.values() {
                        let ev = HistEvent {
                            rv: g.rv + 1,
                            key: res.key(),
                            event_type: EventType::Added,
                            object: o.clone(),
                            old: None,
                        };
                        if !sub.deliver(&ev) {
                            return Ok(WatchId(id));
                        }
                    }
                }
            }
            Some(v) => {
                let rv = parse_rv(v)?;
                if rv < g.history_start {
                    return Err(Status::expired(format!(
                        "too old resource version: {rv} ({})",
                        g.history_start + 1
                    )));
                }
                sub.min_rv = rv;
                for ev in g.history.iter() {
                    if !sub.deliver(ev) {
                        return Ok(WatchId(id));
                    }
                }
                sub.min_rv = rv.max(g.rv);
            }
        }
        g.subs.push(sub);
        Ok(WatchId(id))
    }

    /// Like [`Store::watch`], delivering into a standard channel.
    pub fn watch_channel(
        &self,
        res: &ResourceInfo,
        opts: &ListOptions,
        resource_version: Option<&str>,
    ) -> Result<(WatchId, std::sync::mpsc::Receiver<WatchEvent>), Status> {
        let (tx, rx) = std::sync::mpsc::channel();
        let id = self.watch(
            res,
            opts,
            resource_version,
            Box::new(move |ev| tx.send(ev).is_ok()),
        )?;
        Ok((id, rx))
    }

    /// Closes one watch: its sink is dropped.
    pub fn unwatch(&self, id: WatchId) {
        self.lock().subs.retain(|s| s.id != id.0);
    }

    /// Closes every open watch (their sinks are dropped, so streams end).
    pub fn drop_watches(&self) {
        let subs = std::mem::take(&mut self.lock().subs);
        drop(subs);
    }

    /// Sends a BOOKMARK with the current resourceVersion to one watch, in
    /// order with its other events. Returns `false` when the watch is closed.
    /// `initial_events_end` adds the `k8s.io/initial-events-end` annotation.
    pub fn watch_bookmark(&self, id: WatchId, initial_events_end: bool) -> bool {
        let mut g = self.lock();
        let rv = g.rv;
        let Some(pos) = g.subs.iter().position(|s| s.id == id.0) else {
            return false;
        };
        let sub = &mut g.subs[pos];
        let mut md = Map::new();
        md.insert("resourceVersion".into(), json!(rv.to_string()));
        if initial_events_end {
            md.insert(
                "annotations".into(),
                json!({"k8s.io/initial-events-end": "true"}),
            );
        }
        let object =
            json!({"kind": sub.res.kind, "apiVersion": sub.res.api_version(), "metadata": md});
        let open = (sub.sink)(WatchEvent {
            event_type: EventType::Bookmark,
            object: Arc::new(object),
        });
        if !open {
            g.subs.remove(pos);
        }
        open
    }

    /// How many watches are open.
    pub fn watch_count(&self) -> usize {
        self.lock().subs.len()
    }
}
