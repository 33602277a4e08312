//! The [`Store`]: objects with Kubernetes semantics, and its read and write API.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::ops::Bound;
use std::sync::{Arc, Mutex, MutexGuard};

use serde_json::{Value, json};

use crate::api::selector::{FieldSelector, LabelSelector, field_labels};
use crate::api::status::Status;
use crate::api::types::{
    DeleteOutcome, EventType, ListOptions, ObjectList, PatchType, Propagation, StoreConfig,
    WriteOptions,
};
use crate::apis::core::service::Held;
use crate::machinery::object::{finalizers, meta, meta_mut};
use crate::meta::{
    arrange, decode_continue, encode_continue, list_key, present, present_checked, present_owned,
};
use crate::resource::builtin::builtin_resources;
use crate::resource::conversion::Converter;
use crate::resource::info::ResourceInfo;
use crate::watch::{HistEvent, Subscription};

pub(crate) type ObjKey = (String, String);

pub(crate) struct Inner {
    pub(crate) config: StoreConfig,
    pub(crate) rv: u64,
    pub(crate) resources: Vec<ResourceInfo>,
    /// Shared with the watch history and its events: a write copies an
    /// object once.
    pub(crate) objects: HashMap<(String, String), BTreeMap<ObjKey, Arc<Value>>>,
    pub(crate) history: VecDeque<HistEvent>,
    pub(crate) history_start: u64,
    pub(crate) subs: Vec<Subscription>,
    pub(crate) next_watch: u64,
    pub(crate) deleted_uids: HashSet<String>,
    /// Converts custom resources between their versions, when installed.
    pub(crate) converter: Option<std::sync::Arc<dyn Converter>>,
    /// The addresses stored Services hold, kept as they are written; read
    /// from the Services when `None` (a restored store).
    pub(crate) services: Option<Held>,
}

/// The in-memory object store. Cheap to clone (an `Arc` inside) and thread-safe.
#[derive(Clone)]
pub struct Store {
    inner: Arc<Mutex<Inner>>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").finish_non_exhaustive()
    }
}

impl Store {
    /// A store with the built-in kinds registered and the namespaces
    /// `default`, `kube-system`, `kube-public` and `kube-node-lease`.
    pub fn new(config: StoreConfig) -> Store {
        let store = Store {
            inner: Arc::new(Mutex::new(Inner {
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
            })),
        };
        store.seed();
        store
    }

    pub(crate) fn seed(&self) {
        let ns = builtin_resources()
            .into_iter()
            .find(|r| r.plural == "namespaces")
            .expect("namespaces is built in");
        for name in ["default", "kube-system", "kube-public", "kube-node-lease"] {
            let opts = WriteOptions {
                field_manager: Some("kube-apiserver".into()),
                ..WriteOptions::default()
            };
            // The store is empty, so creating these cannot fail.
            let _ = self.create(&ns, None, json!({"metadata": {"name": name}}), &opts);
        }
        // The control plane's health, as `kubectl get componentstatuses`
        // shows it (the kind takes no writes: only get and list).
        let statuses = builtin_resources()
            .into_iter()
            .find(|r| r.plural == "componentstatuses")
            .expect("componentstatuses is built in");
        for name in ["scheduler", "controller-manager", "etcd-0"] {
            let status = json!({
                "metadata": {"name": name},
                "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}],
            });
            let _ = self.create(&statuses, None, status, &WriteOptions::default());
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves consistent data (every write
        // is applied at once), so a poisoned lock is still usable.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Forgets every object and every open watch, keeping the resourceVersion
    /// counter moving forward and the registered resources; the history is
    /// compacted so resuming watches get 410. Built-in namespaces are recreated.
    pub fn reset(&self) {
        {
            let mut g = self.lock();
            g.objects.clear();
            g.subs.clear();
            g.history.clear();
            g.resources = builtin_resources();
            g.history_start = g.rv;
            g.deleted_uids.clear();
        }
        self.seed();
    }

    /// The resource serving `kind` in `group`/`version`.
    pub fn resource_for_kind(
        &self,
        group: &str,
        version: &str,
        kind: &str,
    ) -> Option<ResourceInfo> {
        self.lock()
            .resources
            .iter()
            .find(|r| r.group == group && r.version == version && r.kind == kind)
            .cloned()
    }

    /// The resource serving `plural` in `group`/`version`.
    pub fn resource_for_plural(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Option<ResourceInfo> {
        self.lock()
            .resources
            .iter()
            .find(|r| r.group == group && r.version == version && r.plural == plural)
            .cloned()
    }

    /// Whether any resource of `group`/`version` is served.
    pub fn serves_group_version(&self, group: &str, version: &str) -> bool {
        self.lock()
            .resources
            .iter()
            .any(|r| r.group == group && r.version == version)
    }

    /// Every served resource, built-in ones first.
    pub fn resources(&self) -> Vec<ResourceInfo> {
        self.lock().resources.clone()
    }

    /// Serves a resource without a CRD (replacing one with the same
    /// group, version and plural).
    pub fn register(&self, info: ResourceInfo) {
        let mut g = self.lock();
        g.resources.retain(|r| {
            !(r.group == info.group && r.version == info.version && r.plural == info.plural)
        });
        g.resources.push(info);
    }

    /// Serves the resources of one group-version given as its discovery
    /// document (an `APIResourceList`, as `kubectl get --raw
    /// /apis/GROUP/VERSION` prints it): an aggregated API, a kind of
    /// another version, without a CRD. Objects are stored generically,
    /// with the verbs, scope, short names and subresources the document
    /// gives. Returns what is now served.
    pub fn serve_api_resources(&self, document: &Value) -> Result<Vec<ResourceInfo>, String> {
        if document["kind"] != "APIResourceList" {
            return Err(format!(
                "expected an APIResourceList, got kind {}",
                document["kind"]
            ));
        }
        let resources = ResourceInfo::from_discovery(document)?;
        if resources.is_empty() {
            return Err("the APIResourceList lists no resources".into());
        }
        for res in &resources {
            if res.group.is_empty() && res.version != "v1" {
                return Err(format!(
                    "the core group serves v1 only, not {} of {}",
                    res.version, res.kind
                ));
            }
            self.register(res.clone());
        }
        Ok(resources)
    }

    /// The store's current resourceVersion.
    pub fn resource_version(&self) -> String {
        self.lock().rv.to_string()
    }

    /// Whether `name` exists (without reading it).
    pub fn exists(&self, res: &ResourceInfo, namespace: Option<&str>, name: &str) -> bool {
        let g = self.lock();
        let ns = res.namespace_of(namespace);
        g.objects
            .get(&res.key())
            .is_some_and(|m| m.contains_key(&(ns.to_string(), name.to_string())))
    }

    /// Reads one object.
    pub fn get(
        &self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Value, Status> {
        let g = self.lock();
        let ns = res.namespace_of(namespace);
        let object = g
            .objects
            .get(&res.key())
            .and_then(|m| m.get(&(ns.to_string(), name.to_string())))
            .ok_or_else(|| Status::not_found(res, name))?;
        present_checked(res, object)
    }

    /// Lists objects, newest state, sorted by namespace then name.
    pub fn list(&self, res: &ResourceInfo, opts: &ListOptions) -> Result<ObjectList, Status> {
        let labels = LabelSelector::parse(opts.label_selector.as_deref().unwrap_or(""))?;
        let fields = FieldSelector::parse(
            opts.field_selector.as_deref().unwrap_or(""),
            &field_labels(res),
        )?;
        let g = self.lock();
        let (list_rv, start) = match &opts.continue_token {
            Some(tok) if !tok.is_empty() => {
                let (rv, start) = decode_continue(tok)?;
                if rv < 0 || (rv as u64) < g.history_start {
                    return Err(Status::expired(
                        "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
                    ));
                }
                (rv as u64, Some(start))
            }
            _ => (g.rv, None),
        };
        let ns_filter = if res.namespaced {
            opts.namespace.as_deref()
        } else {
            None
        };
        // A range read from where the previous page stopped (or the
        // namespace's first object), like etcd serves a paginated list:
        // a page costs its own objects, not the whole collection.
        let after: Option<ObjKey> = start.map(|s| match s.split_once('/') {
            Some((ns, name)) => (ns.to_string(), name.to_string()),
            None => (String::new(), s),
        });
        let first = ns_filter.map(|ns| (ns.to_string(), String::new()));
        let lower = match (after, first) {
            (Some(after), Some(first)) if first > after => Bound::Included(first),
            (Some(after), _) => Bound::Excluded(after),
            (None, Some(first)) => Bound::Included(first),
            (None, None) => Bound::Unbounded,
        };
        let limit = opts.limit.filter(|l| *l > 0).unwrap_or(usize::MAX);
        // remainingItemCount is only given without selectors (as upstream).
        let count_rest = labels.is_empty() && fields.is_empty();
        let mut page: Vec<Value> = Vec::new();
        let mut last: Option<&ObjKey> = None;
        let mut more = 0u64;
        if let Some(m) = g.objects.get(&res.key()) {
            for (k, o) in m.range((lower, Bound::Unbounded)) {
                if ns_filter.is_some_and(|ns| ns != k.0) {
                    break;
                }
                if count_rest && page.len() >= limit {
                    // Without selectors every object counts: no need to
                    // read the rest.
                    more += 1;
                    continue;
                }
                let seen = res.try_view(o)?;
                if !(labels.matches(&seen) && fields.matches(&seen)) {
                    continue;
                }
                if page.len() < limit {
                    page.push(arrange(res, &seen));
                    last = Some(k);
                } else {
                    more += 1;
                    if !count_rest {
                        break;
                    }
                }
            }
        }
        let (continue_token, remaining) = match last {
            Some(k) if more > 0 => (
                Some(encode_continue(list_rv, &list_key(&k.0, &k.1))),
                count_rest.then_some(more),
            ),
            _ => (None, None),
        };
        Ok(ObjectList {
            items: page,
            resource_version: list_rv.to_string(),
            continue_token,
            remaining_item_count: remaining,
        })
    }

    /// Creates an object. `namespace` (or the object's own) must exist.
    pub fn create(
        &self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        object: Value,
        opts: &WriteOptions,
    ) -> Result<Value, Status> {
        let mut g = self.lock();
        let out = g.create(res, namespace, object, opts)?;
        Ok(present_owned(res, out))
    }

    /// Replaces an object (PUT). A `metadata.resourceVersion` in `object` is a
    /// precondition: a stale one gets 409 Conflict.
    pub fn replace(
        &self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        object: Value,
        opts: &WriteOptions,
    ) -> Result<Value, Status> {
        self.replace_created(res, namespace, name, object, opts)
            .map(|(out, _)| out)
    }

    /// Replaces an object, telling whether the update created it (kinds
    /// that allow it, as Leases do).
    pub fn replace_created(
        &self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        object: Value,
        opts: &WriteOptions,
    ) -> Result<(Value, bool), Status> {
        let mut g = self.lock();
        let ns = res.namespace_of(namespace);
        let existed = g.find(res, ns, name).is_some();
        let out = g.replace(res, namespace, name, object, opts)?;
        Ok((present_owned(res, out), !existed))
    }

    /// Patches an object. Apply creates it when missing and needs
    /// `opts.field_manager` (422 otherwise).
    pub fn patch(
        &self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        patch: &PatchType,
        body: &[u8],
        opts: &WriteOptions,
    ) -> Result<Value, Status> {
        self.patch_created(res, namespace, name, patch, body, opts)
            .map(|(out, _)| out)
    }

    /// Patches an object, telling whether apply created it.
    pub fn patch_created(
        &self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        patch: &PatchType,
        body: &[u8],
        opts: &WriteOptions,
    ) -> Result<(Value, bool), Status> {
        let mut g = self.lock();
        let ns = res.namespace_of(namespace);
        let existed = g.find(res, ns, name).is_some();
        let out = g.patch(res, namespace, name, patch, body, opts)?;
        Ok((present_owned(res, out), !existed))
    }

    /// Deletes an object. With finalizers (or Foreground/Orphan propagation)
    /// the object first gets `deletionTimestamp` and is returned as pending.
    pub fn delete(
        &self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        propagation: Option<Propagation>,
    ) -> Result<DeleteOutcome, Status> {
        let mut g = self.lock();
        let out = g.delete(res, namespace, name, propagation, false)?;
        g.collect_garbage();
        Ok(match out {
            DeleteOutcome::Deleted(o) => DeleteOutcome::Deleted(present_owned(res, o)),
            DeleteOutcome::Pending(o) => DeleteOutcome::Pending(present_owned(res, o)),
        })
    }

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
