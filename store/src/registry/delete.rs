//! Deletion: finalizers, deletionTimestamp, propagation, namespaces.

use serde_json::{Value, json};

use super::registry::Registry;
use crate::apis::apiextensions::customresourcedefinition::is_crd;
use crate::machinery::object::{finalizers, is_deleting, meta_mut, now};
use crate::meta::status::Status;
use crate::meta::types::{DeleteOutcome, EventType, Propagation};
use crate::resource::info::ResourceInfo;

impl Registry {
    pub(crate) fn delete(
        &mut self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        propagation: Option<Propagation>,
        from_gc: bool,
    ) -> Result<DeleteOutcome, Status> {
        let ns = res.namespace_of(namespace).to_string();
        let existing = self
            .find(res, &ns, name)
            .cloned()
            .ok_or_else(|| Status::not_found(res, name))?;
        let is_ns = res.group.is_empty() && res.kind == "Namespace";
        if is_ns && matches!(name, "default" | "kube-system" | "kube-public") && !from_gc {
            return Err(Status {
                code: 403,
                reason: "Forbidden".into(),
                message: format!(
                    "namespaces \"{name}\" is forbidden: this namespace may not be deleted"
                ),
                details: Some(Status::details_for(res, name)),
            });
        }
        if is_deleting(&existing) {
            return Ok(DeleteOutcome::Pending(existing));
        }
        let mut marked = existing.clone();
        {
            let md = meta_mut(&mut marked);
            // Marking an object deleted is a change its controllers must
            // see: the generation goes up (`markAsDeleting`).
            let generation = md.get("generation").and_then(Value::as_i64).unwrap_or(0);
            if generation > 0 {
                md.insert("generation".into(), json!(generation + 1));
            }
            md.insert("deletionTimestamp".into(), json!(now()));
            md.insert("deletionGracePeriodSeconds".into(), json!(0));
        }
        if is_ns {
            if let Some(m) = marked.as_object_mut() {
                m.insert("status".into(), json!({"phase": "Terminating"}));
            }
            let out = self.commit(res, EventType::Modified, marked);
            // Delete the namespace's contents; the namespace goes once it is empty.
            let keys: Vec<(String, String)> = self.objects.keys().cloned().collect();
            for key in keys {
                let Some(r) = self.resource_by_key(&key) else {
                    continue;
                };
                if !r.namespaced {
                    continue;
                }
                let names: Vec<String> = self
                    .objects
                    .get(&key)
                    .map(|m| {
                        m.keys()
                            .filter(|(n, _)| n == name)
                            .map(|(_, n)| n.clone())
                            .collect()
                    })
                    .unwrap_or_default();
                for n in names {
                    let _ = self.delete(&r, Some(name), &n, Some(Propagation::Background), true);
                }
            }
            return Ok(DeleteOutcome::Pending(out));
        }
        if is_crd(res) {
            self.remove_crd_objects(&existing);
        }
        let mut fins = finalizers(&existing);
        // The PVC protection controller lets a claim that no Pod uses go at
        // once (a claim in use waits, as nothing here releases it later).
        if res.group.is_empty()
            && res.kind == "PersistentVolumeClaim"
            && !self.claim_in_use(&ns, name)
        {
            fins.retain(|f| f != "kubernetes.io/pvc-protection");
        }
        match propagation {
            Some(Propagation::Foreground) => fins.push("foregroundDeletion".into()),
            Some(Propagation::Orphan) => fins.push("orphan".into()),
            _ => {}
        }
        if fins.is_empty() {
            return Ok(DeleteOutcome::Deleted(self.finish_delete(res, existing)));
        }
        meta_mut(&mut marked).insert("finalizers".into(), json!(fins));
        let out = self.commit(res, EventType::Modified, marked);
        Ok(DeleteOutcome::Pending(out))
    }

    pub(crate) fn finish_delete(&mut self, res: &ResourceInfo, obj: Value) -> Value {
        if is_crd(res) {
            self.remove_crd_objects(&obj);
            self.unregister_crd(&obj);
        }
        self.commit(res, EventType::Deleted, obj)
    }

    /// Whether a Pod in `namespace` mounts the claim `claim`.
    fn claim_in_use(&self, namespace: &str, claim: &str) -> bool {
        let key = (String::new(), "pods".to_string());
        self.objects.get(&key).is_some_and(|pods| {
            pods.iter()
                .filter(|((ns, _), _)| ns == namespace)
                .any(|(_, pod)| {
                    pod.pointer("/spec/volumes")
                        .and_then(Value::as_array)
                        .is_some_and(|volumes| {
                            volumes.iter().any(|v| {
                                v.pointer("/persistentVolumeClaim/claimName")
                                    .and_then(Value::as_str)
                                    == Some(claim)
                            })
                        })
                })
        })
    }
}
