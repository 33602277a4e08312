//! The managedFields of a write through the scale subresource, as
//! managedfields' `ScaleHandler` carries them: the object's entries owning
//! its replicas seen as the Scale's (`ToSubresource`), and the Scale's
//! merged back into the object's (`ToParent`).

use std::collections::BTreeMap;

use super::fieldpath::FieldPath;
use super::managed::ManagedEntry;
use crate::resource::custom::Scale;

/// The Scale's own version.
pub(crate) const SCALE_VERSION: &str = "autoscaling/v1";

/// A simple JSON path (`.spec.replicas`) as a field path.
pub(crate) fn field_path(path: &str) -> FieldPath {
    Scale::fields(path)
        .into_iter()
        .map(super::fieldpath::field)
        .collect()
}

/// Who an entry is, as the field manager tells managers apart: an
/// applier by name and subresource, an updater by its version too.
pub(crate) fn identity(e: &ManagedEntry) -> (String, String, String, Option<String>) {
    let version = if e.operation == "Apply" {
        String::new()
    } else {
        e.api_version.clone()
    };
    (
        e.manager.clone(),
        e.operation.clone(),
        version,
        e.subresource.clone(),
    )
}

/// `ToSubresource`: the entries owning the replicas, as the Scale's.
pub(crate) fn to_subresource(
    parent: &[ManagedEntry],
    mappings: &BTreeMap<String, Option<FieldPath>>,
) -> Vec<ManagedEntry> {
    let replicas = field_path(".spec.replicas");
    parent
        .iter()
        .filter(|e| {
            mappings
                .get(&e.api_version)
                .and_then(Option::as_ref)
                .is_some_and(|path| e.fields.contains(path))
        })
        .map(|e| ManagedEntry {
            api_version: SCALE_VERSION.into(),
            fields: [replicas.clone()].into(),
            ..e.clone()
        })
        .collect()
}

/// `ToParent`: the Scale's entries merged back into the object's.
pub(crate) fn to_parent(
    parent: &[ManagedEntry],
    scale: &[ManagedEntry],
    mappings: &BTreeMap<String, Option<FieldPath>>,
    parent_version: &str,
) -> Vec<ManagedEntry> {
    let replicas = field_path(".spec.replicas");
    let mut scale: Vec<&ManagedEntry> = scale.iter().collect();
    let mut out = Vec::new();
    for e in parent {
        let Some(path) = mappings.get(&e.api_version) else {
            // A version the resource does not serve: dropped.
            continue;
        };
        let Some(path) = path.as_ref().filter(|p| e.fields.contains(*p)) else {
            out.push(e.clone());
            continue;
        };
        match scale.iter().position(|s| identity(s) == identity(e)) {
            Some(i) => {
                // Still the Scale's owner: kept as it is.
                scale.remove(i);
                out.push(e.clone());
            }
            None => {
                // The replicas went to another manager.
                let mut rest = e.clone();
                rest.fields.remove(path);
                if !rest.fields.is_empty() {
                    out.push(rest);
                }
            }
        }
    }
    let parent_path = mappings.get(parent_version).cloned().flatten();
    for s in scale {
        if !s.fields.contains(&replicas) {
            continue;
        }
        let Some(path) = parent_path.clone() else {
            continue;
        };
        // Its time is the object's entry's of the same identity, if any.
        let time = parent
            .iter()
            .find(|e| identity(e) == identity(s))
            .map(|e| e.time.clone())
            .unwrap_or_default();
        out.push(ManagedEntry {
            api_version: parent_version.into(),
            fields: [path].into(),
            time,
            ..s.clone()
        });
    }
    out
}
