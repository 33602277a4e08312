//! Typed helpers over the raw calls: k8s-openapi types in and out for
//! built-in kinds, `serde_json::Value` plus a [`Gvk`] for custom kinds.
//!
//! Errors are [`ApiError`]s as the API server reported them. When the SDK
//! itself cannot encode or decode an object, the error has code 0 and
//! reason `DecodeError`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::{ApiError, EventType, Gvk, Level, ObjectRef, PatchType, Propagation, raw};

fn decode<T: DeserializeOwned>(json: &str) -> Result<T, ApiError> {
    serde_json::from_str(json).map_err(|e| ApiError::new(0, "DecodeError", e.to_string()))
}

fn encode<T: Serialize>(value: &T) -> Result<String, ApiError> {
    serde_json::to_string(value).map_err(|e| ApiError::new(0, "DecodeError", e.to_string()))
}

fn not_found_is_none<T>(r: Result<T, ApiError>) -> Result<Option<T>, ApiError> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e),
    }
}

// ----- built-in kinds, typed -----

/// Reads one object of kind `K` from the cache; `None` if it does not exist.
pub fn get<K: k8s_openapi::Resource + DeserializeOwned>(
    namespace: Option<&str>,
    name: &str,
) -> Result<Option<K>, ApiError> {
    get_as(&Gvk::of::<K>(), namespace, name)
}

/// Lists objects of kind `K` in `namespace` (`None`: all namespaces),
/// optionally filtered by a label selector.
pub fn list<K: k8s_openapi::Resource + DeserializeOwned>(
    namespace: Option<&str>,
    label_selector: Option<&str>,
) -> Result<Vec<K>, ApiError> {
    list_as(&Gvk::of::<K>(), namespace, label_selector)
}

/// Creates `object`; returns it as created.
pub fn create<K>(object: &K) -> Result<K, ApiError>
where
    K: k8s_openapi::Resource
        + k8s_openapi::Metadata<Ty = ObjectMeta>
        + Serialize
        + DeserializeOwned,
{
    let ns = object.metadata().namespace.as_deref();
    decode(&raw::create(&Gvk::of::<K>(), ns, &encode(object)?)?)
}

/// Server-side applies `object` (it must carry `metadata.name`, and
/// `metadata.namespace` for namespaced kinds) with the module's field
/// manager; `force` takes ownership of fields other managers own.
/// Returns the object after the apply.
pub fn apply<K>(object: &K, force: bool) -> Result<K, ApiError>
where
    K: k8s_openapi::Resource
        + k8s_openapi::Metadata<Ty = ObjectMeta>
        + Serialize
        + DeserializeOwned,
{
    apply_as(object, force)
}

/// Like [`apply`], but decodes the object after the apply into `T`: a
/// small struct with only the fields you read keeps a guest much smaller
/// and faster than decoding a whole k8s-openapi type.
pub fn apply_as<K, T>(object: &K, force: bool) -> Result<T, ApiError>
where
    K: k8s_openapi::Resource + k8s_openapi::Metadata<Ty = ObjectMeta> + Serialize,
    T: DeserializeOwned,
{
    let meta = object.metadata();
    let name = meta
        .name
        .as_deref()
        .ok_or_else(|| ApiError::new(0, "DecodeError", "apply: metadata.name is missing"))?;
    let target = ObjectRef::new(Gvk::of::<K>(), meta.namespace.as_deref(), name);
    let patch = PatchType::Apply {
        field_manager: None,
        force,
    };
    decode(&raw::patch(&target, &patch, &encode(object)?)?)
}

/// Patches the object `namespace/name` of kind `K`.
pub fn patch<K: k8s_openapi::Resource + DeserializeOwned>(
    namespace: Option<&str>,
    name: &str,
    patch_type: &PatchType,
    body: &Value,
) -> Result<K, ApiError> {
    let target = ObjectRef::new(Gvk::of::<K>(), namespace, name);
    decode(&raw::patch(&target, patch_type, &encode(body)?)?)
}

/// Merge-patches the status subresource of `namespace/name`; `body` is the
/// patch, e.g. `json!({"status": {"phase": "Ready"}})`.
pub fn patch_status<K: k8s_openapi::Resource + DeserializeOwned>(
    namespace: Option<&str>,
    name: &str,
    body: &Value,
) -> Result<K, ApiError> {
    let target = ObjectRef::new(Gvk::of::<K>(), namespace, name);
    decode(&raw::patch_status(
        &target,
        &PatchType::Merge,
        &encode(body)?,
    )?)
}

/// Deletes the object `namespace/name` of kind `K` (background
/// propagation). Returns `false` if it was already gone.
pub fn delete<K: k8s_openapi::Resource>(
    namespace: Option<&str>,
    name: &str,
) -> Result<bool, ApiError> {
    delete_dyn(&Gvk::of::<K>(), namespace, name)
}

// ----- any kind, dynamic -----

/// Reads one object of any kind into `T` (your custom resource struct or
/// `Value`); `None` if it does not exist.
pub fn get_as<T: DeserializeOwned>(
    kind: &Gvk,
    namespace: Option<&str>,
    name: &str,
) -> Result<Option<T>, ApiError> {
    let target = ObjectRef::new(kind.clone(), namespace, name);
    match not_found_is_none(raw::get(&target))? {
        Some(json) => decode(&json).map(Some),
        None => Ok(None),
    }
}

/// Lists objects of any kind into `T`.
pub fn list_as<T: DeserializeOwned>(
    kind: &Gvk,
    namespace: Option<&str>,
    label_selector: Option<&str>,
) -> Result<Vec<T>, ApiError> {
    raw::list(kind, namespace, label_selector)?
        .iter()
        .map(|json| decode(json))
        .collect()
}

/// Lists from the host's cache the objects whose key in the index `index`
/// (declared with [`Manifest::index`](crate::Manifest::index)) is `value`,
/// in `namespace` (`None`: all): "the Pods on node X", "the Apps that
/// reference Secret S", at the cost of what is returned.
pub fn list_by_index<T: DeserializeOwned>(
    index: &str,
    value: &str,
    namespace: Option<&str>,
) -> Result<Vec<T>, ApiError> {
    raw::list_by_index(index, value, namespace)?
        .iter()
        .map(|json| decode(json))
        .collect()
}

/// Server-side applies a JSON object of any kind (with `apiVersion`, `kind`
/// and `metadata.name`); returns the object after the apply.
pub fn apply_value(object: &Value, force: bool) -> Result<Value, ApiError> {
    apply_value_as(object, force)
}

/// Like [`apply_value`], but decodes the object after the apply into `T`:
/// a small struct with only the fields you read, or
/// [`serde::de::IgnoredAny`] to read nothing. Decoding the answer into a
/// whole [`Value`] is most of what an apply costs a guest.
pub fn apply_value_as<T: DeserializeOwned>(object: &Value, force: bool) -> Result<T, ApiError> {
    let target = ObjectRef::from_object(object).ok_or_else(|| {
        ApiError::new(
            0,
            "DecodeError",
            "apply: apiVersion, kind or metadata.name is missing",
        )
    })?;
    let patch = PatchType::Apply {
        field_manager: None,
        force,
    };
    decode(&raw::patch(&target, &patch, &encode(object)?)?)
}

/// Patches an object of any kind; returns it after the patch.
pub fn patch_dyn(
    target: &ObjectRef,
    patch_type: &PatchType,
    body: &Value,
) -> Result<Value, ApiError> {
    decode(&raw::patch(target, patch_type, &encode(body)?)?)
}

/// Merge-patches the status subresource of an object of any kind; `body`
/// is the patch, e.g. `json!({"status": {...}})`.
pub fn patch_status_dyn(target: &ObjectRef, body: &Value) -> Result<Value, ApiError> {
    patch_status_dyn_as(target, body)
}

/// Like [`patch_status_dyn`], but decodes the object after the patch into
/// `T` ([`serde::de::IgnoredAny`] to read nothing).
pub fn patch_status_dyn_as<T: DeserializeOwned>(
    target: &ObjectRef,
    body: &Value,
) -> Result<T, ApiError> {
    decode(&raw::patch_status(
        target,
        &PatchType::Merge,
        &encode(body)?,
    )?)
}

/// Deletes an object of any kind (background propagation). Returns `false`
/// if it was already gone.
pub fn delete_dyn(kind: &Gvk, namespace: Option<&str>, name: &str) -> Result<bool, ApiError> {
    let target = ObjectRef::new(kind.clone(), namespace, name);
    match raw::delete(&target, Some(Propagation::Background)) {
        Ok(()) => Ok(true),
        Err(e) if e.is_not_found() => Ok(false),
        Err(e) => Err(e),
    }
}

// ----- finalizers -----

/// Whether the JSON object carries `finalizer` in `metadata.finalizers`.
pub fn has_finalizer(object: &Value, finalizer: &str) -> bool {
    finalizers(object).any(|f| f == finalizer)
}

/// Whether the JSON object is being deleted (has `metadata.deletionTimestamp`).
pub fn is_deleting(object: &Value) -> bool {
    object
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null())
}

fn finalizers(object: &Value) -> impl Iterator<Item = &str> {
    object
        .pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

fn resource_version_test(object: &Value) -> Option<Value> {
    object
        .pointer("/metadata/resourceVersion")
        .and_then(Value::as_str)
        .map(|rv| json!({"op": "test", "path": "/metadata/resourceVersion", "value": rv}))
}

/// Adds `finalizer` to `object` (as read, e.g. the request's object) with a
/// JSON patch that first tests `metadata.resourceVersion`: if the object
/// changed since it was read the patch fails with 409 `Conflict` and
/// nothing is lost (the reconcile is retried). Returns the object after the patch, or `object` unchanged if
/// the finalizer was already there.
pub fn add_finalizer(object: &Value, finalizer: &str) -> Result<Value, ApiError> {
    if has_finalizer(object, finalizer) {
        return Ok(object.clone());
    }
    let target = target_of(object)?;
    let mut ops: Vec<Value> = resource_version_test(object).into_iter().collect();
    if object
        .pointer("/metadata/finalizers")
        .is_some_and(Value::is_array)
    {
        ops.push(json!({"op": "add", "path": "/metadata/finalizers/-", "value": finalizer}));
    } else {
        ops.push(json!({"op": "add", "path": "/metadata/finalizers", "value": [finalizer]}));
    }
    patch_dyn(&target, &PatchType::Json, &Value::Array(ops)).map_err(|e| test_failed(&target, e))
}

/// What the API server answers (422, no details) when a JSON patch cannot
/// be applied: a `test` operation failed, or a path is gone.
const PATCH_NOT_APPLICABLE: &str = "the server rejected our request due to an error in our request";

/// A JSON patch that cannot be applied (its `test` failed: 422 without
/// details) means the object changed since it was read: report it as the
/// conflict it is, so the reconcile is retried. Any other refusal (a
/// webhook's, the schema's: 422 with the causes) is returned as it is.
fn test_failed(target: &ObjectRef, e: ApiError) -> ApiError {
    if e.code == 422 && e.message == PATCH_NOT_APPLICABLE {
        ApiError::new(
            409,
            "Conflict",
            format!("{target} changed since it was read: {}", e.message),
        )
    } else {
        e
    }
}

/// [`add_finalizer`] for an object the caller owns: `object` itself,
/// neither copied nor written, when it already carries `finalizer` (every
/// reconcile after the first), else the object after the patch.
pub fn ensure_finalizer(object: Value, finalizer: &str) -> Result<Value, ApiError> {
    if has_finalizer(&object, finalizer) {
        return Ok(object);
    }
    add_finalizer(&object, finalizer)
}

/// Removes `finalizer` from `object` with a JSON patch that tests both the
/// resourceVersion and the finalizer's position, so a concurrent change to
/// the list is never overwritten (a stale read fails with 409 `Conflict`). Returns the object after the patch (the
/// API server may have deleted it: then `Value::Null`).
pub fn remove_finalizer(object: &Value, finalizer: &str) -> Result<Value, ApiError> {
    let Some(index) = finalizers(object).position(|f| f == finalizer) else {
        return Ok(object.clone());
    };
    let target = target_of(object)?;
    let path = format!("/metadata/finalizers/{index}");
    let mut ops: Vec<Value> = resource_version_test(object).into_iter().collect();
    ops.push(json!({"op": "test", "path": path, "value": finalizer}));
    ops.push(json!({"op": "remove", "path": path}));
    match patch_dyn(&target, &PatchType::Json, &Value::Array(ops)) {
        Err(e) if e.is_not_found() => Ok(Value::Null),
        Err(e) => Err(test_failed(&target, e)),
        ok => ok,
    }
}

fn target_of(object: &Value) -> Result<ObjectRef, ApiError> {
    ObjectRef::from_object(object).ok_or_else(|| {
        ApiError::new(
            0,
            "DecodeError",
            "object lacks apiVersion, kind or metadata.name",
        )
    })
}

// ----- owner references -----

/// A controller owner reference (`controller: true`,
/// `blockOwnerDeletion: true`) to the object `kind`/`name` with `uid`.
pub fn controller_ref(kind: &Gvk, name: &str, uid: &str) -> OwnerReference {
    OwnerReference {
        api_version: kind.api_version(),
        kind: kind.kind.clone(),
        name: name.to_owned(),
        uid: uid.to_owned(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

/// A controller owner reference to a JSON object; `None` if it lacks
/// `apiVersion`, `kind`, `metadata.name` or `metadata.uid`.
pub fn controller_ref_to(owner: &Value) -> Option<OwnerReference> {
    let target = ObjectRef::from_object(owner)?;
    let uid = owner.pointer("/metadata/uid")?.as_str()?;
    Some(controller_ref(&target.kind, &target.name, uid))
}

/// A controller owner reference to a typed object; `None` if it lacks a
/// name or uid.
pub fn controller_ref_for<K>(owner: &K) -> Option<OwnerReference>
where
    K: k8s_openapi::Resource + k8s_openapi::Metadata<Ty = ObjectMeta>,
{
    let meta = owner.metadata();
    Some(controller_ref(
        &Gvk::of::<K>(),
        meta.name.as_deref()?,
        meta.uid.as_deref()?,
    ))
}

// ----- events and logs -----

/// Records a Normal or Warning Event about `regarding`, best effort.
///
/// The host writes Events in the background (aggregating repeats into one
/// Event with a count) and never makes a reconcile wait for, or fail
/// because of, an Event: one the API server refuses (in a namespace being
/// deleted, say) is dropped. So this returns nothing to handle. The host
/// refuses only an Event no API server would take (an empty reason or one
/// over 128 characters); that is logged as a warning here.
pub fn event(regarding: &ObjectRef, event_type: EventType, reason: &str, message: &str) {
    if let Err(error) = raw::record_event(regarding, event_type, reason, message) {
        raw::log(
            Level::Warn,
            &format!("event {reason:?} not recorded: {error}"),
            &[],
        );
    }
}

/// Logs a message at `level` with key/value fields.
pub fn log(level: Level, message: &str, fields: &[(&str, &str)]) {
    let fields: Vec<(String, String)> = fields
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    raw::log(level, message, &fields);
}

/// Logs a message at info level.
pub fn info(message: &str) {
    raw::log(Level::Info, message, &[]);
}

/// Logs a message at warn level.
pub fn warn(message: &str) {
    raw::log(Level::Warn, message, &[]);
}
