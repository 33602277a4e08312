//! The field selectors a resource takes, as the real server reads a list's
//! or a watch's `fieldSelector`: the labels converted by the conversion of
//! the kind in the version asked for (`ConvertFieldLabel`: the kind's own,
//! each kept with its kind in its group's folder, else apimachinery's
//! `DefaultMetaV1FieldSelectorConversion`: `metadata.name` and
//! `metadata.namespace`), then matched against the object's field set
//! (the kind's `GetAttrs`), not its JSON: a field the set lacks reads as
//! `""`, whatever the object holds.

use serde_json::Value;

use super::apiextensions::customresource;
use super::core::{event, namespace, node, pod, replicationcontroller, secret, service};
use super::strategy::Selectable;
use super::{batch, certificates, events, resource};
use crate::meta::selector::{FieldLabels, FieldSet, object_meta_fields};
use crate::resource::info::ResourceInfo;

/// The field selectors of a built-in kind with a field label conversion
/// of its own, in the one version each is served in. (apps/v1 has none:
/// a ReplicaSet's `status.replicas` is taken by the older apps versions
/// only, which 1.36 does not serve.)
fn selectable(res: &ResourceInfo) -> Option<&'static Selectable> {
    if res.custom.is_some() {
        return None;
    }
    Some(match (res.group.as_str(), res.kind.as_str()) {
        ("", "Pod") => &pod::SELECTABLE,
        ("", "Node") => &node::SELECTABLE,
        ("", "ReplicationController") => &replicationcontroller::SELECTABLE,
        ("", "Event") => &event::SELECTABLE,
        ("", "Namespace") => &namespace::SELECTABLE,
        ("", "Secret") => &secret::SELECTABLE,
        ("", "Service") => &service::SELECTABLE,
        ("events.k8s.io", "Event") => &events::SELECTABLE,
        ("batch", "Job") => &batch::job_selectable::SELECTABLE,
        ("certificates.k8s.io", "CertificateSigningRequest") => {
            &certificates::certificatesigningrequest::SELECTABLE
        }
        ("resource.k8s.io", "ResourceSlice") => &resource::resourceslice::SELECTABLE,
        _ => return None,
    })
}

/// The labels `res` takes, each with the field it selects.
pub(crate) fn field_labels(res: &ResourceInfo) -> FieldLabels {
    if let Some(custom) = &res.custom {
        return customresource::field_labels(res, custom);
    }
    selectable(res).map_or_else(FieldLabels::generic, Selectable::field_labels)
}

/// The field set of an object of `res`: a built-in kind's from the object
/// as `stored`, a custom resource's from the object as `seen` in the
/// version listed (its selectable fields are that version's).
pub(crate) fn field_set(res: &ResourceInfo, stored: &Value, seen: &Value) -> FieldSet {
    if let Some(custom) = &res.custom {
        return customresource::field_set(res, custom, seen);
    }
    match selectable(res) {
        Some(kind) => (kind.fields)(stored),
        None => object_meta_fields(stored),
    }
}
