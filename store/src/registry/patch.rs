//! Patches of an existing object: merge (RFC 7386), JSON (RFC 6902, as
//! the real server applies it) and strategic merge; and the apply patch
//! handed to server-side apply.

use serde_json::{Value, json};

use super::registry::Registry;
use super::replace::{check_name, check_patched_namespace};
use super::storage::view;
use super::strategic::strategic_merge;
use crate::apis::fields::Shape;
use crate::go::fmt::go_print;
use crate::go::json::duplicates::duplicate_fields;
use crate::go::json::encode::{go_json, go_json_patched};
use crate::machinery::field::{FieldError, Path};
use crate::machinery::object::meta;
use crate::meta::status::Status;
use crate::meta::types::{FieldValidation, PatchType, WriteOptions};
use crate::resource::builtin::is_builtin;
use crate::resource::info::ResourceInfo;

/// A JSON patch applied as the real server applies it (evanphx/json-patch
/// v4): operation by operation, a `replace` of a key an object does not
/// have adds it, where RFC 6902 refuses it, and a `test` of such a key
/// against null passes.
fn json_patch_as_the_server(doc: &mut Value, patch: json_patch::Patch) -> Result<(), Status> {
    use json_patch::{AddOperation, PatchOperation};
    for op in patch.0 {
        // `test` of a member an object lacks against null passes (the
        // patch library reads a missing member as nil); kube-rs's
        // finalizer helper guards its first add so.
        if let PatchOperation::Test(test) = &op
            && test.value.is_null()
            && missing_key_of_object(doc, test.path.as_str())
        {
            continue;
        }
        let op = match op {
            PatchOperation::Replace(replace)
                if missing_key_of_object(doc, replace.path.as_str()) =>
            {
                PatchOperation::Add(AddOperation {
                    path: replace.path,
                    value: replace.value,
                })
            }
            op => op,
        };
        json_patch::patch(doc, std::slice::from_ref(&op))
            .map_err(|_| Status::json_patch_failed())?;
    }
    Ok(())
}

/// Whether `pointer` names a key its parent, an object, does not have.
fn missing_key_of_object(doc: &Value, pointer: &str) -> bool {
    let Some((parent, key)) = pointer.rsplit_once('/') else {
        return false;
    };
    let key = key.replace("~1", "/").replace("~0", "~");
    doc.pointer(parent)
        .and_then(Value::as_object)
        .is_some_and(|map| !map.contains_key(&key))
}

/// `existing` with `body` applied as a patch of type `ptype`.
pub(super) fn patched(
    existing: &Value,
    ptype: &PatchType,
    body: &[u8],
    res: &ResourceInfo,
) -> Result<Value, Status> {
    let mut doc = existing.clone();
    match ptype {
        PatchType::Merge => {
            let p: Value = serde_json::from_slice(body)
                .map_err(|e| Status::bad_request(format!("error decoding patch: {e}")))?;
            json_patch::merge(&mut doc, &p);
        }
        PatchType::Json => {
            let raw: Value = serde_json::from_slice(body)
                .map_err(|e| Status::bad_request(format!("error decoding patch: {e}")))?;
            // A list of objects decodes whatever its operations say; an
            // unknown op or a path that is no pointer fails when applied.
            let operations = raw
                .as_array()
                .is_some_and(|ops| ops.iter().all(Value::is_object));
            let p: json_patch::Patch = match serde_json::from_value(raw) {
                Ok(p) => p,
                Err(_) if operations => return Err(Status::json_patch_failed()),
                Err(e) => return Err(Status::bad_request(format!("error decoding patch: {e}"))),
            };
            json_patch_as_the_server(&mut doc, p)?;
        }
        PatchType::StrategicMerge => {
            if !is_builtin(res) {
                return Err(Status::unsupported_patch());
            }
            let p: Value = serde_json::from_slice(body)
                .map_err(|e| Status::bad_request(format!("error decoding patch: {e}")))?;
            strategic_merge(&mut doc, &p, Shape::of(res))?;
        }
        PatchType::Apply { .. } => {
            let st = Status::bad_request("server-side apply is not a patch of an existing object");
            return Err(st);
        }
    }
    Ok(doc)
}

impl Registry {
    pub(crate) fn patch(
        &mut self,
        res: &ResourceInfo,
        namespace: Option<&str>,
        name: &str,
        ptype: &PatchType,
        body: &[u8],
        opts: &WriteOptions,
    ) -> Result<Value, Status> {
        let ns = res.namespace_of(namespace).to_string();
        let force = match ptype {
            PatchType::Apply { force } => *force,
            other => return self.patch_existing(res, &ns, name, other, body, opts),
        };
        {
            let Some(manager) = opts.field_manager.clone().filter(|m| !m.is_empty()) else {
                return Err(Status {
                    code: 422,
                    reason: "Invalid".into(),
                    message: "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch".into(),
                    details: Some(json!({"group": "meta.k8s.io", "kind": "PatchOptions", "causes": [{"reason": "FieldValueRequired", "message": "Required value: is required for apply patch", "field": "fieldManager"}]})),
                });
            };
            // JSON (what clients send) read as JSON; YAML, and JSON that
            // repeats a field (which YAML refuses), as YAML.
            let json = serde_json::from_slice::<Value>(body)
                .ok()
                .filter(|_| duplicate_fields(body).is_empty());
            let config: Value = match json {
                Some(config) => config,
                None => apply_yaml(body, opts)?,
            };
            if !config.is_object() {
                return Err(Status::bad_request(
                    "error decoding YAML: the body is not an object",
                ));
            }
            self.apply(res, &ns, name, config, &manager, force, opts)
        }
    }

    /// Merge, JSON and strategic merge patches of an existing object.
    pub(crate) fn patch_existing(
        &mut self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
        ptype: &PatchType,
        body: &[u8],
        opts: &WriteOptions,
    ) -> Result<Value, Status> {
        let stored = self
            .find_shared(res, ns, name)
            .ok_or_else(|| Status::not_found(res, name))?;
        let existing = view(res, &stored);
        let mut doc = patched(&existing, ptype, body, res)?;
        // The patched object names the request's namespace and object
        // (the patcher's `applyPatch` in `endpoints/handlers/patch.go`),
        // before the storage reads its version.
        check_patched_namespace(res, ns, &doc)?;
        check_name(&doc, name)?;
        // The patched object's resourceVersion is the update's precondition
        // (the stored one, unless the patch changed it).
        let version =
            super::preconditions::object_version(meta(&doc, "resourceVersion").as_deref())?;
        super::preconditions::precondition(res, name, version, &existing)?;
        // The patched object is decoded as a body is: unknown fields are
        // refused under Strict with the patched object in the message.
        self.decode_body(res, &mut doc, Some(&existing), opts)
            .map_err(|status| {
                if status.code != 400 {
                    return status;
                }
                // What the real server shows: a strategic merge patch as Go
                // prints its map, the patched object (again, as it was
                // before decoding) otherwise.
                let value = match ptype {
                    PatchType::StrategicMerge => {
                        go_print(&serde_json::from_slice(body).unwrap_or_default())
                    }
                    _ => {
                        let patched = patched(&existing, ptype, body, res).unwrap_or_default();
                        if res.custom.is_some() {
                            go_json(&patched)
                        } else {
                            go_json_patched(&patched, &existing)
                        }
                    }
                };
                let why = status
                    .message
                    .split_once("strict decoding error: ")
                    .map_or(status.message.as_str(), |(_, why)| why);
                Status::from_field_errors(
                    "",
                    "",
                    "",
                    &[FieldError::invalid(
                        &Path::new(["patch"]),
                        value.as_str(),
                        format!("strict decoding error: {why}"),
                    )],
                )
            })?;
        self.update(res, &existing, doc, opts, None)
    }
}

/// An apply body in YAML. A mapping that repeats a key keeps the last
/// value, as go-yaml reads it, and each repetition is reported as
/// `fieldValidation` says: refused (`Strict`), a warning (`Warn`, the
/// default) or nothing (`Ignore`).
fn apply_yaml(body: &[u8], opts: &WriteOptions) -> Result<Value, Status> {
    let refused =
        |e: serde_yaml_ng::Error| Status::bad_request(format!("error decoding YAML: {e}"));
    // Read into a YAML value first: that reading refuses a repeated key
    // (reading into JSON's value keeps the last one silently).
    match serde_yaml_ng::from_slice::<serde_yaml_ng::Value>(body)
        .and_then(serde_yaml_ng::from_value)
    {
        Ok(config) => Ok(config),
        Err(e) if e.to_string().contains("duplicate entry") => {
            let (kept, repeated) = crate::go::yaml::repeated_keys(&String::from_utf8_lossy(body));
            if repeated.is_empty() {
                return Err(refused(e));
            }
            match opts.field_validation {
                FieldValidation::Strict => {
                    return Err(Status::bad_request(format!(
                        "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  {}",
                        repeated.join("\n  ")
                    )));
                }
                FieldValidation::Warn => repeated.into_iter().for_each(|r| opts.warnings.add(r)),
                FieldValidation::Ignore => {}
            }
            serde_yaml_ng::from_str(&kept).map_err(refused)
        }
        Err(e) => Err(refused(e)),
    }
}
