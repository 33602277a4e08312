//! The namespace lifecycle (the `NamespaceLifecycle` admission plugin): no
//! new content in a namespace that is missing or being deleted; a
//! namespace's own delete (`pkg/registry/core/namespace/storage`); and
//! what a cluster's controllers put in each new namespace: the `default`
//! ServiceAccount and the `kube-root-ca.crt` ConfigMap (operators and Pods
//! wait for them).

use serde_json::{Value, json};

use super::registry::Registry;
use crate::fieldmanager::managed::track_update;
use crate::machinery::object::{finalizers, is_deleting, meta, meta_mut, now};
use crate::meta::status::Status;
use crate::meta::types::{DeleteOutcome, Deletion, EventType, Propagation, WriteOptions};
use crate::resource::info::ResourceInfo;

impl Registry {
    pub(crate) fn check_namespace(
        &self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
    ) -> Result<(), Status> {
        if !res.namespaced {
            return Ok(());
        }
        let nsres = self.core_resource("namespaces");
        match self.find(&nsres, "", ns) {
            None => Err(Status::not_found(&nsres, ns)),
            Some(n) if is_deleting(n) => {
                let mut st = Status::new(
                    403,
                    "Forbidden",
                    format!(
                        "{} \"{name}\" is forbidden: unable to create new content in namespace {ns} because it is being terminated",
                        res.qualified_plural()
                    ),
                );
                let mut d = Status::details_for(res, name);
                if let Some(m) = d.as_object_mut() {
                    m.insert(
                        "causes".into(),
                        json!([{"reason": "NamespaceTerminating", "message": format!("namespace {ns} is being terminated"), "field": "metadata.namespace"}]),
                    );
                }
                st.details = Some(d);
                Err(st)
            }
            Some(_) => Ok(()),
        }
    }
}

/// The root CA a namespace's `kube-root-ca.crt` holds: the embedded
/// server's own, a fixed self-signed certificate (`CN=rekon-dev-ca`; no
/// key of it is kept anywhere: nothing verifies with it).
pub(crate) const ROOT_CA: &str = "-----BEGIN CERTIFICATE-----\nMIIBhDCCASugAwIBAgIUGR8ww1CjJw1wBNeGc4m1OVOVQcQwCgYIKoZIzj0EAwIw\nFzEVMBMGA1UEAwwMcmVrb24tZGV2LWNhMCAXDTI2MTEyOTEyNTI0OFoYDzIxMjYx\nMTA1MTI1MjQ4WjAXMRUwEwYDVQQDDAxyZWtvbi1kZXYtY2EwWTATBgcqhkjOPQIB\nBggqhkjOPQMBBwNCAAQbXIgKVFpjZgK4KzXw3XXqz0pBLvbxDVPEcJgasjIIe+pV\nJ3QsUC43xYhL0Up0TbfIaseGe529xwykZDEX7Jaeo1MwUTAdBgNVHQ4EFgQUXsMr\ndGBQoLNSWiaovOSzEDll4ZEwHwYDVR0jBBgwFoAUXsMrdGBQoLNSWiaovOSzEDll\n4ZEwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNHADBEAiB3hI9nn6wdpLYb\n+3Lxydxlz2yQ0mmnmarvePWod8gvLwIgKZQgaubs7SO2ANCvD+6Sd8AOmmvQ7SKb\nFTcMh/yctrY=\n-----END CERTIFICATE-----\n";

/// The description kube-controller-manager's root CA publisher gives it.
const ROOT_CA_DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.";

impl Registry {
    /// What kube-controller-manager puts in a new namespace `ns`: the
    /// `default` ServiceAccount (its service account controller) and the
    /// `kube-root-ca.crt` ConfigMap (its root CA publisher), which
    /// operators and Pods wait for. One made by hand first is kept as it
    /// is.
    pub(crate) fn fill_namespace(&mut self, ns: &str) {
        let opts = WriteOptions {
            field_manager: Some("kube-controller-manager".into()),
            ..WriteOptions::default()
        };
        let account = json!({"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": "default", "namespace": ns}});
        let root_ca = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "kube-root-ca.crt", "namespace": ns,
                "annotations": {"kubernetes.io/description": ROOT_CA_DESCRIPTION}},
            "data": {"ca.crt": ROOT_CA}});
        for (kind, object) in [("ServiceAccount", account), ("ConfigMap", root_ca)] {
            let Some(res) = self
                .resources
                .iter()
                .find(|r| r.group.is_empty() && r.kind == kind)
                .cloned()
            else {
                continue;
            };
            let _ = self.create(&res, Some(ns), object, &opts);
        }
    }
}

impl Registry {
    /// A namespace's DELETE (`REST.Delete` in
    /// `pkg/registry/core/namespace/storage/storage.go`): its preconditions,
    /// in its own words; the namespaces the system keeps refused (the
    /// `NamespaceLifecycle` admission plugin). A first delete marks it
    /// `Terminating`, with the `orphan` or `foregroundDeletion` finalizer
    /// its options ask for, and deletes its contents (the namespace
    /// controller's part, [`Registry::finalize_namespace`] when they are
    /// gone). A later one keeps it while `spec.finalizers` holds it;
    /// `None`: it goes as any object goes (the generic `Store.Delete`).
    pub(super) fn delete_namespace(
        &mut self,
        res: &ResourceInfo,
        existing: Value,
        how: &Deletion,
        from_gc: bool,
    ) -> Result<Option<DeleteOutcome>, Status> {
        let name = meta(&existing, "name").unwrap_or_default();
        let conflict = |what: &str, want: &str, have: &str| Status {
            code: 409,
            reason: "Conflict".into(),
            message: format!(
                "Operation cannot be fulfilled on namespaces \"{name}\": Precondition failed: {what} in precondition: {want}, {what} in object meta: {have}"
            ),
            details: Some(Status::details_for(res, &name)),
        };
        let uid = meta(&existing, "uid").unwrap_or_default();
        if let Some(want) = how.preconditions.uid.as_deref()
            && want != uid
        {
            return Err(conflict("UID", want, &uid));
        }
        let rv = meta(&existing, "resourceVersion").unwrap_or_default();
        if let Some(want) = how.preconditions.resource_version.as_deref()
            && want != rv
        {
            return Err(conflict("ResourceVersion", want, &rv));
        }
        if matches!(name.as_str(), "default" | "kube-system" | "kube-public") && !from_gc {
            return Err(Status {
                code: 403,
                reason: "Forbidden".into(),
                message: format!(
                    "namespaces \"{name}\" is forbidden: this namespace may not be deleted"
                ),
                details: Some(Status::details_for(res, &name)),
            });
        }
        if is_deleting(&existing) {
            // Prior to its final deletion, `spec.finalizers` must be empty.
            if !spec_finalizers(&existing).is_empty() {
                return Ok(Some(DeleteOutcome::Pending(existing)));
            }
            return Ok(None);
        }
        let mut marked = existing;
        meta_mut(&mut marked).insert("deletionTimestamp".into(), json!(now()));
        if let Some(m) = marked.as_object_mut() {
            let status = m.entry("status").or_insert_with(|| json!({}));
            if !status.is_object() {
                *status = json!({});
            }
            if let Some(status) = status.as_object_mut() {
                status.insert("phase".into(), json!("Terminating"));
            }
        }
        let mut fins = finalizers(&marked);
        let had = |f: &str| fins.iter().any(|x| x == f);
        let should_orphan = match (how.orphan_dependents, how.propagation) {
            (Some(orphan), _) => orphan,
            (None, Some(policy)) => policy == Propagation::Orphan,
            (None, None) => had(ORPHAN),
        };
        let should_foreground = match (how.orphan_dependents, how.propagation) {
            (Some(orphan), _) => !orphan,
            (None, Some(policy)) => policy == Propagation::Foreground,
            (None, None) => had(FOREGROUND),
        };
        if had(ORPHAN) != should_orphan || had(FOREGROUND) != should_foreground {
            fins.retain(|f| f != ORPHAN && f != FOREGROUND);
            if should_orphan {
                fins.push(ORPHAN.into());
            }
            if should_foreground {
                fins.push(FOREGROUND.into());
            }
            meta_mut(&mut marked).insert("finalizers".into(), json!(fins));
        }
        if how.dry_run {
            return Ok(Some(DeleteOutcome::Pending(marked)));
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
                        .filter(|(n, _)| *n == name)
                        .map(|(_, n)| n.clone())
                        .collect()
                })
                .unwrap_or_default();
            for n in names {
                let background = Deletion {
                    propagation: Some(Propagation::Background),
                    ..Deletion::default()
                };
                let _ = self.delete(&r, Some(&name), &n, background, true);
            }
        }
        Ok(Some(DeleteOutcome::Pending(out)))
    }

    /// The namespace controller's and the garbage collector's part in a
    /// terminating namespace `ns`, whose metadata finalizers are to be
    /// `fins`: once it holds nothing, the controller's finalize write
    /// takes `kubernetes` out of `spec.finalizers` (the rest kept sorted,
    /// `finalizeNamespace` in `pkg/controller/namespace/deletion`); it goes
    /// when neither kind of finalizer is left
    /// (`ShouldDeleteNamespaceDuringUpdate`). Whether it changed.
    pub(super) fn finalize_namespace(
        &mut self,
        res: &ResourceInfo,
        ns: &Value,
        fins: &[String],
    ) -> bool {
        let name = meta(ns, "name").unwrap_or_default();
        let empty = !self.objects.iter().any(|(k, m)| {
            self.resource_by_key(k).is_some_and(|r| r.namespaced)
                && m.keys().any(|(n, _)| *n == name)
        });
        let mut next = ns.clone();
        if finalizers(ns) != fins {
            if fins.is_empty() {
                meta_mut(&mut next).remove("finalizers");
            } else {
                meta_mut(&mut next).insert("finalizers".into(), json!(fins));
            }
        }
        let spec = spec_finalizers(ns);
        if empty && spec.iter().any(|f| f == KUBERNETES) {
            let mut kept: Vec<String> = spec.into_iter().filter(|f| f != KUBERNETES).collect();
            kept.sort();
            kept.dedup();
            if let Some(spec) = next.get_mut("spec").and_then(Value::as_object_mut) {
                spec.insert("finalizers".into(), json!(kept));
            }
            track_update(
                res,
                Some(ns),
                &mut next,
                "kube-controller-manager",
                Some("finalize"),
            );
        }
        if next == *ns {
            return false;
        }
        if spec_finalizers(&next).is_empty() && fins.is_empty() {
            self.finish_delete(res, next);
        } else {
            self.commit(res, EventType::Modified, next);
        }
        true
    }
}

/// The finalizer the namespace controller removes once a namespace is
/// empty.
const KUBERNETES: &str = "kubernetes";
/// The finalizer that keeps an owner until its dependents are orphaned.
const ORPHAN: &str = "orphan";
/// The finalizer that keeps an owner until its dependents are deleted.
const FOREGROUND: &str = "foregroundDeletion";

/// A namespace's `spec.finalizers`.
fn spec_finalizers(ns: &Value) -> Vec<String> {
    ns.pointer("/spec/finalizers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}
