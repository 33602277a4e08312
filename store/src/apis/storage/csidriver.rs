//! CSIDriver (storage.k8s.io/v1): its spec's defaults
//! (`SetDefaults_CSIDriver`, `pkg/apis/storage/v1/defaults.go`, with the
//! feature gates of 1.36: `seLinuxMount` defaulted, no
//! `preventPodSchedulingIfMissing`), its attach flag and lifecycle modes
//! immutable (`ValidateCSIDriverUpdate`, which reports the attach flag as
//! `spec.attachedRequired`), and the warning of a driver asking for tokens
//! without saying where they go (`WarningsOnCreate`, `WarningsOnUpdate`
//! in `pkg/registry/storage/csidriver/strategy.go`).

use serde_json::{Value, json};

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

fn default(driver: &mut Value) {
    let Some(driver) = driver.as_object_mut() else {
        return;
    };
    let spec = driver.entry("spec").or_insert_with(|| json!({}));
    if spec.is_null() {
        *spec = json!({});
    }
    let Some(spec) = spec.as_object_mut() else {
        return;
    };
    let defaults = [
        ("attachRequired", json!(true)),
        ("podInfoOnMount", json!(false)),
        ("storageCapacity", json!(false)),
        ("fsGroupPolicy", json!("ReadWriteOnceWithFSType")),
        ("requiresRepublish", json!(false)),
        ("seLinuxMount", json!(false)),
    ];
    for (field, value) in defaults {
        if spec.get(field).is_none_or(Value::is_null) {
            spec.insert(field.into(), value);
        }
    }
    let modes = spec.get("volumeLifecycleModes");
    if modes.and_then(Value::as_array).is_none_or(Vec::is_empty) {
        spec.insert("volumeLifecycleModes".into(), json!(["Persistent"]));
    }
}

fn validate_update(new: &Value, old: &Value) -> ErrorList {
    let mut errors = immutable(
        new.pointer("/spec/attachRequired"),
        old.pointer("/spec/attachRequired"),
        &Path::new(["spec", "attachedRequired"]),
    );
    errors.extend(immutable(
        new.pointer("/spec/volumeLifecycleModes"),
        old.pointer("/spec/volumeLifecycleModes"),
        &Path::new(["spec", "volumeLifecycleModes"]),
    ));
    errors
}

const TOKENS_IN_SECRETS: &str = "spec.serviceAccountTokenInSecrets is unset; if supported by this CSI driver, set to true to prevent possible logging of tokens in volume attributes";

/// The warning of a driver that asks for tokens (on an update, for other
/// tokens than before) without `serviceAccountTokenInSecrets`.
pub(crate) fn warnings(driver: &Value, old: Option<&Value>) -> Vec<String> {
    let requests = driver.pointer("/spec/tokenRequests");
    let asks = requests
        .and_then(Value::as_array)
        .is_some_and(|r| !r.is_empty());
    let changed = old.is_none_or(|old| old.pointer("/spec/tokenRequests") != requests);
    let unset = driver
        .pointer("/spec/serviceAccountTokenInSecrets")
        .is_none_or(Value::is_null);
    if asks && changed && unset {
        vec![TOKENS_IN_SECRETS.to_string()]
    } else {
        Vec::new()
    }
}
