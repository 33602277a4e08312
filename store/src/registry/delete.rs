//! Deletion: finalizers, deletionTimestamp, propagation, namespaces.

use serde_json::{Value, json};

use super::registry::Registry;
use crate::apis::apiextensions::customresourcedefinition::is_crd;
use crate::machinery::object::{finalizers, is_deleting, meta_mut, now};
use crate::meta::status::Status;
use crate::meta::types::{DeleteOutcome, Deletion, EventType, Propagation};
use crate::resource::info::ResourceInfo;

impl Registry {
    /// Deletes `name` as the real registry's `Store.Delete` does: an object
    /// with finalizers (or one its propagation gives one: `orphan`,
    /// `foregroundDeletion`), or a Pod bound to a node with a grace period,
    /// is marked (`deletionTimestamp`, `deletionGracePeriodSeconds`, the
    /// generation up) and stays: `Pending`. Otherwise it goes: `Deleted`,
    /// its last state. A dry run answers the same and stores nothing.
    pub(crate) fn delete(
        &mut self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        how: Deletion,
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
        let grace = graceful_period(res, &existing, how.grace_period);
        let mut marked = existing.clone();
        {
            let md = meta_mut(&mut marked);
            // Marking an object deleted is a change its controllers must
            // see: the generation goes up (`markAsDeleting`).
            let generation = md.get("generation").and_then(Value::as_i64).unwrap_or(0);
            if generation > 0 {
                md.insert("generation".into(), json!(generation + 1));
            }
            md.insert("deletionTimestamp".into(), json!(later(grace.unwrap_or(0))));
            // A namespace's own delete sets no grace period.
            if !is_ns {
                md.insert(
                    "deletionGracePeriodSeconds".into(),
                    json!(grace.unwrap_or(0)),
                );
            }
        }
        if is_ns {
            if let Some(m) = marked.as_object_mut() {
                m.insert("status".into(), json!({"phase": "Terminating"}));
            }
            if how.dry_run {
                return Ok(DeleteOutcome::Pending(marked));
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
                let background = Deletion {
                    propagation: Some(Propagation::Background),
                    ..Deletion::default()
                };
                for n in names {
                    let _ = self.delete(&r, Some(name), &n, background, true);
                }
            }
            return Ok(DeleteOutcome::Pending(out));
        }
        if is_crd(res) && !how.dry_run {
            self.remove_crd_objects(&existing);
        }
        let mut fins = finalizers(&existing);
        let propagation = how.propagation.or_else(|| default_propagation(res));
        fins.retain(|f| f != "orphan" && f != "foregroundDeletion");
        match propagation {
            Some(Propagation::Foreground) => fins.push("foregroundDeletion".into()),
            Some(Propagation::Orphan) => fins.push("orphan".into()),
            _ => {}
        }
        let graceful = grace.is_some_and(|g| g > 0);
        if fins.is_empty() && !graceful {
            // Gone at once: a Pod as marked (grace 0), anything else as it was.
            let last = if grace.is_some() { marked } else { existing };
            if how.dry_run {
                return Ok(DeleteOutcome::Deleted(last));
            }
            return Ok(DeleteOutcome::Deleted(self.finish_delete(res, last)));
        }
        if fins != finalizers(&existing) {
            meta_mut(&mut marked).insert("finalizers".into(), json!(fins));
        }
        if how.dry_run {
            return Ok(DeleteOutcome::Pending(marked));
        }
        let out = self.commit(res, EventType::Modified, marked);
        // The PVC protection controller lets a claim that no Pod uses go
        // right after (a claim in use waits, as nothing here releases it
        // later); the answer is the claim as the API server marked it.
        if res.group.is_empty()
            && res.kind == "PersistentVolumeClaim"
            && !self.claim_in_use(&ns, name)
        {
            self.release_claim(res, out.clone());
        }
        Ok(DeleteOutcome::Pending(out))
    }

    /// The PVC protection controller's part: the claim's finalizer goes,
    /// and the claim with it when no other holds it.
    fn release_claim(&mut self, res: &ResourceInfo, mut claim: Value) {
        let mut fins = finalizers(&claim);
        fins.retain(|f| f != PVC_PROTECTION);
        if fins.is_empty() {
            meta_mut(&mut claim).remove("finalizers");
            self.finish_delete(res, claim);
        } else {
            meta_mut(&mut claim).insert("finalizers".into(), json!(fins));
            self.commit(res, EventType::Modified, claim);
        }
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

/// The finalizer the API server puts on every claim.
pub(crate) const PVC_PROTECTION: &str = "kubernetes.io/pvc-protection";

/// A Pod's grace period on delete (its `CheckGracefulDelete`): the one
/// asked, else its `terminationGracePeriodSeconds`; 0 when it is on no
/// node or has ended. `None` for every other kind (no graceful delete).
fn graceful_period(res: &ResourceInfo, pod: &Value, asked: Option<i64>) -> Option<i64> {
    if !(res.group.is_empty() && res.kind == "Pod") {
        return None;
    }
    let mut period = asked.unwrap_or_else(|| {
        pod.pointer("/spec/terminationGracePeriodSeconds")
            .and_then(Value::as_i64)
            .unwrap_or(0)
    });
    let bound = pod
        .pointer("/spec/nodeName")
        .and_then(Value::as_str)
        .is_some_and(|n| !n.is_empty());
    let ended = matches!(
        pod.pointer("/status/phase").and_then(Value::as_str),
        Some("Succeeded" | "Failed")
    );
    if !bound || ended {
        period = 0;
    }
    // A negative period is taken as 1 s.
    Some(if period < 0 { 1 } else { period })
}

/// The kind's default propagation when a DELETE names none: `batch/v1`
/// Jobs and `v1` ReplicationControllers keep their dependents (for
/// backwards compatibility), the rest leave it to the collector.
fn default_propagation(res: &ResourceInfo) -> Option<Propagation> {
    let orphans = (res.group == "batch" && res.version == "v1" && res.kind == "Job")
        || (res.group.is_empty() && res.version == "v1" && res.kind == "ReplicationController");
    orphans.then_some(Propagation::Orphan)
}

/// `seconds` from now, as the API server writes a deletionTimestamp.
fn later(seconds: i64) -> String {
    if seconds == 0 {
        return now();
    }
    let at = chrono::Utc::now() + chrono::Duration::seconds(seconds);
    at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}
