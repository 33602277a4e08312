//! PersistentVolume (v1): `persistentVolumeReclaimPolicy: Retain`,
//! `volumeMode: Filesystem` and a host path's `type: ""` by default
//! (`SetDefaults_PersistentVolume`, `SetDefaults_HostPathVolumeSource`),
//! the status it starts with (`PrepareForCreate` in
//! `pkg/registry/core/persistentvolume/strategy.go`: `Pending` since now)
//! and the `kubernetes.io/pv-protection` finalizer of the
//! `StorageObjectInUseProtection` admission plugin on create.
//!
//! Left out: the volume's validation and the other volume sources'
//! defaults.

use serde_json::{Value, json};

use super::finalizers::add_finalizer;
use crate::apis::strategy::{Rules, nothing, nothing_on_update};
use crate::machinery::names::name_is_dns_subdomain;
use crate::machinery::object::now;

pub(crate) static RULES: Rules = Rules {
    name: name_is_dns_subdomain,
    default,
    validate: nothing,
    validate_update: nothing_on_update,
    validate_status: None,
};

/// The finalizer the PV protection controller removes once no claim is
/// bound to the volume.
pub(crate) const PV_PROTECTION: &str = "kubernetes.io/pv-protection";

fn default(volume: &mut Value) {
    let Some(spec) = volume.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let policy = spec.get("persistentVolumeReclaimPolicy");
    if policy.is_none_or(|p| p.is_null() || p == "") {
        spec.insert("persistentVolumeReclaimPolicy".into(), json!("Retain"));
    }
    if spec.get("volumeMode").is_none_or(Value::is_null) {
        spec.insert("volumeMode".into(), json!("Filesystem"));
    }
    if let Some(host_path) = spec.get_mut("hostPath").and_then(Value::as_object_mut)
        && host_path.get("type").is_none_or(Value::is_null)
    {
        host_path.insert("type".into(), json!(""));
    }
}

/// `PrepareForCreate` (the status cleared, `Pending` since now) and the
/// protection finalizer.
pub(crate) fn prepare_create(volume: &mut Value) {
    if let Some(map) = volume.as_object_mut() {
        map.insert(
            "status".into(),
            json!({"phase": "Pending", "lastPhaseTransitionTime": now()}),
        );
    }
    add_finalizer(volume, PV_PROTECTION);
}
