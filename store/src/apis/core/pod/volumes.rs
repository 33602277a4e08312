//! A Pod's volumes as Go's `encoding/json` writes the internal
//! `core.Volume` (its name, then every field of the embedded
//! `VolumeSource`, the sources a Pod commonly has written field by field),
//! for the refusals that show an internal PodSpec (see `internal.rs`).

use serde_json::Value;

use super::internal::{Field, Zero, list, write_field, write_struct};

/// `core.VolumeSource`'s fields, in the struct's order.
const SOURCES: &[(&str, &str)] = &[
    ("HostPath", "hostPath"),
    ("EmptyDir", "emptyDir"),
    ("GCEPersistentDisk", "gcePersistentDisk"),
    ("AWSElasticBlockStore", "awsElasticBlockStore"),
    ("GitRepo", "gitRepo"),
    ("Secret", "secret"),
    ("NFS", "nfs"),
    ("ISCSI", "iscsi"),
    ("Glusterfs", "glusterfs"),
    ("PersistentVolumeClaim", "persistentVolumeClaim"),
    ("RBD", "rbd"),
    ("Quobyte", "quobyte"),
    ("FlexVolume", "flexVolume"),
    ("Cinder", "cinder"),
    ("CephFS", "cephfs"),
    ("Flocker", "flocker"),
    ("DownwardAPI", "downwardAPI"),
    ("FC", "fc"),
    ("AzureFile", "azureFile"),
    ("ConfigMap", "configMap"),
    ("VsphereVolume", "vsphereVolume"),
    ("AzureDisk", "azureDisk"),
    ("PhotonPersistentDisk", "photonPersistentDisk"),
    ("Projected", "projected"),
    ("PortworxVolume", "portworxVolume"),
    ("ScaleIO", "scaleIO"),
    ("StorageOS", "storageos"),
    ("CSI", "csi"),
    ("Ephemeral", "ephemeral"),
    ("Image", "image"),
];

const HOST_PATH: &[Field] = &[("Path", "path", Zero::Text), ("Type", "type", Zero::Null)];

const EMPTY_DIR: &[Field] = &[
    ("Medium", "medium", Zero::Text),
    ("SizeLimit", "sizeLimit", Zero::Null),
];

const CLAIM: &[Field] = &[
    ("ClaimName", "claimName", Zero::Text),
    ("ReadOnly", "readOnly", Zero::Bool),
];

const KEY_TO_PATH: &[Field] = &[
    ("Key", "key", Zero::Text),
    ("Path", "path", Zero::Text),
    ("Mode", "mode", Zero::Null),
];

const TOKEN: &[Field] = &[
    ("Audience", "audience", Zero::Text),
    ("ExpirationSeconds", "expirationSeconds", Zero::Number),
    ("Path", "path", Zero::Text),
];

const FIELD_REF: &[Field] = &[
    ("APIVersion", "apiVersion", Zero::Text),
    ("FieldPath", "fieldPath", Zero::Text),
];

/// One internal Volume.
pub(super) fn write_volume(volume: &Value) -> String {
    let mut fields = vec![format!(
        "\"Name\":{}",
        write_field(volume.get("name"), Zero::Text)
    )];
    for (go, json) in SOURCES {
        let source = volume.get(*json).filter(|v| !v.is_null());
        let text = match (*json, source) {
            (_, None) => "null".to_string(),
            ("hostPath", Some(s)) => write_struct(s, HOST_PATH),
            ("emptyDir", Some(s)) => write_struct(s, EMPTY_DIR),
            ("persistentVolumeClaim", Some(s)) => write_struct(s, CLAIM),
            ("secret", Some(s)) => format!(
                "{{\"SecretName\":{},\"Items\":{},\"DefaultMode\":{},\"Optional\":{}}}",
                write_field(s.get("secretName"), Zero::Text),
                items(s),
                write_field(s.get("defaultMode"), Zero::Null),
                write_field(s.get("optional"), Zero::Null),
            ),
            ("configMap", Some(s)) => format!(
                "{{\"Name\":{},\"Items\":{},\"DefaultMode\":{},\"Optional\":{}}}",
                write_field(s.get("name"), Zero::Text),
                items(s),
                write_field(s.get("defaultMode"), Zero::Null),
                write_field(s.get("optional"), Zero::Null),
            ),
            ("downwardAPI", Some(s)) => format!(
                "{{\"Items\":{},\"DefaultMode\":{}}}",
                list(s.get("items"), write_downward_file),
                write_field(s.get("defaultMode"), Zero::Null),
            ),
            ("projected", Some(s)) => format!(
                "{{\"Sources\":{},\"DefaultMode\":{}}}",
                list(s.get("sources"), write_projection),
                write_field(s.get("defaultMode"), Zero::Null),
            ),
            (_, Some(s)) => write_field(Some(s), Zero::Null),
        };
        fields.push(format!("\"{go}\":{text}"));
    }
    format!("{{{}}}", fields.join(","))
}

fn items(source: &Value) -> String {
    list(source.get("items"), |i| write_struct(i, KEY_TO_PATH))
}

/// A `VolumeProjection`: one of its sources set.
fn write_projection(projection: &Value) -> String {
    let referenced = |s: &Value| {
        format!(
            "{{\"Name\":{},\"Items\":{},\"Optional\":{}}}",
            write_field(s.get("name"), Zero::Text),
            items(s),
            write_field(s.get("optional"), Zero::Null),
        )
    };
    let part = |key: &str| projection.get(key).filter(|v| !v.is_null());
    let written = [
        ("Secret", part("secret").map(referenced)),
        (
            "DownwardAPI",
            part("downwardAPI").map(|d| {
                format!(
                    "{{\"Items\":{}}}",
                    list(d.get("items"), write_downward_file)
                )
            }),
        ),
        ("ConfigMap", part("configMap").map(referenced)),
        (
            "ServiceAccountToken",
            part("serviceAccountToken").map(|t| write_struct(t, TOKEN)),
        ),
        (
            "ClusterTrustBundle",
            part("clusterTrustBundle").map(|b| write_field(Some(b), Zero::Null)),
        ),
        (
            "PodCertificate",
            part("podCertificate").map(|c| write_field(Some(c), Zero::Null)),
        ),
    ];
    let fields: Vec<String> = written
        .iter()
        .map(|(go, text)| format!("\"{go}\":{}", text.as_deref().unwrap_or("null")))
        .collect();
    format!("{{{}}}", fields.join(","))
}

/// A `DownwardAPIVolumeFile`.
fn write_downward_file(file: &Value) -> String {
    let field_ref = match file.get("fieldRef").filter(|v| !v.is_null()) {
        Some(r) => write_struct(r, FIELD_REF),
        None => "null".to_string(),
    };
    let resource_ref = match file.get("resourceFieldRef").filter(|v| !v.is_null()) {
        Some(r) => format!(
            "{{\"ContainerName\":{},\"Resource\":{},\"Divisor\":{}}}",
            write_field(r.get("containerName"), Zero::Text),
            write_field(r.get("resource"), Zero::Text),
            match r.get("divisor").filter(|d| !d.is_null()) {
                Some(d) => write_field(Some(d), Zero::Text),
                None => "\"0\"".to_string(),
            },
        ),
        None => "null".to_string(),
    };
    format!(
        "{{\"Path\":{},\"FieldRef\":{field_ref},\"ResourceFieldRef\":{resource_ref},\"Mode\":{}}}",
        write_field(file.get("path"), Zero::Text),
        write_field(file.get("mode"), Zero::Null),
    )
}
