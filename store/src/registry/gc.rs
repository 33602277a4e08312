//! The garbage collector and the namespace and foreground finalizers.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use serde_json::{Value, json};

use super::registry::{ObjKey, Registry};
use crate::fieldmanager::managed::{read_managed, write_managed};
use crate::machinery::object::{finalizers, is_deleting, meta, meta_mut, owner_uids};
use crate::meta::types::{Deletion, EventType, Propagation};

impl Registry {
    /// Runs the garbage collector and the namespace and foreground finalizers
    /// until nothing changes.
    pub(crate) fn collect_garbage(&mut self) {
        loop {
            // One scan: where each uid lives, which uids own something, and
            // the objects the collector may act on (owned or being deleted).
            let mut live_uids: HashMap<String, ((String, String), ObjKey)> = HashMap::new();
            let mut owners_with_dependents: HashSet<String> = HashSet::new();
            let mut candidates: Vec<((String, String), ObjKey)> = Vec::new();
            for (key, m) in self.objects.iter() {
                for (k, o) in m.iter() {
                    if let Some(u) = meta(o, "uid") {
                        live_uids.insert(u, (key.clone(), k.clone()));
                    }
                    let owners = owner_uids(o);
                    if !owners.is_empty() || is_deleting(o) {
                        candidates.push((key.clone(), k.clone()));
                    }
                    owners_with_dependents.extend(owners);
                }
            }
            let mut changed = false;
            for (key, k) in candidates {
                let Some(res) = self.resource_by_key(&key) else {
                    continue;
                };
                // Re-read: an earlier step of this pass may have changed it.
                let Some(o) = self.objects.get(&key).and_then(|m| m.get(&k)).cloned() else {
                    continue;
                };
                let name = meta(&o, "name").unwrap_or_default();
                let ns = meta(&o, "namespace");
                let uid = meta(&o, "uid").unwrap_or_default();
                let owners = owner_uids(&o);
                let owner_objs: Vec<Option<Arc<Value>>> = owners
                    .iter()
                    .map(|u| {
                        live_uids
                            .get(u)
                            .and_then(|(rk, ok)| self.objects.get(rk).and_then(|m| m.get(ok)))
                            .cloned()
                    })
                    .collect();
                // Dependents of an owner that is gone, or is being deleted in the foreground.
                if !owners.is_empty() && !is_deleting(&o) {
                    let gone = owners
                        .iter()
                        .all(|u| self.deleted_uids.contains(u) && !live_uids.contains_key(u));
                    let foreground = owner_objs.iter().flatten().any(|w| {
                        is_deleting(w) && finalizers(w).iter().any(|f| f == "foregroundDeletion")
                    });
                    if gone || foreground {
                        let prop = if foreground {
                            Some(Propagation::Foreground)
                        } else {
                            Some(Propagation::Background)
                        };
                        let how = Deletion {
                            propagation: prop,
                            ..Deletion::default()
                        };
                        if self.delete(&res, ns.as_deref(), &name, how, true).is_ok() {
                            changed = true;
                        }
                        continue;
                    }
                }
                // Orphaning owners: strip the ownerReferences pointing at them.
                let orphaning: Vec<String> = owner_objs
                    .iter()
                    .flatten()
                    .filter(|w| is_deleting(w) && finalizers(w).iter().any(|f| f == "orphan"))
                    .filter_map(|w| meta(w, "uid"))
                    .collect();
                if !orphaning.is_empty() {
                    let mut n = Value::clone(&o);
                    if let Some(refs) = n
                        .pointer_mut("/metadata/ownerReferences")
                        .and_then(Value::as_array_mut)
                    {
                        refs.retain(|r| {
                            !r.get("uid")
                                .and_then(Value::as_str)
                                .is_some_and(|u| orphaning.iter().any(|x| x == u))
                        });
                        if refs.is_empty() {
                            meta_mut(&mut n).remove("ownerReferences");
                        }
                    }
                    let mut entries = read_managed(&n);
                    for e in entries.iter_mut() {
                        e.fields
                            .retain(|p| p.get(1).map(String::as_str) != Some("f:ownerReferences"));
                    }
                    write_managed(&mut n, &entries);
                    self.commit(&res, EventType::Modified, n);
                    changed = true;
                    continue;
                }
                if is_deleting(&o) {
                    let mut fins = finalizers(&o);
                    let before = fins.len();
                    let has_dependents = owners_with_dependents.contains(&uid);
                    fins.retain(|f| match f.as_str() {
                        "foregroundDeletion" | "orphan" => has_dependents,
                        _ => true,
                    });
                    if res.group.is_empty() && res.kind == "Namespace" {
                        changed |= self.finalize_namespace(&res, &o, &fins);
                        continue;
                    }
                    if fins.len() != before {
                        let mut n = Value::clone(&o);
                        if fins.is_empty() {
                            meta_mut(&mut n).remove("finalizers");
                            self.finish_delete(&res, n);
                        } else {
                            meta_mut(&mut n).insert("finalizers".into(), json!(fins));
                            self.commit(&res, EventType::Modified, n);
                        }
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
    }
}
