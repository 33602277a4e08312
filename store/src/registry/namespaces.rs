//! The namespace lifecycle (the `NamespaceLifecycle` admission plugin): no
//! new content in a namespace that is missing or being deleted; and what a
//! cluster's service account controller puts in each new namespace: its
//! `default` ServiceAccount (operators and Pods wait for it).

use serde_json::json;

use super::registry::Registry;
use crate::machinery::object::is_deleting;
use crate::meta::status::Status;
use crate::meta::types::WriteOptions;
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

impl Registry {
    /// What kube-controller-manager puts in a new namespace `ns`: the
    /// `default` ServiceAccount. (Its root CA publisher's
    /// `kube-root-ca.crt` ConfigMap is not made here yet.)
    pub(crate) fn fill_namespace(&mut self, ns: &str) {
        let Some(res) = self
            .resources
            .iter()
            .find(|r| r.group.is_empty() && r.kind == "ServiceAccount")
            .cloned()
        else {
            return;
        };
        let opts = WriteOptions {
            field_manager: Some("kube-controller-manager".into()),
            ..WriteOptions::default()
        };
        let account = json!({"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": "default", "namespace": ns}});
        // There already (created by hand first): kept as it is.
        let _ = self.create(&res, Some(ns), account, &opts);
    }
}
