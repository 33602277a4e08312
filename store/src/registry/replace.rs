//! Replace (PUT), and the object's identity in a write's body: the
//! handler's checks of the namespace and name it names against the
//! request's, then the storage's precondition on the uid it names.

use serde_json::{Value, json};

use super::preconditions::{object_version, precondition};
use super::registry::Registry;
use super::storage::view;
use crate::apis::updates::allow_create_on_update;
use crate::machinery::object::meta;
use crate::meta::status::Status;
use crate::meta::types::WriteOptions;
use crate::resource::info::ResourceInfo;

impl Registry {
    /// PUT of `name`: the object replaced, or created where the kind
    /// allows it (`AllowCreateOnUpdate`).
    pub(crate) fn replace(
        &mut self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        mut obj: Value,
        opts: &WriteOptions,
    ) -> Result<Value, Status> {
        self.decode_request(res, &mut obj, opts)?;
        // The handler checks the namespace, then the name
        // (`handlers/update.go`).
        let ns = self.resolve_ns(res, namespace, &obj, name)?;
        check_name(&obj, name)?;
        let stored = self.find_shared(res, &ns, name);
        let existing = stored.as_deref().map(|o| view(res, o));
        // The uid the body names is the storage's precondition
        // (`defaultUpdatedObjectInfo.Preconditions` in
        // `registry/rest/update.go`), checked before anything else against
        // what is stored: an object that does not exist has no uid
        // (`Preconditions.Check` in `storage/interfaces.go`), so a PUT that
        // would create one naming a uid is refused and creates nothing.
        let stored_uid = existing
            .as_ref()
            .and_then(|o| meta(o, "uid"))
            .unwrap_or_default();
        if let Some(sent) = meta(&obj, "uid").filter(|u| !u.is_empty())
            && sent != stored_uid
        {
            return Err(Status::uid_precondition_failed(
                res,
                &ns,
                name,
                &sent,
                &stored_uid,
            ));
        }
        // Read next, whether the object exists or not
        // (`ObjectResourceVersion`).
        let version = object_version(meta(&obj, "resourceVersion").as_deref())?;
        let Some(existing) = existing else {
            // Some kinds are created by an update of a missing object
            // (`AllowCreateOnUpdate`), whatever version it names.
            if opts.subresource.is_none() && allow_create_on_update(res) {
                if let Some(md) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
                    md.insert("name".into(), json!(name));
                    md.remove("resourceVersion");
                }
                return self.create(res, Some(ns.as_str()).filter(|n| !n.is_empty()), obj, opts);
            }
            return Err(Status::not_found(res, name));
        };
        precondition(res, name, version, &existing)?;
        self.update(res, &existing, obj, opts, None)
    }
}

/// The handler's `checkName` (`endpoints/handlers/rest.go`): the body of
/// a PUT, a patched object or an applied configuration names the object
/// of the URL, and names one (`ContextBasedNaming.ObjectName`: "name must
/// be provided").
pub(crate) fn check_name(obj: &Value, name: &str) -> Result<(), Status> {
    match meta(obj, "name").filter(|n| !n.is_empty()) {
        None => Err(Status::bad_request(format!(
            "the name of the object ({name} based on URL) was undeterminable: name must be provided"
        ))),
        Some(n) if n != name => Err(Status::bad_request(format!(
            "the name of the object ({n}) does not match the name on the URL ({name})"
        ))),
        Some(_) => Ok(()),
    }
}

/// `EnsureObjectNamespaceMatchesRequestNamespace` (`registry/rest/meta.go`)
/// on a patched object: a namespace it names must be the request's (none
/// for a cluster-scoped resource or a Namespace, whose namespace is
/// cleared).
pub(crate) fn check_patched_namespace(
    res: &ResourceInfo,
    ns: &str,
    obj: &Value,
) -> Result<(), Status> {
    let expected = if res.group.is_empty() && res.plural == "namespaces" {
        ""
    } else {
        ns
    };
    match meta(obj, "namespace").filter(|n| !n.is_empty()) {
        Some(theirs) if !expected.is_empty() && theirs != expected => Err(Status::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        )),
        _ => Ok(()),
    }
}
