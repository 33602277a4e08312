//! The calls of rekon's contract (`wit/reconciler.wit`) over a store: the
//! one adapter between a module's host calls and the objects, behind the
//! host's `MemoryCluster` (`rekon reconcile`, benchmarks) and the SDK's
//! native test harness. Objects travel as JSON text, as they do between a
//! guest and the host; errors are the [`Status`] a real API server would
//! answer, worded as it words them.
//!
//! The rules every backend applies alike (the permission rule, index
//! keys, the bounds of an Event) are rekon-rules'.

use rekon_rules::index_keys;
use serde_json::{Value, json};

use crate::apis::reviews::answer;
use crate::machinery::object::meta;
use crate::meta::status::Status;
use crate::meta::types::{ListOptions, PatchType, Propagation, WriteOptions};
use crate::resource::info::ResourceInfo;
use crate::store::handle::Store;

pub use crate::meta::decode::decode_object;
pub use rekon_rules::{IndexKeyRef, KindRef, MAX_EVENT_REASON};

/// One object, by kind, namespace and name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TargetRef<'a> {
    /// Its kind.
    pub kind: KindRef<'a>,
    /// Its namespace; `None` for cluster-scoped kinds.
    pub namespace: Option<&'a str>,
    /// Its name.
    pub name: &'a str,
}

/// A patch as a module asks for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallPatch {
    /// JSON merge patch.
    Merge,
    /// JSON patch.
    Json,
    /// Server-side apply: the body is YAML (or JSON), as for a real server.
    Apply {
        /// Take ownership of fields other managers own.
        force: bool,
    },
}

/// The resource of `kind`, or the 404 a real server gives for a kind it
/// does not serve.
pub fn resource(store: &Store, kind: KindRef<'_>) -> Result<ResourceInfo, Status> {
    store
        .resource_for_kind(kind.group, kind.version, kind.kind)
        .ok_or_else(Status::resource_not_found)
}

/// The resource of `kind` if it serves `verb`, else 404 or 405.
fn serving(store: &Store, kind: KindRef<'_>, verb: &str) -> Result<ResourceInfo, Status> {
    let res = resource(store, kind)?;
    if res.serves(verb) {
        Ok(res)
    } else {
        Err(method_not_allowed())
    }
}

/// 405: the resource does not serve this verb.
pub fn method_not_allowed() -> Status {
    Status::new(
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
    )
}

fn write_options(field_manager: &str, status: bool) -> WriteOptions {
    WriteOptions {
        field_manager: Some(field_manager.to_string()),
        subresource: status.then(|| "status".to_string()),
        ..WriteOptions::default()
    }
}

/// Reads one object.
pub fn get(store: &Store, target: TargetRef<'_>) -> Result<String, Status> {
    let res = serving(store, target.kind, "get")?;
    Ok(store.get(&res, target.namespace, target.name)?.to_string())
}

/// Lists objects of a kind (in one namespace), by label selector.
pub fn list(
    store: &Store,
    kind: KindRef<'_>,
    namespace: Option<&str>,
    label_selector: Option<&str>,
) -> Result<Vec<String>, Status> {
    let res = serving(store, kind, "list")?;
    let options = ListOptions {
        namespace: namespace.map(str::to_string),
        label_selector: label_selector.map(str::to_string),
        ..ListOptions::default()
    };
    Ok(store
        .list(&res, &options)?
        .items
        .iter()
        .map(Value::to_string)
        .collect())
}

/// Lists the objects of `kind` whose `key` is `value` (ordered as
/// [`list`]): what `list-by-index` answers, found by a scan.
pub fn list_by_index(
    store: &Store,
    kind: KindRef<'_>,
    key: IndexKeyRef<'_>,
    value: &str,
    namespace: Option<&str>,
) -> Result<Vec<String>, Status> {
    let res = serving(store, kind, "list")?;
    let options = ListOptions {
        namespace: namespace.map(str::to_string),
        ..ListOptions::default()
    };
    Ok(store
        .list(&res, &options)?
        .items
        .iter()
        .filter(|object| index_keys(object, key).iter().any(|k| k == value))
        .map(Value::to_string)
        .collect())
}

/// Creates an object; a kind a real server answers without storing (a
/// review, a binding) is answered the same way.
pub fn create(
    store: &Store,
    kind: KindRef<'_>,
    namespace: Option<&str>,
    body: &str,
    field_manager: &str,
) -> Result<String, Status> {
    let res = serving(store, kind, "create")?;
    if !res.is_stored() {
        return Ok(answer(&res, namespace, body.as_bytes())?.to_string());
    }
    let object = decode_object(body.as_bytes(), &res)?;
    let created = store.create(
        &res,
        namespace,
        object,
        &write_options(field_manager, false),
    )?;
    Ok(created.to_string())
}

/// Replaces an object, or its status subresource.
pub fn replace(
    store: &Store,
    target: TargetRef<'_>,
    body: &str,
    status: bool,
    field_manager: &str,
) -> Result<String, Status> {
    let res = serving(store, target.kind, "update")?;
    let object = decode_object(body.as_bytes(), &res)?;
    let options = write_options(field_manager, status);
    Ok(store
        .replace(&res, target.namespace, target.name, object, &options)?
        .to_string())
}

/// Patches an object, or its status subresource.
pub fn patch(
    store: &Store,
    target: TargetRef<'_>,
    patch: &CallPatch,
    body: &str,
    status: bool,
    field_manager: &str,
) -> Result<String, Status> {
    let res = serving(store, target.kind, "patch")?;
    let kind = match patch {
        CallPatch::Merge => PatchType::Merge,
        CallPatch::Json => PatchType::Json,
        CallPatch::Apply { force } => PatchType::Apply { force: *force },
    };
    let options = write_options(field_manager, status);
    Ok(store
        .patch(
            &res,
            target.namespace,
            target.name,
            &kind,
            body.as_bytes(),
            &options,
        )?
        .to_string())
}

/// Deletes an object.
pub fn delete(
    store: &Store,
    target: TargetRef<'_>,
    propagation: Option<Propagation>,
) -> Result<(), Status> {
    let res = serving(store, target.kind, "delete")?;
    store.delete(&res, target.namespace, target.name, propagation)?;
    Ok(())
}

/// Whether an Event's reason is one a real server takes; if not, the 422
/// every rekon backend answers `record-event` with.
pub fn check_event_reason(reason: &str) -> Result<(), Status> {
    if reason.is_empty() || reason.len() > MAX_EVENT_REASON {
        return Err(Status::new(
            422,
            "Invalid",
            format!(
                "the Event's reason must be 1 to {MAX_EVENT_REASON} characters, not {}",
                reason.len()
            ),
        ));
    }
    Ok(())
}

/// Adds (or replaces) a fixture object, registering its kind when the
/// store does not serve it (namespaced if the object has a namespace), so
/// fixtures need no CustomResourceDefinition. Namespaces it names are
/// created; a `status` given is kept (written through the subresource), so
/// are a `creationTimestamp` and, on an object with finalizers, a
/// `deletionTimestamp` (see [`Store::seed_object`]).
pub fn seed(store: &Store, object: Value) -> Result<Value, Status> {
    let api_version = object["apiVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let kind = object["kind"].as_str().unwrap_or_default().to_string();
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", &api_version));
    let namespace = object
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .map(str::to_string);
    if kind.is_empty() {
        return Err(Status::bad_request("the object has no kind"));
    }
    let res = match store.resource_for_kind(group, version, &kind) {
        Some(res) => res,
        None if kind == "CustomResourceDefinition" => {
            return Err(Status::resource_not_found());
        }
        None => {
            let plural = format!("{}s", kind.to_lowercase());
            let mut info = ResourceInfo::new(group, version, &kind, &plural, namespace.is_some());
            info.status_subresource = true;
            store.register(info.clone());
            info
        }
    };
    if res.namespaced {
        ensure_namespace(store, namespace.as_deref().unwrap_or("default"))?;
    }
    let stored = store.seed_object(object.clone())?;
    match object.get("status").filter(|s| !s.is_null()) {
        Some(status) if res.status_subresource => {
            // Written over what was just stored (its resourceVersion).
            let mut with_status = stored;
            with_status["status"] = status.clone();
            let name = meta(&with_status, "name").unwrap_or_default();
            let ns = res
                .namespaced
                .then(|| namespace.as_deref().unwrap_or("default"));
            store.replace(
                &res,
                ns,
                &name,
                with_status,
                &write_options("fixture", true),
            )
        }
        _ => Ok(stored),
    }
}

/// Creates the namespace `name` if it does not exist.
pub fn ensure_namespace(store: &Store, name: &str) -> Result<(), Status> {
    let res = store
        .resource_for_kind("", "v1", "Namespace")
        .expect("the store serves namespaces");
    if store.get(&res, None, name).is_err() {
        let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
        store.apply_object(ns)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta::types::StoreConfig;

    #[test]
    fn calls_answer_as_the_api_server_does() {
        let store = Store::new(StoreConfig::default());
        let cm = KindRef::new("", "v1", "ConfigMap");
        let target = TargetRef {
            kind: cm,
            namespace: Some("default"),
            name: "c",
        };
        assert_eq!(get(&store, target).unwrap_err().code, 404);
        assert_eq!(
            list(
                &store,
                KindRef::new("example.com", "v1", "Widget"),
                None,
                None
            )
            .unwrap_err()
            .reason,
            "NotFound"
        );
        // An apply body is YAML, as for a real server: a trailing comma is fine.
        let applied = patch(
            &store,
            target,
            &CallPatch::Apply { force: false },
            r#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1",}}"#,
            false,
            "rekon-test",
        )
        .unwrap();
        assert!(applied.contains(r#""a":"1""#), "{applied}");
        let again = create(
            &store,
            cm,
            Some("default"),
            r#"{"metadata": {"name": "c"}}"#,
            "m",
        )
        .unwrap_err();
        assert_eq!((again.code, again.reason.as_str()), (409, "AlreadyExists"));
        let broken = create(&store, cm, Some("default"), "{not json", "m").unwrap_err();
        assert_eq!(broken.code, 400);
        let cs = KindRef::new("", "v1", "ComponentStatus");
        let refused = create(&store, cs, None, r#"{"metadata": {"name": "x"}}"#, "m").unwrap_err();
        assert_eq!(refused.code, 405);
        let review = create(
            &store,
            KindRef::new("authorization.k8s.io", "v1", "SelfSubjectAccessReview"),
            None,
            r#"{"spec": {"resourceAttributes": {"verb": "get", "resource": "pods"}}}"#,
            "m",
        )
        .unwrap();
        assert!(review.contains(r#""allowed":true"#), "{review}");
        assert_eq!(check_event_reason("").unwrap_err().code, 422);
    }
}
