//! The namespace lifecycle (the `NamespaceLifecycle` admission plugin): no
//! new content in a namespace that is missing or being deleted; a
//! namespace's own delete (`pkg/registry/core/namespace/storage`); and
//! what a cluster's controllers put in each new namespace: the `default`
//! ServiceAccount and the `kube-root-ca.crt` ConfigMap (operators and Pods
//! wait for them).

use serde_json::{Value, json};

use super::registry::Registry;
use crate::machinery::object::{is_deleting, meta, now};
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
        let nsres = self
            .resources
            .iter()
            .find(|r| r.group.is_empty() && r.plural == "namespaces")
            .cloned()
            .expect("namespaces is built in");
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
    /// A namespace's DELETE (`pkg/registry/core/namespace/storage`'s
    /// `Delete`): its preconditions, in its own words; the namespace the
    /// system keeps refused; a first delete marks it `Terminating` and
    /// deletes its contents (the namespace controller's part), and it goes
    /// once they are gone (`collect_garbage`).
    pub(super) fn delete_namespace(
        &mut self,
        res: &ResourceInfo,
        existing: Value,
        how: Deletion,
        from_gc: bool,
    ) -> Result<DeleteOutcome, Status> {
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
            return Ok(DeleteOutcome::Pending(existing));
        }
        let mut marked = existing;
        if let Some(m) = marked.as_object_mut() {
            if let Some(md) = m.get_mut("metadata").and_then(Value::as_object_mut) {
                md.insert("deletionTimestamp".into(), json!(now()));
            }
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
        Ok(DeleteOutcome::Pending(out))
    }
}
