//! Deletion as the generic registry's `Store.Delete` goes
//! (`staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go`):
//! `BeforeDelete` (`graceful.rs`), the finalizers the garbage collector's
//! policies add (`deletionFinalizersForGarbageCollection`), the update that
//! marks an object deleted (`updateForGracefulDeletionAndFinalizers`), or
//! the object gone at once.

use serde_json::{Value, json};

use super::graceful::{BeforeDelete, before_delete, mark_as_deleting};
use super::registry::Registry;
use crate::apis::apiextensions::customresourcedefinition::is_crd;
use crate::apis::core::persistentvolume::PV_PROTECTION;
use crate::apis::deletion::{GcPolicy, default_gc_policy};
use crate::machinery::object::{finalizers, meta_mut};
use crate::meta::status::Status;
use crate::meta::types::{DeleteOutcome, Deletion, EventType, Propagation};
use crate::resource::info::ResourceInfo;

/// The finalizer that keeps an owner until its dependents are orphaned.
const ORPHAN: &str = "orphan";
/// The finalizer that keeps an owner until its dependents are deleted.
const FOREGROUND: &str = "foregroundDeletion";

impl Registry {
    /// Deletes `name` as the real registry's `Store.Delete` does: an object
    /// with finalizers (or one its propagation gives one: `orphan`,
    /// `foregroundDeletion`), or a Pod bound to a node with a grace period,
    /// is marked (`deletionTimestamp`, `deletionGracePeriodSeconds`, the
    /// generation up) and stays: `Pending`. Otherwise it goes: `Deleted`,
    /// its last state. An object already being deleted may take another
    /// policy's finalizer, or (a Pod) a shorter grace period. A dry run
    /// answers the same and stores nothing.
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
        if res.group.is_empty()
            && res.kind == "Namespace"
            && let Some(outcome) = self.delete_namespace(res, existing.clone(), &how, from_gc)?
        {
            return Ok(outcome);
        }
        let graceful = match before_delete(res, &existing, &how)? {
            // A graceful delete under way: nothing changes (`finalizeDelete`).
            BeforeDelete::Pending => return Ok(DeleteOutcome::Pending(existing)),
            BeforeDelete::Graceful(marked, period) => Some((marked, period)),
            BeforeDelete::Now => None,
        };
        if is_crd(res) && !how.dry_run {
            self.remove_crd_objects(&existing);
        }
        let new_finalizers = deletion_finalizers(res, &existing, how.propagation);
        if graceful.is_none() && finalizers(&existing).is_empty() && new_finalizers.is_none() {
            return Ok(self.delete_now(res, existing, how.dry_run));
        }
        // `updateForGracefulDeletionAndFinalizers`.
        let (mut marked, period) = match graceful {
            Some((marked, period)) => (marked, Some(period)),
            None => (existing.clone(), None),
        };
        if let Some(fins) = new_finalizers {
            if fins.is_empty() {
                meta_mut(&mut marked).remove("finalizers");
            } else {
                meta_mut(&mut marked).insert("finalizers".into(), json!(fins));
            }
        }
        let pending_finalizers = !finalizers(&marked).is_empty();
        match period {
            None if pending_finalizers => mark_as_deleting(&mut marked),
            // A dry run answers what the aborted update left in its answer:
            // a built-in kind's empty object.
            None if how.dry_run => {
                return Ok(DeleteOutcome::Deleted(
                    empty_object(res).unwrap_or(existing),
                ));
            }
            // Nothing holds it: it goes as it is stored.
            None => return Ok(self.delete_now(res, existing, how.dry_run)),
            // Gone at once, as marked: a Pod with no grace period.
            Some(0) if !pending_finalizers => {
                return Ok(self.delete_now(res, marked, how.dry_run));
            }
            Some(_) => {}
        }
        if how.dry_run {
            return Ok(DeleteOutcome::Pending(marked));
        }
        // An update that changes nothing stores nothing.
        if marked == existing {
            return Ok(DeleteOutcome::Pending(existing));
        }
        let out = self.commit(res, EventType::Modified, marked);
        // The PVC protection controller lets a claim that no Pod uses go
        // right after (a claim in use waits, as nothing here releases it
        // later); the answer is the claim as the API server marked it.
        if res.group.is_empty()
            && res.kind == "PersistentVolumeClaim"
            && !self.claim_in_use(&ns, name)
        {
            self.release(res, out.clone(), PVC_PROTECTION);
        }
        // So does the PV protection controller with a volume no claim is
        // bound to.
        if res.group.is_empty()
            && res.kind == "PersistentVolume"
            && out.pointer("/status/phase").and_then(Value::as_str) != Some("Bound")
        {
            self.release(res, out.clone(), PV_PROTECTION);
        }
        Ok(DeleteOutcome::Pending(out))
    }

    /// The object gone (`Storage.Delete`): its last state, or the state
    /// it would go in on a dry run.
    fn delete_now(&mut self, res: &ResourceInfo, last: Value, dry_run: bool) -> DeleteOutcome {
        if dry_run {
            return DeleteOutcome::Deleted(last);
        }
        DeleteOutcome::Deleted(self.finish_delete(res, last))
    }

    /// A protection controller's part: its finalizer goes, and the claim
    /// or volume with it when no other holds it.
    fn release(&mut self, res: &ResourceInfo, mut claim: Value, protection: &str) {
        let mut fins = finalizers(&claim);
        fins.retain(|f| f != protection);
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

/// The finalizers `obj` is to have once deleted with `propagation`, when
/// they are another set than its own (`deletionFinalizersForGarbageCollection`
/// in `store.go`): `orphan` when its dependents are to be orphaned,
/// `foregroundDeletion` when they go first (`shouldOrphanDependents`,
/// `shouldDeleteDependents`: the policy asked, else the one its
/// finalizers already say, else its kind's default; neither for a kind
/// without garbage collection).
fn deletion_finalizers(
    res: &ResourceInfo,
    obj: &Value,
    propagation: Option<Propagation>,
) -> Option<Vec<String>> {
    let own = finalizers(obj);
    let policy = default_gc_policy(res);
    let (orphan, foreground) = match propagation {
        _ if policy == GcPolicy::Unsupported => (false, false),
        Some(Propagation::Orphan) => (true, false),
        Some(Propagation::Foreground) => (false, true),
        Some(Propagation::Background) => (false, false),
        // The first of the two finalizers it has decides both.
        None => match own.iter().find(|f| *f == ORPHAN || *f == FOREGROUND) {
            Some(f) => (f == ORPHAN, f == FOREGROUND),
            None => (policy == GcPolicy::OrphanDependents, false),
        },
    };
    let mut fins: Vec<String> = own
        .iter()
        .filter(|f| *f != ORPHAN && *f != FOREGROUND)
        .cloned()
        .collect();
    if orphan {
        fins.push(ORPHAN.into());
    }
    if foreground {
        fins.push(FOREGROUND.into());
    }
    let same = |a: &[String], b: &[String]| a.iter().all(|f| b.contains(f));
    (!(same(&fins, &own) && same(&own, &fins))).then_some(fins)
}

/// A built-in kind's empty object as the real server encodes it (the
/// answer of a delete whose finalizer update found it could go at once,
/// on a dry run: `e.NewFunc()`, never filled); `None` for other kinds.
fn empty_object(res: &ResourceInfo) -> Option<Value> {
    let zero =
        crate::fieldmanager::typed::Ty::builtin(&res.group, &res.version, &res.kind).zero()?;
    let mut object = json!({"kind": res.kind, "apiVersion": res.api_version(), "metadata": {}});
    if let (Some(object), Value::Object(zero)) = (object.as_object_mut(), zero) {
        for (key, value) in zero {
            object.entry(key).or_insert(value);
        }
    }
    Some(object)
}
