//! managedFields: who owns which fields, tracked on every write.

use crate::prelude::*;

pub(crate) struct ManagedEntry {
    pub(crate) manager: String,
    pub(crate) operation: String,
    pub(crate) api_version: String,
    pub(crate) time: String,
    pub(crate) subresource: Option<String>,
    pub(crate) fields: BTreeSet<FieldPath>,
}

pub(crate) fn read_managed(o: &Value) -> Vec<ManagedEntry> {
    o.pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|e| ManagedEntry {
                    manager: e
                        .get("manager")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .into(),
                    operation: e
                        .get("operation")
                        .and_then(Value::as_str)
                        .unwrap_or("Update")
                        .into(),
                    api_version: e
                        .get("apiVersion")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .into(),
                    time: e.get("time").and_then(Value::as_str).unwrap_or("").into(),
                    subresource: e
                        .get("subresource")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    fields: e
                        .get("fieldsV1")
                        .map(patch::parse_fields_v1)
                        .unwrap_or_default(),
                })
                .collect()
        })
        .unwrap_or_default()
}

pub(crate) fn write_managed(o: &mut Value, entries: &[ManagedEntry]) {
    let arr: Vec<Value> = entries
        .iter()
        .filter(|e| !e.fields.is_empty())
        .map(|e| {
            let mut m = Map::new();
            m.insert("manager".into(), json!(e.manager));
            m.insert("operation".into(), json!(e.operation));
            m.insert("apiVersion".into(), json!(e.api_version));
            m.insert("time".into(), json!(e.time));
            m.insert("fieldsType".into(), json!("FieldsV1"));
            m.insert("fieldsV1".into(), patch::fields_v1(&e.fields));
            if let Some(s) = &e.subresource {
                m.insert("subresource".into(), json!(s));
            }
            Value::Object(m)
        })
        .collect();
    let md = meta_mut(o);
    if arr.is_empty() {
        md.remove("managedFields");
    } else {
        md.insert("managedFields".into(), Value::Array(arr));
    }
}

/// The fields a write through the main resource or through `/status` may own.
pub(crate) fn ownable(
    res: &ResourceInfo,
    o: &Value,
    subresource: Option<&str>,
) -> BTreeSet<FieldPath> {
    patch::leaf_paths(o)
        .into_iter()
        .filter(|p| {
            let is_status = p.first().map(String::as_str) == Some("status");
            if subresource == Some("status") {
                is_status
            } else {
                !(res.status_subresource && is_status)
            }
        })
        .collect()
}

/// Records an Update by `manager` from `old` to `new` in `new`'s managedFields.
pub(crate) fn track_update(
    res: &ResourceInfo,
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    subresource: Option<&str>,
) {
    let mut entries = read_managed(old.unwrap_or(&Value::Null));
    let new_set = patch::leaf_paths(new);
    let changed: BTreeSet<FieldPath> = ownable(res, new, subresource)
        .into_iter()
        .filter(|p| old.and_then(|o| patch::get_path(o, p)) != patch::get_path(new, p))
        .collect();
    for e in entries.iter_mut() {
        e.fields
            .retain(|p| new_set.contains(p) && !changed.contains(p));
    }
    if !changed.is_empty() {
        let sub = subresource.map(str::to_string);
        let api_version = res.api_version();
        if let Some(e) = entries.iter_mut().find(|e| {
            e.manager == manager
                && e.operation == "Update"
                && e.subresource == sub
                && e.api_version == api_version
        }) {
            e.fields.extend(changed);
            e.time = now();
        } else {
            entries.push(ManagedEntry {
                manager: manager.into(),
                operation: "Update".into(),
                api_version,
                time: now(),
                subresource: sub,
                fields: changed,
            });
        }
    }
    write_managed(new, &entries);
}

pub(crate) fn path_display(p: &FieldPath) -> String {
    p.iter().map(|s| format!(".{s}")).collect()
}
