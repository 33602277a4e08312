//! The CustomResourceDefinition strategy (apiextensions-apiserver's
//! `pkg/registry/customresourcedefinition`): the decoding of a CRD (the
//! fields v1 does not know dropped, a caBundle that must be base64), its
//! defaults and checks before it is stored, the status it is given, and
//! the resources it serves.

use serde_json::{Map, Value, json};

use super::defaults::{default_crd, stored_versions};
use super::validation::{validate_crd, warnings};
use crate::go::json::decode::go_base64_error;
use crate::machinery::object::{meta, now, strings};
use crate::meta::status::Status;
use crate::meta::types::WriteOptions;
use crate::resource::info::{ResourceInfo, Subresource};

/// The fields `apiextensions.k8s.io/v1` knows, by where they are (`*` an
/// object's fields, `[]` a list's items): the others are unknown fields,
/// dropped as its decoder drops them, and reported as `fieldValidation`
/// says. The schemas (`openAPIV3Schema`) are read by their own rules.
const CRD_FIELDS: &[(&str, &[&str])] = &[
    ("", &["apiVersion", "kind", "metadata", "spec", "status"]),
    (
        "spec",
        &[
            "group",
            "names",
            "scope",
            "versions",
            "conversion",
            "preserveUnknownFields",
        ],
    ),
    (
        "spec.names",
        &[
            "plural",
            "singular",
            "shortNames",
            "kind",
            "listKind",
            "categories",
        ],
    ),
    (
        "spec.versions[]",
        &[
            "name",
            "served",
            "storage",
            "deprecated",
            "deprecationWarning",
            "schema",
            "subresources",
            "additionalPrinterColumns",
            "selectableFields",
        ],
    ),
    ("spec.versions[].schema", &["openAPIV3Schema"]),
    ("spec.versions[].subresources", &["status", "scale"]),
    (
        "spec.versions[].subresources.scale",
        &[
            "specReplicasPath",
            "statusReplicasPath",
            "labelSelectorPath",
        ],
    ),
    (
        "spec.versions[].additionalPrinterColumns[]",
        &[
            "name",
            "type",
            "format",
            "description",
            "priority",
            "jsonPath",
        ],
    ),
    ("spec.versions[].selectableFields[]", &["jsonPath"]),
    ("spec.conversion", &["strategy", "webhook"]),
    (
        "spec.conversion.webhook",
        &["clientConfig", "conversionReviewVersions"],
    ),
    (
        "spec.conversion.webhook.clientConfig",
        &["url", "caBundle", "service"],
    ),
    (
        "spec.conversion.webhook.clientConfig.service",
        &["namespace", "name", "path", "port"],
    ),
];

/// Drops the fields of a CRD that `apiextensions.k8s.io/v1` does not
/// know (outside its schemas and metadata), and names them as the strict
/// decoder does (`spec.subresources`, `spec.versions[0].validation`).
fn drop_unknown_crd_fields(crd: &mut Value) -> Vec<String> {
    fn walk(value: &mut Value, shape: &str, path: &str, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                let Some((_, known)) = CRD_FIELDS.iter().find(|(s, _)| *s == shape) else {
                    return;
                };
                let unknown: Vec<String> = map
                    .keys()
                    .filter(|k| !known.contains(&k.as_str()))
                    .cloned()
                    .collect();
                for key in unknown {
                    map.remove(&key);
                    out.push(if path.is_empty() {
                        key
                    } else {
                        format!("{path}.{key}")
                    });
                }
                for (key, child) in map.iter_mut() {
                    let child_shape = if shape.is_empty() {
                        key.clone()
                    } else {
                        format!("{shape}.{key}")
                    };
                    let child_path = if path.is_empty() {
                        key.clone()
                    } else {
                        format!("{path}.{key}")
                    };
                    walk(child, &child_shape, &child_path, out);
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    walk(item, &format!("{shape}[]"), &format!("{path}[{i}]"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(crd, "", "", &mut out);
    out
}

/// Whether `res` is the CustomResourceDefinitions resource.
pub(crate) fn is_crd(res: &ResourceInfo) -> bool {
    res.group == "apiextensions.k8s.io" && res.kind == "CustomResourceDefinition"
}

/// The resources a CRD serves: one per served version, with its names,
/// scope, storage version and subresources.
pub(crate) fn resources(crd: &Value) -> Result<Vec<ResourceInfo>, String> {
    let spec = crd.get("spec").ok_or("spec: Required value")?;
    let group = spec
        .get("group")
        .and_then(Value::as_str)
        .ok_or("spec.group: Required value")?;
    let names = spec.get("names").ok_or("spec.names: Required value")?;
    let kind = names
        .get("kind")
        .and_then(Value::as_str)
        .ok_or("spec.names.kind: Required value")?;
    let plural = names
        .get("plural")
        .and_then(Value::as_str)
        .ok_or("spec.names.plural: Required value")?;
    let singular = names
        .get("singular")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| kind.to_ascii_lowercase());
    let short_names = strings(names.get("shortNames"));
    let namespaced = spec.get("scope").and_then(Value::as_str) != Some("Cluster");
    let storage_version = spec
        .get("versions")
        .and_then(Value::as_array)
        .and_then(|versions| {
            versions
                .iter()
                .find(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
        })
        .and_then(|v| v.get("name"))
        .and_then(Value::as_str)
        .map(str::to_string);
    let versions = spec
        .get("versions")
        .and_then(Value::as_array)
        .ok_or("spec.versions: Required value")?;
    Ok(versions
        .iter()
        .filter(|v| v.get("served").and_then(Value::as_bool) != Some(false))
        .filter_map(|v| {
            let version = v.get("name")?.as_str()?;
            let mut info = ResourceInfo::new(group, version, kind, plural, namespaced);
            info.singular = singular.clone();
            // In the order the real discovery lists a custom resource's.
            info.verbs = [
                "delete",
                "deletecollection",
                "get",
                "list",
                "patch",
                "create",
                "update",
                "watch",
            ]
            .map(str::to_string)
            .to_vec();
            info.short_names = short_names.clone();
            info.categories = strings(names.get("categories"));
            info.storage_version.clone_from(&storage_version);
            // Every served version names the storage version's hash, as
            // the real discovery controller publishes it.
            info.storage_version_hash = storage_version
                .as_deref()
                .map(|storage| rekon_rules::storage_version_hash(group, storage, kind));
            info.status_subresource = v.pointer("/subresources/status").is_some();
            if v.pointer("/subresources/scale").is_some() {
                info.subresources.push(Subresource {
                    name: "scale".into(),
                    kind: "Scale".into(),
                    group: Some("autoscaling".into()),
                    version: Some("v1".into()),
                    verbs: vec!["get".into(), "patch".into(), "update".into()],
                });
            }
            Some(info)
        })
        .collect())
}

/// What the CRD strategy does before it validates a CRD: v1's
/// defaults, the stored versions (the old ones and the new storage
/// version); then the CRD's own checks, a 422 when they fail.
pub(crate) fn prepare(
    crd: &mut Value,
    old: Option<&Value>,
    opts: &WriteOptions,
) -> Result<(), Status> {
    // Decoding: a caBundle that is not base64 fails it; the fields v1
    // does not know are dropped and reported as fieldValidation says.
    if let Some(why) = crd
        .pointer("/spec/conversion/webhook/clientConfig/caBundle")
        .and_then(Value::as_str)
        .and_then(go_base64_error)
    {
        return Err(Status::cannot_handle(
            "CustomResourceDefinition",
            "v1",
            &why,
        ));
    }
    opts.report_dropped(
        "CustomResourceDefinition",
        "v1",
        &drop_unknown_crd_fields(crd),
    )?;
    default_crd(crd);
    let stored = stored_versions(crd, old);
    if let Some(m) = crd.as_object_mut() {
        let status = m.entry("status").or_insert_with(|| json!({}));
        if let Some(status) = status.as_object_mut() {
            status.insert("storedVersions".into(), json!(stored));
        }
    }
    let errors = validate_crd(crd, old);
    if errors.is_empty() {
        for warning in warnings(crd, old) {
            opts.warnings.add(warning);
        }
        return Ok(());
    }
    let name = meta(crd, "name").unwrap_or_default();
    Err(Status::from_field_errors(
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        &name,
        &errors,
    ))
}

/// The status of a CRD just created, before it is established (what
/// the real server answers a create with).
pub(crate) fn initial_status(mut crd: Value) -> Value {
    let stored = stored_versions(&crd, None);
    if let Some(m) = crd.as_object_mut() {
        m.insert(
            "status".into(),
            json!({
                "conditions": null,
                "acceptedNames": {"plural": "", "kind": ""},
                "storedVersions": stored,
            }),
        );
    }
    crd
}

/// What decoding defaults in a CRD before the field manager sees it (so
/// the writer owns `spec.conversion.strategy` it did not send, and a
/// status write of an empty `storedVersions` changes nothing): the
/// defaults of [`default_crd`], without adding a status the write did
/// not have.
pub(crate) fn default_before_tracking(crd: &mut Value) {
    let had_status = crd.get("status").is_some();
    default_crd(crd);
    if !had_status && let Some(m) = crd.as_object_mut() {
        m.remove("status");
    }
}

/// `crd` (as [`status`] established it) with the managedFields entry
/// the real server's naming and establishing controllers leave: manager
/// `kube-apiserver`, its names and both conditions, through `status`.
pub(crate) fn established_by_controllers(mut crd: Value) -> Value {
    let names: Map<String, Value> = crd
        .pointer("/status/acceptedNames")
        .and_then(Value::as_object)
        .map(|names| {
            names
                .keys()
                .map(|k| (format!("f:{k}"), json!({})))
                .collect()
        })
        .unwrap_or_default();
    let condition = json!({
        ".": {}, "f:lastTransitionTime": {}, "f:message": {}, "f:reason": {}, "f:status": {}, "f:type": {}
    });
    let entry = json!({
        "manager": "kube-apiserver",
        "operation": "Update",
        "apiVersion": "apiextensions.k8s.io/v1",
        "time": now(),
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:status": {
            "f:acceptedNames": names,
            "f:conditions": {
                "k:{\"type\":\"Established\"}": condition,
                "k:{\"type\":\"NamesAccepted\"}": condition,
            },
        }},
        "subresource": "status",
    });
    if let Some(meta) = crd.get_mut("metadata").and_then(Value::as_object_mut) {
        let entries = meta.entry("managedFields").or_insert_with(|| json!([]));
        if let Some(entries) = entries.as_array_mut() {
            entries.insert(0, entry);
        }
    }
    crd
}

/// The status a CRD gets once stored: its names accepted, established, and
/// the stored versions a write gave (or its storage version).
pub(crate) fn status(mut crd: Value, old: Option<&Value>) -> Value {
    let names = crd
        .pointer("/spec/names")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let mut accepted = names.clone();
    if let Some(m) = accepted.as_object_mut()
        && !m.contains_key("singular")
        && let Some(k) = names.get("kind").and_then(Value::as_str)
    {
        m.insert("singular".into(), json!(k.to_ascii_lowercase()));
    }
    // The stored versions the write gave (a status write may set them,
    // as a storage migration does), or, when none, the storage version
    // (v1's default).
    let given = strings(crd.pointer("/status/storedVersions"));
    let stored = if given.is_empty() {
        stored_versions(&crd, None)
    } else {
        given
    };
    let t = old
        .and_then(|o| o.pointer("/status/conditions/0/lastTransitionTime"))
        .and_then(Value::as_str)
        .map_or_else(now, str::to_string);
    if let Some(m) = crd.as_object_mut() {
        m.insert(
            "status".into(),
            json!({
                "conditions": [
                    {"type": "NamesAccepted", "status": "True", "lastTransitionTime": t, "reason": "NoConflicts", "message": "no conflicts found"},
                    {"type": "Established", "status": "True", "lastTransitionTime": t, "reason": "InitialNamesAccepted", "message": "the initial names have been accepted"}
                ],
                "acceptedNames": accepted,
                "storedVersions": stored,
            }),
        );
    }
    crd
}
