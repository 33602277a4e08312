//! The `scale` subresource: an `autoscaling/v1` Scale over an object's
//! replicas, as the scale registries of Deployments, ReplicaSets,
//! StatefulSets, ReplicationControllers (`pkg/registry/*/storage`,
//! `ScaleREST`) and custom resources (apiextensions' `customresource/etcd.go`)
//! serve it. A write is one of the object's: the Scale is built from it,
//! written (replaced, patched by its type, or applied), checked
//! (`ValidateScale`, the uid and resourceVersion it names), and its
//! replicas set back; the object's managedFields go through the Scale as
//! managedfields' `ScaleHandler` takes them there and back
//! ([`crate::fieldmanager::scale`]).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::apply::conflict_status;
use super::patch::patched;
use super::registry::Registry;
use super::replace::{check_name, check_patched_namespace};
use super::storage::view;
use crate::fieldmanager::fieldpath::FieldPath;
use crate::fieldmanager::managed::{ManagedEntry, read_managed};
use crate::fieldmanager::scale::{SCALE_VERSION, field_path, identity, to_parent, to_subresource};
use crate::machinery::field::{FieldError, Path};
use crate::machinery::object::{meta, now};
use crate::meta::status::Status;
use crate::meta::types::{PatchType, WriteOptions};
use crate::resource::custom::{CustomSchemas, Scale};
use crate::resource::info::ResourceInfo;

/// A write to the scale subresource.
#[derive(Debug)]
pub enum ScaleWrite<'a> {
    /// PUT: the Scale sent.
    Replace(Value),
    /// PATCH of this type (server-side apply included) with this body.
    Patch(&'a PatchType, &'a [u8]),
}

/// The replicas of a custom resource that has none: the real server's
/// sign (the smallest int32) that they were not there.
const UNSET: i64 = -2_147_483_648;

/// Where an object keeps what its Scale shows.
struct Paths {
    spec: String,
    status: String,
    /// A custom resource's `labelSelectorPath`; `None` for the built-in
    /// kinds, whose selector is `spec.selector`.
    selector: Option<String>,
}

impl Paths {
    fn of(res: &ResourceInfo) -> Paths {
        match res.custom.as_ref().and_then(|c| c.scale(&res.version)) {
            Some(scale) => Paths {
                spec: scale.spec_replicas_path.clone(),
                status: scale.status_replicas_path.clone(),
                selector: Some(scale.label_selector_path.clone().unwrap_or_default()),
            },
            None => Paths {
                spec: ".spec.replicas".into(),
                status: ".status.replicas".into(),
                selector: None,
            },
        }
    }
}

/// The value at a simple JSON path.
fn at<'a>(object: &'a Value, path: &str) -> Option<&'a Value> {
    Scale::fields(path)
        .into_iter()
        .try_fold(object, |v, f| v.get(f))
}

/// The Scale of `object` (`scaleFromDeployment`, `scaleFromCustomResource`),
/// and whether its spec had replicas (custom resources may not).
pub(crate) fn scale_of(res: &ResourceInfo, object: &Value) -> Result<(Value, bool), Status> {
    let paths = Paths::of(res);
    let md = &object["metadata"];
    let mut metadata = Map::new();
    for field in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        if let Some(value) = md.get(field).filter(|v| !v.is_null()) {
            metadata.insert(field.into(), value.clone());
        }
    }
    let spec = at(object, &paths.spec).and_then(Value::as_i64);
    let status = at(object, &paths.status)
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let selector = match &paths.selector {
        Some(path) if path.is_empty() => String::new(),
        Some(path) => at(object, path)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        None => selector_string(res, object.pointer("/spec/selector"))?,
    };
    let mut status_out = json!({"replicas": status});
    if !selector.is_empty() {
        status_out["selector"] = json!(selector);
    }
    let scale = json!({
        "kind": "Scale",
        "apiVersion": SCALE_VERSION,
        "metadata": metadata,
        // `ScaleSpec.Replicas` is omitted at zero (`omitempty`).
        "spec": match spec.unwrap_or(0) {
            0 => json!({}),
            n => json!({"replicas": n}),
        },
        "status": status_out,
    });
    Ok((scale, spec.is_some()))
}

/// A built-in kind's selector as the Scale shows it: `LabelSelectorAsSelector`
/// then `String()` (requirements by key: `app=web,tier in (a,b)`), or a
/// ReplicationController's map (`SelectorFromSet`).
fn selector_string(res: &ResourceInfo, selector: Option<&Value>) -> Result<String, Status> {
    let Some(selector) = selector.filter(|s| !s.is_null()) else {
        return Ok(String::new());
    };
    let mut requirements: Vec<(String, String)> = Vec::new();
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let labels = if res.kind == "ReplicationController" {
        selector.as_object()
    } else {
        selector.get("matchLabels").and_then(Value::as_object)
    };
    for (key, value) in labels.into_iter().flatten() {
        requirements.push((key.clone(), format!("{key}={}", text(value))));
    }
    if res.kind != "ReplicationController" {
        for expression in selector
            .get("matchExpressions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let key = text(&expression["key"]);
            let mut values: Vec<String> = expression["values"]
                .as_array()
                .into_iter()
                .flatten()
                .map(text)
                .collect();
            values.sort();
            let shown = match expression["operator"].as_str().unwrap_or_default() {
                "In" => format!("{key} in ({})", values.join(",")),
                "NotIn" => format!("{key} notin ({})", values.join(",")),
                "Exists" => key.clone(),
                "DoesNotExist" => format!("!{key}"),
                other => {
                    return Err(Status::bad_request(format!(
                        "{other:?} is not a valid label selector operator"
                    )));
                }
            };
            requirements.push((key, shown));
        }
    }
    requirements.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(requirements
        .into_iter()
        .map(|(_, shown)| shown)
        .collect::<Vec<_>>()
        .join(","))
}

/// Each version of the resource and its replicas path (`None`: a
/// version without a scale subresource): the `ResourcePathMappings`.
fn mappings(res: &ResourceInfo) -> BTreeMap<String, Option<FieldPath>> {
    match &res.custom {
        Some(custom) => custom
            .version_names()
            .into_iter()
            .map(|v| {
                let path = custom.scale(&v).map(|s| field_path(&s.spec_replicas_path));
                (format!("{}/{v}", res.group), path)
            })
            .collect(),
        None => [(res.api_version(), Some(field_path(".spec.replicas")))].into(),
    }
}

/// The 422 of a Scale that `ValidateScale` refuses.
fn invalid_scale(name: &str, replicas: i64) -> Status {
    Status::from_field_errors(
        "autoscaling",
        "Scale",
        name,
        &[FieldError::invalid(
            &Path::new(["spec", "replicas"]),
            replicas,
            "must be greater than or equal to 0",
        )],
    )
}

impl Registry {
    /// The object behind a scale subresource read or written: read, or
    /// written as `write` says; what the Scale shows is [`scale_of`] it.
    pub(crate) fn scale(
        &mut self,
        res: &ResourceInfo,
        ns: &str,
        name: &str,
        write: Option<ScaleWrite<'_>>,
        opts: &WriteOptions,
    ) -> Result<Value, Status> {
        // A PUT's Scale names the request's namespace and object before
        // anything is read (the update handler's checks).
        if let Some(ScaleWrite::Replace(scale)) = &write {
            check_patched_namespace(res, ns, scale)?;
            check_name(scale, name)?;
        }
        let stored = self
            .find_shared(res, ns, name)
            .ok_or_else(|| Status::not_found(res, name))?;
        let existing = view(res, &stored).into_owned();
        let paths = Paths::of(res);
        let (mut current, found) = scale_of(res, &existing)?;
        let Some(write) = write else {
            if !found {
                return Err(Status::internal(format!(
                    "the spec replicas field {:?} does not exist",
                    paths.spec
                )));
            }
            return Ok(existing);
        };
        if !found {
            current["spec"]["replicas"] = json!(UNSET);
        }
        let mappings = mappings(res);
        let parent_entries = read_managed(&existing);
        let mut entries = to_subresource(&parent_entries, &mappings);
        let manager = opts.field_manager.clone().unwrap_or_default();
        let replicas_path = field_path(".spec.replicas");
        let (wanted, applied) = match write {
            ScaleWrite::Replace(scale) => (scale, false),
            ScaleWrite::Patch(PatchType::Apply { force }, body) => {
                let config: Value = serde_json::from_slice(body)
                    .or_else(|_| serde_yaml_ng::from_slice(body))
                    .map_err(|e| Status::bad_request(format!("error decoding patch: {e}")))?;
                let wanted = apply_scale(&mut entries, &current, &config, &manager, *force)?;
                (wanted, true)
            }
            ScaleWrite::Patch(ptype, body) => (patched(&current, ptype, body, res)?, false),
        };
        if !applied {
            check_name(&wanted, name)?;
        } else if let Some(sent) = meta(&wanted, "name").filter(|n| n != name) {
            return Err(Status::bad_request(format!(
                "the name of the object ({sent}) does not match the name on the URL ({name})"
            )));
        }
        let replicas = wanted
            .pointer("/spec/replicas")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let before = current["spec"]["replicas"].as_i64().unwrap_or(0);
        if !applied && replicas != before {
            // An update: the writer owns the replicas now.
            let me = ManagedEntry {
                manager: manager.clone(),
                operation: "Update".into(),
                api_version: SCALE_VERSION.into(),
                time: now(),
                subresource: Some("scale".into()),
                fields: [replicas_path.clone()].into(),
            };
            for e in &mut entries {
                e.fields.remove(&replicas_path);
            }
            entries.retain(|e| !e.fields.is_empty() && identity(e) != identity(&me));
            // Zero replicas are no field of the Scale (omitted): nobody
            // owns them.
            if replicas != 0 {
                entries.push(me);
            }
        }
        if !found && replicas == UNSET {
            return Err(Status::bad_request(format!(
                "the spec replicas field {:?} cannot be empty",
                paths.spec
            )));
        }
        if res.custom.is_none() && replicas < 0 {
            return Err(invalid_scale(name, replicas));
        }
        let stored_uid = meta(&existing, "uid").unwrap_or_default();
        if let Some(sent) = meta(&wanted, "uid").filter(|u| !u.is_empty() && *u != stored_uid)
            && res.custom.is_none()
        {
            return Err(Status::uid_precondition_failed(
                res,
                ns,
                name,
                &sent,
                &stored_uid,
            ));
        }
        if let Some(version) = meta(&wanted, "resourceVersion").filter(|v| !v.is_empty())
            && Some(&version) != meta(&existing, "resourceVersion").as_ref()
        {
            return Err(Status::conflict(res, name));
        }
        let mut object = existing.clone();
        json_patch::merge(
            &mut object,
            &CustomSchemas::scale_patch(&paths.spec, json!(replicas)),
        );
        // A custom resource that had no replicas keeps its entries (the
        // real field manager cannot track the Scale it made up).
        // A manager left with nothing is no manager.
        entries.retain(|e| !e.fields.is_empty());
        let entries = if found {
            to_parent(&parent_entries, &entries, &mappings, &res.api_version())
        } else {
            parent_entries
        };
        let mut opts = opts.clone();
        opts.subresource = None;
        self.update(res, &existing, object, &opts, Some(entries))
    }
}

/// Server-side apply of a Scale: the replicas it applies, with the
/// conflicts of the Scale's other owners; `entries` become the
/// Scale's after it.
fn apply_scale(
    entries: &mut Vec<ManagedEntry>,
    current: &Value,
    config: &Value,
    manager: &str,
    force: bool,
) -> Result<Value, Status> {
    let replicas_path = field_path(".spec.replicas");
    let me = ManagedEntry {
        manager: manager.into(),
        operation: "Apply".into(),
        api_version: SCALE_VERSION.into(),
        time: String::new(),
        subresource: Some("scale".into()),
        fields: Default::default(),
    };
    let applied = config.pointer("/spec/replicas").and_then(Value::as_i64);
    // A Scale nobody owns a field of is tracked from its first apply
    // (`skipNonAppliedManager`): what it holds is `before-first-apply`'s.
    if entries.is_empty()
        && current["spec"]["replicas"]
            .as_i64()
            .is_some_and(|r| r != 0 && r != UNSET)
    {
        entries.push(ManagedEntry {
            manager: "before-first-apply".into(),
            operation: "Update".into(),
            api_version: SCALE_VERSION.into(),
            time: now(),
            subresource: Some("scale".into()),
            fields: [replicas_path.clone()].into(),
        });
    }
    let mut wanted = current.clone();
    if let Some(replicas) = applied {
        let changes = current["spec"]["replicas"].as_i64() != Some(replicas);
        if changes {
            let conflicts: Vec<(FieldPath, String)> = entries
                .iter()
                .filter(|e| identity(e) != identity(&me) && e.fields.contains(&replicas_path))
                .map(|e| (replicas_path.clone(), super::apply::conflict_manager(e)))
                .collect();
            if !conflicts.is_empty() && !force {
                return Err(conflict_status(&conflicts));
            }
            for e in entries.iter_mut() {
                if identity(e) != identity(&me) {
                    e.fields.remove(&replicas_path);
                }
            }
        }
        wanted["spec"]["replicas"] = json!(replicas);
    }
    if let Some(rv) = config.pointer("/metadata/resourceVersion") {
        wanted["metadata"]["resourceVersion"] = rv.clone();
    }
    if let Some(uid) = config.pointer("/metadata/uid") {
        wanted["metadata"]["uid"] = uid.clone();
    }
    if let Some(sent) = config.pointer("/metadata/name") {
        wanted["metadata"]["name"] = sent.clone();
    }
    entries.retain(|e| identity(e) != identity(&me));
    let mut mine = me;
    if applied.is_some() {
        mine.fields.insert(replicas_path);
    }
    entries.push(mine);
    Ok(wanted)
}
