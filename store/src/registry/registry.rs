//! The registry's state and the commit of a change: every object at a new
//! resourceVersion, the watches told.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Arc;

use serde_json::{Value, json};

use super::present::put_in_order;
use super::storage::{canonical_bytes, omit_empty_metadata, stored};
use super::watch::{HistEvent, Subscription};
use crate::apis::core::service::{Held, is_service};
use crate::apis::events::event_stored;
use crate::machinery::object::{meta, meta_mut};
use crate::meta::status::Status;
use crate::meta::types::{EventType, StoreConfig};
use crate::resource::builtin::builtin_resources;
use crate::resource::conversion::Converter;
use crate::resource::info::ResourceInfo;

/// Where an object is kept in its resource: its namespace (empty for a
/// cluster-scoped object) and name.
pub(crate) type ObjKey = (String, String);

/// The registry: every object, by resource and key, at one resourceVersion
/// counter; the resources served; the history of changes and the watches
/// they are delivered to. The [`crate::Store`] handle holds it behind a lock.
pub(crate) struct Registry {
    /// The store's settings.
    pub(crate) config: StoreConfig,
    /// The last resourceVersion given.
    pub(crate) rv: u64,
    /// Every resource served: built-in ones, then those CRDs and documents
    /// added.
    pub(crate) resources: Vec<ResourceInfo>,
    /// Shared with the watch history and its events: a write copies an
    /// object once.
    pub(crate) objects: HashMap<(String, String), BTreeMap<ObjKey, Arc<Value>>>,
    /// The changes kept for watches to resume from.
    pub(crate) history: VecDeque<HistEvent>,
    /// The resourceVersion the kept history starts after (older ones get
    /// 410 Gone).
    pub(crate) history_start: u64,
    /// The open watches.
    pub(crate) subs: Vec<Subscription>,
    /// The id the next watch gets.
    pub(crate) next_watch: u64,
    /// The uids of deleted objects (what the garbage collector looks for).
    pub(crate) deleted_uids: HashSet<String>,
    /// Converts custom resources between their versions, when installed.
    pub(crate) converter: Option<std::sync::Arc<dyn Converter>>,
    /// The addresses stored Services hold, kept as they are written; read
    /// from the Services when `None` (a restored store).
    pub(crate) services: Option<Held>,
}

impl Registry {
    /// An empty registry serving the built-in resources.
    pub(crate) fn new(config: StoreConfig) -> Registry {
        Registry {
            config,
            rv: 0,
            resources: builtin_resources(),
            objects: HashMap::new(),
            history: VecDeque::new(),
            history_start: 0,
            subs: Vec::new(),
            next_watch: 1,
            deleted_uids: HashSet::new(),
            converter: None,
            services: None,
        }
    }

    /// Forgets every object and every open watch, keeping the
    /// resourceVersion counter moving forward; the history is compacted so
    /// resuming watches get 410, and only the built-in resources are served.
    pub(crate) fn reset(&mut self) {
        self.objects.clear();
        self.subs.clear();
        self.history.clear();
        self.resources = builtin_resources();
        self.history_start = self.rv;
        self.deleted_uids.clear();
    }
}

impl Registry {
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

    /// The core (`v1`) resource `plural`, which every registry serves.
    pub(crate) fn core_resource(&self, plural: &str) -> ResourceInfo {
        self.resources
            .iter()
            .find(|r| r.group.is_empty() && r.plural == plural)
            .cloned()
            .unwrap_or_else(|| panic!("{plural} is built in"))
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
            stored(res, obj)
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
