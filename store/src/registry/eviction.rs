//! A Pod's `eviction` subresource (`EvictionREST.Create` in
//! `pkg/registry/core/pod/storage/eviction.go`): a Pod its budgets may
//! ignore (terminal, pending or being deleted) is deleted at once; another
//! is deleted once the one PodDisruptionBudget that selects it allows a
//! disruption, which the eviction spends (`checkAndDecrement`: the
//! budget's status written by the API server), or answered 429. The Pod
//! deleted gets the `DisruptionTarget` condition first
//! (`addConditionAndDeletePod`).

use serde_json::{Map, Value, json};

use super::registry::Registry;
use super::storage::view;
use crate::apis::core::pod::set_condition as set_pod_condition;
use crate::fieldmanager::managed::read_managed;
use crate::machinery::labels::{Selector, selector_kind, selector_matches};
use crate::machinery::object::{is_deleting, meta, now};
use crate::meta::status::Status;
use crate::meta::types::{Deletion, WriteOptions};
use crate::resource::info::ResourceInfo;

/// The most Pods a budget's `disruptedPods` may list before evictions
/// are refused (`MaxDisruptedPodSize`).
const MAX_DISRUPTED_PODS: usize = 2000;

/// The words of an eviction a budget forbids.
const VIOLATES_BUDGET: &str = "Cannot evict pod as it would violate the pod's disruption budget.";

impl Registry {
    /// Evicts the Pod `name` of `res` in `ns` with the deletion `how` (the
    /// Eviction's DeleteOptions, its dry run the request's too): the
    /// `Status` to answer (`Success`, or the `Failure` of a Pod more than
    /// one budget selects), or why it is refused.
    pub(crate) fn evict(
        &mut self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
        mut how: Deletion,
    ) -> Result<Value, Status> {
        let pod = self
            .find(res, ns, name)
            .cloned()
            .ok_or_else(|| Status::not_found(res, name))?;
        let phase = pod
            .pointer("/status/phase")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let rv = meta(&pod, "resourceVersion");
        // A Pod that already caused its disruption, or none yet
        // (`canIgnorePDB`), goes without its budgets; one not done nor
        // being deleted at the version read (`shouldEnforceResourceVersion`).
        if matches!(phase, "Succeeded" | "Failed" | "Pending") || is_deleting(&pod) {
            let enforce = !matches!(phase, "Succeeded" | "Failed") && !is_deleting(&pod);
            if enforce && how.preconditions.resource_version.is_none() {
                how.preconditions.resource_version = rv;
            }
            self.add_condition_and_delete(res, ns, name, how)?;
            return Ok(success());
        }
        let budgets = self.budgets_of(ns, &pod);
        if budgets.len() > 1 {
            return Ok(json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
                "status": "Failure",
                "message": "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
                "code": 500}));
        }
        if let Some((budgets_res, budget)) = budgets.into_iter().next() {
            let number = |path: &str| budget.pointer(path).and_then(Value::as_i64).unwrap_or(0);
            let always_allow = budget
                .pointer("/spec/unhealthyPodEvictionPolicy")
                .and_then(Value::as_str)
                == Some("AlwaysAllow");
            let (current, desired) = (
                number("/status/currentHealthy"),
                number("/status/desiredHealthy"),
            );
            // An unready Pod the budget does not count goes at the
            // version read, without spending a disruption.
            if !is_ready(&pod) && (always_allow || (current >= desired && desired > 0)) {
                how.preconditions.resource_version = rv;
            } else {
                self.check_and_decrement(&budgets_res, name, budget, how.dry_run)?;
            }
        }
        self.add_condition_and_delete(res, ns, name, how)?;
        Ok(success())
    }

    /// The budgets in `ns` whose selector selects `pod`, with their
    /// resource (`getPodDisruptionBudgets`; an invalid selector selects
    /// nothing).
    fn budgets_of(&self, ns: &str, pod: &Value) -> Vec<(ResourceInfo, Value)> {
        let Some(budgets) = self
            .resources
            .iter()
            .find(|r| r.group == "policy" && r.plural == "poddisruptionbudgets")
            .cloned()
        else {
            return Vec::new();
        };
        let labels = pod.pointer("/metadata/labels");
        let Some(stored) = self.objects.get(&budgets.key()) else {
            return Vec::new();
        };
        stored
            .iter()
            .filter(|((n, _), _)| n == ns)
            .map(|(_, budget)| view(&budgets, budget).into_owned())
            .filter(|budget| {
                let selector = budget.pointer("/spec/selector");
                selector_kind(selector) != Selector::Invalid && selector_matches(selector, labels)
            })
            .map(|budget| (budgets.clone(), budget))
            .collect()
    }

    /// `checkAndDecrement`: the budget observed, its disruptions allowed
    /// not negative and at least one, its disrupted Pods not too many;
    /// then one disruption spent and the Pod listed as disrupted, written
    /// through the budget's status by the API server itself (its loopback
    /// client's manager, `kube-apiserver`), unless a dry run.
    fn check_and_decrement(
        &mut self,
        res: &ResourceInfo,
        pod: &str,
        budget: Value,
        dry_run: bool,
    ) -> Result<(), Status> {
        let name = meta(&budget, "name").unwrap_or_default();
        let number = |path: &str| budget.pointer(path).and_then(Value::as_i64).unwrap_or(0);
        let generation = number("/metadata/generation");
        let observed = number("/status/observedGeneration");
        if observed < generation {
            return Err(too_many_requests(
                &format!("The disruption budget {name} is still being processed by the server."),
                10,
            ));
        }
        let forbidden = |why: &str| Status {
            code: 403,
            reason: "Forbidden".into(),
            message: format!("poddisruptionbudget.policy \"{name}\" is forbidden: {why}"),
            details: Some(json!({"name": name, "group": "policy", "kind": "poddisruptionbudget"})),
        };
        let allowed = number("/status/disruptionsAllowed");
        if allowed < 0 {
            return Err(forbidden("pdb disruptions allowed is negative"));
        }
        let disrupted = budget
            .pointer("/status/disruptedPods")
            .and_then(Value::as_object)
            .map_or(0, Map::len);
        if disrupted > MAX_DISRUPTED_PODS {
            return Err(forbidden(
                "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
            ));
        }
        if allowed == 0 {
            return Err(too_many_requests(&why_no_disruption(&budget, &name), 0));
        }
        if dry_run {
            return Ok(());
        }
        let mut spent = budget.clone();
        let Some(status) = spent.get_mut("status").and_then(Value::as_object_mut) else {
            return Ok(());
        };
        status.insert("disruptionsAllowed".into(), json!(allowed - 1));
        if allowed - 1 == 0 {
            // `UpdateDisruptionAllowedCondition` (`pkg/apis/policy/helper`).
            let condition = json!({"type": "DisruptionAllowed", "status": "False",
                "reason": "InsufficientPods", "message": ""});
            set_condition(status, condition, observed);
        }
        let pods = status.entry("disruptedPods").or_insert_with(|| json!({}));
        if !pods.is_object() {
            *pods = json!({});
        }
        if let Some(pods) = pods.as_object_mut() {
            pods.insert(pod.into(), json!(now()));
        }
        let opts = WriteOptions {
            field_manager: Some("kube-apiserver".into()),
            subresource: Some("status".into()),
            ..WriteOptions::default()
        };
        self.update(res, &budget, spent, &opts, None)?;
        Ok(())
    }

    /// `addConditionAndDeletePod`: unless a dry run, the Pod as stored
    /// (checked against the preconditions) gets the `DisruptionTarget`
    /// condition through the status store, which tracks no managed fields;
    /// then it is deleted with `how` (a resourceVersion precondition moved
    /// to the version that write made).
    fn add_condition_and_delete(
        &mut self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
        mut how: Deletion,
    ) -> Result<(), Status> {
        if !how.dry_run {
            let latest = self
                .find(res, ns, name)
                .cloned()
                .ok_or_else(|| Status::not_found(res, name))?;
            let conflict = |why: String| Status {
                code: 409,
                reason: "Conflict".into(),
                message: format!("Operation cannot be fulfilled on Pod \"{name}\": {why}"),
                details: Some(json!({"name": name, "kind": "Pod"})),
            };
            let uid = meta(&latest, "uid").unwrap_or_default();
            if let Some(want) = how.preconditions.uid.as_deref().filter(|u| !u.is_empty())
                && want != uid
            {
                return Err(conflict(format!(
                    "the UID in the precondition ({want}) does not match the UID in record ({uid}). The object might have been deleted and then recreated"
                )));
            }
            let rv = meta(&latest, "resourceVersion").unwrap_or_default();
            if let Some(want) = how
                .preconditions
                .resource_version
                .as_deref()
                .filter(|v| !v.is_empty())
                && want != rv
            {
                return Err(conflict(format!(
                    "the ResourceVersion in the precondition ({want}) does not match the ResourceVersion in record ({rv}). The object might have been modified"
                )));
            }
            let mut disrupted = latest.clone();
            disruption_target(&mut disrupted);
            let opts = WriteOptions {
                subresource: Some("status".into()),
                ..WriteOptions::default()
            };
            let managed = read_managed(&latest);
            let updated = self.update(res, &latest, disrupted, &opts, Some(managed))?;
            if how.preconditions.resource_version.is_some() {
                how.preconditions.resource_version = meta(&updated, "resourceVersion");
            }
        }
        self.delete(res, Some(ns), name, how, false)?;
        Ok(())
    }
}

/// The answer of an eviction that deleted its Pod.
fn success() -> Value {
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"})
}

/// The 429 of an eviction its budget refuses (`NewTooManyRequests`, with
/// the budget's cause).
fn too_many_requests(cause: &str, retry_after: u64) -> Status {
    let mut details = Map::new();
    details.insert(
        "causes".into(),
        json!([{"reason": "DisruptionBudget", "message": cause}]),
    );
    if retry_after > 0 {
        details.insert("retryAfterSeconds".into(), json!(retry_after));
    }
    Status {
        code: 429,
        reason: "TooManyRequests".into(),
        message: VIOLATES_BUDGET.into(),
        details: Some(Value::Object(details)),
    }
}

/// Why a budget allows no disruption, in `checkAndDecrement`'s words: a
/// failed sync first, then too few healthy Pods, then its condition.
fn why_no_disruption(budget: &Value, name: &str) -> String {
    let condition = budget
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|c| c.iter().find(|c| c["type"] == "DisruptionAllowed"));
    let text = |c: &Value, key: &str| c.get(key).and_then(Value::as_str).unwrap_or("").to_string();
    let failed = condition
        .filter(|c| c["status"] == "False" && !text(c, "message").is_empty())
        .map(|c| (text(c, "reason"), text(c, "message")));
    let number = |path: &str| budget.pointer(path).and_then(Value::as_i64).unwrap_or(0);
    let (current, desired) = (
        number("/status/currentHealthy"),
        number("/status/desiredHealthy"),
    );
    match failed {
        Some((reason, message)) if reason == "SyncFailed" => format!(
            "The disruption budget {name} does not allow evicting pods currently because it failed sync: {message}"
        ),
        _ if current <= desired => format!(
            "The disruption budget {name} needs {desired} healthy pods and has {current} currently"
        ),
        Some((reason, message)) => format!(
            "The disruption budget {name} does not allow evicting pods currently ({reason}): {message}"
        ),
        None => format!("The disruption budget {name} does not allow evicting pods currently"),
    }
}

/// `meta.SetStatusCondition`: `condition` in place of the one of its
/// type (its transition time kept while its status stays), with the
/// budget's observed generation.
fn set_condition(status: &mut Map<String, Value>, mut condition: Value, generation: i64) {
    if let Some(c) = condition.as_object_mut()
        && generation != 0
    {
        c.insert("observedGeneration".into(), json!(generation));
    }
    let conditions = status.entry("conditions").or_insert_with(|| json!([]));
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    let Some(list) = conditions.as_array_mut() else {
        return;
    };
    match list.iter_mut().find(|c| c["type"] == condition["type"]) {
        Some(old) => {
            let since = if old["status"] == condition["status"] {
                old.get("lastTransitionTime").cloned()
            } else {
                None
            };
            condition["lastTransitionTime"] = since.unwrap_or_else(|| json!(now()));
            *old = condition;
        }
        None => {
            condition["lastTransitionTime"] = json!(now());
            list.push(condition);
        }
    }
}

/// Whether a Pod is ready (`IsPodReady`: its `Ready` condition `True`).
fn is_ready(pod: &Value) -> bool {
    pod.pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|c| {
            c.iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        })
}

/// `UpdatePodCondition` with the eviction's `DisruptionTarget`: added, or
/// in place of the one there (its transition time kept while its status
/// stays).
fn disruption_target(pod: &mut Value) {
    set_pod_condition(
        pod,
        json!({"type": "DisruptionTarget", "status": "True",
            "lastProbeTime": null, "lastTransitionTime": now(),
            "reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting"}),
    );
}
