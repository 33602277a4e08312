//! StorageClass (storage.k8s.io/v1): `reclaimPolicy: Delete` and
//! `volumeBindingMode: Immediate` by default (`SetDefaults_StorageClass`,
//! `pkg/apis/storage/v1/defaults.go`), and its parameters, provisioner,
//! reclaim policy and binding mode immutable
//! (`ValidateStorageClassUpdate`, `pkg/apis/storage/validation`).

use serde_json::Value;

use crate::apis::strategy::{Rules, nothing};
use crate::machinery::field::{ErrorList, Path, immutable};
use crate::machinery::names::name_is_dns_subdomain;

pub(crate) static RULES: Rules = Rules {
    name: name_is_dns_subdomain,
    default,
    validate: nothing,
    validate_update,
    validate_status: None,
};

fn default(class: &mut Value) {
    let Some(class) = class.as_object_mut() else {
        return;
    };
    for (field, value) in [
        ("reclaimPolicy", "Delete"),
        ("volumeBindingMode", "Immediate"),
    ] {
        if class.get(field).is_none_or(Value::is_null) {
            class.insert(field.into(), value.into());
        }
    }
}

/// `ValidateStorageClassUpdate`: each of these is immutable, in this order.
fn validate_update(new: &Value, old: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    for field in [
        "parameters",
        "provisioner",
        "reclaimPolicy",
        "volumeBindingMode",
    ] {
        let (n, o) = (given(new, field), given(old, field));
        errors.extend(immutable(n, o, &Path::new([field])));
    }
    errors
}

/// A field as Go holds it: an empty map is no map (`parameters: {}` and
/// none compare equal once stored), and an empty string the zero string.
fn given<'a>(obj: &'a Value, field: &str) -> Option<&'a Value> {
    obj.get(field).filter(|v| match v {
        Value::Null => false,
        Value::Object(map) => !map.is_empty(),
        Value::String(s) => !s.is_empty(),
        _ => true,
    })
}
