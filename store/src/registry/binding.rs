//! A Pod's `binding` subresource and the namespace's `bindings`
//! (`BindingREST` and `LegacyBindingREST` in
//! `pkg/registry/core/pod/storage/storage.go`): the Binding checked, then
//! the stored Pod written straight through the storage (no strategy, no
//! field manager: its managedFields and generation stay), with the
//! Binding's uid and resourceVersion as preconditions.

use serde_json::{Value, json};

use super::registry::Registry;
use crate::apis::core::pod::{bind, validate_binding};
use crate::machinery::field::aggregate;
use crate::machinery::object::{meta, text_at};
use crate::meta::status::Status;
use crate::meta::types::EventType;
use crate::resource::info::ResourceInfo;

impl Registry {
    /// Binds the Pod `name` of `pods` in `ns` as `binding` (a v1 Binding)
    /// asks; a dry run checks and stores nothing.
    pub(crate) fn bind(
        &mut self,
        pods: &ResourceInfo,
        ns: &str,
        name: &str,
        binding: &Value,
        dry_run: bool,
    ) -> Result<(), Status> {
        // `ValidatePodBinding`'s errors are not a Status: the handler
        // answers them as an unknown 500.
        let errors = validate_binding(binding);
        if !errors.is_empty() {
            return Err(Status::unknown(aggregate(&errors)));
        }
        let mut pod = self
            .find(pods, ns, name)
            .cloned()
            .ok_or_else(|| Status::not_found(pods, name))?;
        let stored = |key: &str| meta(&pod, key).unwrap_or_default();
        for (key, what) in [("uid", "UID"), ("resourceVersion", "ResourceVersion")] {
            let wanted = text_at(binding, &format!("/metadata/{key}"));
            if !wanted.is_empty() && wanted != stored(key) {
                return Err(Status::storage_precondition_failed(
                    pods,
                    ns,
                    name,
                    what,
                    wanted,
                    &stored(key),
                ));
            }
        }
        let node = text_at(binding, "/target/name");
        let empty = json!({});
        let given = |key: &str| {
            binding
                .pointer(&format!("/metadata/{key}"))
                .unwrap_or(&empty)
        };
        bind(&mut pod, node, given("annotations"), given("labels")).map_err(|why| Status {
            code: 409,
            reason: "Conflict".into(),
            message: format!("Operation cannot be fulfilled on pods/binding \"{name}\": {why}"),
            details: Some(json!({"name": name, "kind": "pods/binding"})),
        })?;
        if !dry_run {
            self.commit(pods, EventType::Modified, pod);
        }
        Ok(())
    }
}
