//! managedFields: who owns which fields, tracked on every write.

use serde_json::{Map, Value, json};

use super::compare::compare;
use super::fieldpath;
use super::fieldpath::{FieldPath, FieldSet};
use super::typed::Ty;
use super::versions::{ByVersion, Converter, Seen};
use crate::machinery::object::{meta_mut, now};
use crate::resource::info::ResourceInfo;

/// One `managedFields` entry, its fields as a set.
#[derive(Clone, Debug)]
pub(crate) struct ManagedEntry {
    pub(crate) manager: String,
    pub(crate) operation: String,
    pub(crate) api_version: String,
    pub(crate) time: String,
    pub(crate) subresource: Option<String>,
    pub(crate) fields: FieldSet,
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
                        .map(fieldpath::parse_fields_v1)
                        .unwrap_or_default(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Whether a client's `managedFields` decode as the real field manager
/// decodes them (`DecodeManagedFields` in managedfields'
/// `internal/managedfields.go`): each entry `Apply` or `Update`, with an
/// apiVersion, of type `FieldsV1`, its fields a JSON object. The field
/// manager takes the live object's in place of ones that do not
/// (`decodeLiveOrNew` in `internal/fieldmanager.go`).
pub(crate) fn decodable(entries: &[Value]) -> bool {
    entries.iter().all(|e| {
        let text = |key: &str| e.get(key).and_then(Value::as_str).unwrap_or("");
        matches!(text("operation"), "Apply" | "Update")
            && !text("apiVersion").is_empty()
            && text("fieldsType") == "FieldsV1"
            && e.get("fieldsV1")
                .is_none_or(|f| f.is_object() || f.is_null())
    })
}

pub(crate) fn write_managed(o: &mut Value, entries: &[ManagedEntry]) {
    // In the real server's order (`sortEncodedManagedFields`): by
    // operation (Apply first), time, manager, apiVersion, subresource.
    let mut sorted: Vec<&ManagedEntry> = entries.iter().filter(|e| !e.fields.is_empty()).collect();
    sorted.sort_by(|p, q| {
        (
            &p.operation,
            &p.time,
            &p.manager,
            &p.api_version,
            &p.subresource,
        )
            .cmp(&(
                &q.operation,
                &q.time,
                &q.manager,
                &q.api_version,
                &q.subresource,
            ))
    });
    let arr: Vec<Value> = sorted
        .into_iter()
        .map(|e| {
            let mut m = Map::new();
            m.insert("manager".into(), json!(e.manager));
            m.insert("operation".into(), json!(e.operation));
            m.insert("apiVersion".into(), json!(e.api_version));
            if !e.time.is_empty() {
                m.insert("time".into(), json!(e.time));
            }
            m.insert("fieldsType".into(), json!("FieldsV1"));
            m.insert("fieldsV1".into(), fieldpath::fields_v1(&e.fields));
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

/// The type apply gives objects of `res`: the CRD's schema of the
/// version written, for a custom resource.
pub(crate) fn root_type(res: &ResourceInfo) -> Ty<'_> {
    match &res.custom {
        Some(custom) => Ty::Root(custom.schema(&res.version)),
        None => Ty::builtin(&res.group, &res.version, &res.kind),
    }
}

/// What of `o` a write through the main resource or through `/status`
/// may own: no apiVersion, kind, nor the metadata the real server strips
/// (`NewStripMetaManager` in managedfields' `internal/stripmeta.go`: the
/// name, namespace, uid, times, versions and managedFields; its
/// generateName, labels, annotations, finalizers, owners and deletion
/// marks are owned); only the status through `/status`, no status through
/// the main resource when there is a status subresource.
pub(crate) fn ownable(res: &ResourceInfo, o: &Value, subresource: Option<&str>) -> Value {
    let mut out = Map::new();
    for (key, value) in o.as_object().into_iter().flatten() {
        let is_status = key == "status";
        let kept = if subresource == Some("status") {
            // A status write of a built-in kind owns the metadata it
            // changes too (its strategy resets only the spec); a custom
            // resource's keeps its metadata as it was.
            is_status || (key == "metadata" && res.custom.is_none())
        } else {
            !(res.status_subresource && is_status) && key != "apiVersion" && key != "kind"
        };
        if !kept {
            continue;
        }
        if key == "metadata" {
            let md: Map<String, Value> = value
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(k, v)| {
                    matches!(
                        k.as_str(),
                        "generateName"
                            | "labels"
                            | "annotations"
                            | "finalizers"
                            | "ownerReferences"
                            | "deletionTimestamp"
                            | "deletionGracePeriodSeconds"
                    )
                    // Empty, Go leaves them out (`omitempty`): nothing to own.
                    && !v.as_array().is_some_and(Vec::is_empty)
                    && !v.as_object().is_some_and(Map::is_empty)
                    && !v.is_null()
                    && v.as_str() != Some("")
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            if !md.is_empty() {
                out.insert(key.clone(), Value::Object(md));
            }
            continue;
        }
        out.insert(key.clone(), value.clone());
    }
    Value::Object(out)
}

/// A field set without the paths the real server never records
/// (`metadata` itself).
pub(crate) fn strip_meta(mut set: FieldSet) -> FieldSet {
    set.remove(&vec![fieldpath::field("metadata")]);
    set
}

/// Records an Update by `manager` from `old` to `new` in `new`'s
/// managedFields, as the real server's field manager does: the manager
/// owns what it added or changed; the others lose it, and what it
/// removed.
pub(crate) fn track_update(
    res: &ResourceInfo,
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    subresource: Option<&str>,
) {
    track_update_in_versions(res, old, new, manager, subresource, None);
}

/// [`track_update`], where the managers of other versions of the kind
/// lose what changed as `convert` shows it in their version.
pub(crate) fn track_update_in_versions(
    res: &ResourceInfo,
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    subresource: Option<&str>,
    convert: Option<Converter<'_>>,
) {
    let mut entries = read_managed(old.unwrap_or(&Value::Null));
    // An object that holds no managedFields (it was created with no field
    // to own) is not tracked by an update: tracking starts again with an
    // apply (the real field manager's `skipNonAppliedManager`).
    if old.is_some() && entries.is_empty() {
        return;
    }
    drop_unconvertible(res, &mut entries);
    let ty = root_type(res);
    // Created: compared with the kind's zero value, as the real server
    // compares with a new object of its Go type (an update, with the old).
    let before = match old {
        Some(old) => Some(ownable(res, old, subresource)),
        None => ty.zero().map(|zero| ownable(res, &zero, subresource)),
    };
    let after = ownable(res, new, subresource);
    let changes = compare(before.as_ref(), Some(&after), ty);
    let sub = subresource.map(str::to_string);
    let time = now();
    let api_version = res.api_version();
    let is_self = |e: &ManagedEntry| {
        e.manager == manager
            && e.operation == "Update"
            && e.subresource == sub
            && e.api_version == api_version
    };
    // The others lose what the write changed, each as its own version
    // sees it (a new object has no other version to convert).
    let old = old.unwrap_or(&Value::Null);
    let convert = convert.filter(|_| !old.is_null());
    let mut by_version = ByVersion::new(res, old, &*new, subresource, convert, changes);
    for e in entries.iter_mut().filter(|e| !is_self(e)) {
        let seen = by_version.of(&e.api_version);
        e.fields
            .retain(|p| !seen.changed.contains(p) && !seen.removed.contains(p));
    }
    let Seen {
        changed, removed, ..
    } = by_version.into_own();
    match entries.iter_mut().find(|e| is_self(e)) {
        Some(e) => {
            e.fields.retain(|p| !removed.contains(p));
            if !changed.is_empty() {
                e.fields.extend(changed);
                e.time = time.clone();
            }
        }
        None if !changed.is_empty() => entries.push(ManagedEntry {
            manager: manager.into(),
            operation: "Update".into(),
            api_version,
            time,
            subresource: sub,
            fields: changed,
        }),
        None => {}
    }
    entries.retain(|e| !e.fields.is_empty());
    cap_update_managers(&mut entries);
    write_managed(new, &entries);
}

/// The most `Update` entries an object keeps (the real server's
/// `DefaultMaxUpdateManagers`).
const MAX_UPDATE_MANAGERS: usize = 10;

/// Merges the oldest `Update` entries, past [`MAX_UPDATE_MANAGERS`], into
/// an `ancient-changes` entry per apiVersion, as the real field manager's
/// `capManagersManager` does after an update: oldest first (by the second
/// of their times, then their identity), the first of a version is kept
/// until a second of the same version merges with it.
fn cap_update_managers(entries: &mut Vec<ManagedEntry>) {
    let identity = |e: &ManagedEntry| {
        let mut id = format!(
            r#"{{"manager":{},"operation":{},"apiVersion":{}"#,
            json!(e.manager),
            json!(e.operation),
            json!(e.api_version)
        );
        if let Some(sub) = &e.subresource {
            id.push_str(&format!(r#","subresource":{}"#, json!(sub)));
        }
        id.push('}');
        id
    };
    let mut updaters: Vec<usize> = (0..entries.len())
        .filter(|i| entries[*i].operation != "Apply")
        .collect();
    let mut length = updaters.len();
    if length <= MAX_UPDATE_MANAGERS {
        return;
    }
    updaters.sort_by(|a, b| {
        let (a, b) = (&entries[*a], &entries[*b]);
        (second(&a.time), identity(a)).cmp(&(second(&b.time), identity(b)))
    });
    const BUCKET: &str = "ancient-changes";
    let mut first_of_version: std::collections::HashMap<String, usize> = Default::default();
    let mut gone = vec![false; entries.len()];
    for &i in &updaters {
        if length <= MAX_UPDATE_MANAGERS {
            break;
        }
        let version = entries[i].api_version.clone();
        let Some(&first) = first_of_version.get(&version) else {
            first_of_version.insert(version, i);
            continue;
        };
        let bucket = entries.iter().position(|e| {
            e.manager == BUCKET
                && e.operation == "Update"
                && e.api_version == version
                && e.subresource.is_none()
        });
        let bucket = match bucket.filter(|b| !gone[*b]) {
            Some(b) => b,
            None => {
                // The first of the version becomes the bucket.
                let e = &mut entries[first];
                e.manager = BUCKET.into();
                e.subresource = None;
                first
            }
        };
        let merged = entries[i].fields.clone();
        let time = entries[i].time.clone();
        entries[bucket].fields.extend(merged);
        entries[bucket].time = time;
        gone[i] = true;
        length -= 1;
    }
    let mut index = 0;
    entries.retain(|_| {
        index += 1;
        !gone[index - 1]
    });
}

/// A managedFields time to the second (`2026-01-02T03:04:05Z`).
fn second(time: &str) -> &str {
    time.get(..19).unwrap_or(time)
}

/// Drops the entries of a version the resource's converter does not know
/// (another group: an Event's entry written through events.k8s.io when
/// it is written through core/v1), as structured-merge-diff's updater
/// drops a manager whose version it cannot convert to.
pub(crate) fn drop_unconvertible(res: &ResourceInfo, entries: &mut Vec<ManagedEntry>) {
    let group = |api_version: &str| {
        api_version
            .rsplit_once('/')
            .map_or(String::new(), |(g, _)| g.to_string())
    };
    entries.retain(|e| group(&e.api_version) == res.group);
}

/// A path as the real server prints it in a conflict.
pub(crate) fn path_display(p: &FieldPath) -> String {
    fieldpath::display(p)
}
