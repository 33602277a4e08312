//! ReplicaSet (apps/v1): one replica by default and the template's
//! defaults; the checks of `ValidateReplicaSetSpec` and the immutable
//! selector.

use serde_json::{Value, json};

use super::{
    selector_immutable, start_status, validate_replica_template, validate_required_selector,
};
use crate::apis::core::pod::{default_template, nonnegative, or_pointer, spec_of};
use crate::apis::strategy::Rules;
use crate::machinery::field::{ErrorList, Path};
use crate::machinery::names::name_is_dns_subdomain;

pub(crate) static RULES: Rules = Rules {
    name: name_is_dns_subdomain,
    default,
    validate,
    validate_update,
    validate_status: Some(validate_status),
};

/// `ValidateReplicaSetStatusUpdate`.
fn validate_status(new: &Value, old: &Value) -> ErrorList {
    super::validate_replica_status(
        new,
        old,
        &[
            "replicas",
            "fullyLabeledReplicas",
            "readyReplicas",
            "availableReplicas",
            "observedGeneration",
            "terminatingReplicas",
        ],
    )
}

fn default(replica_set: &mut Value) {
    let Some(spec) = spec_of(replica_set) else {
        return;
    };
    or_pointer(spec, "replicas", json!(1));
    default_template(spec.entry("template").or_insert_with(|| json!({})));
}

/// What a new ReplicaSet gets: a status of no replicas.
pub(crate) fn prepare_create(replica_set: &mut Value) {
    start_status(replica_set, json!({"replicas": 0}));
}

fn validate(replica_set: &Value) -> ErrorList {
    let empty = json!({});
    let spec = replica_set.get("spec").unwrap_or(&empty);
    let path = Path::new(["spec"]);
    let mut errors = nonnegative(spec, "replicas", &path);
    errors.extend(nonnegative(spec, "minReadySeconds", &path));
    // The real server names the wrong kind here.
    errors.extend(validate_required_selector(spec, &path, "deployment"));
    errors.extend(validate_replica_template(spec, &path, "ReplicaSet"));
    errors
}

fn validate_update(new: &Value, old: &Value) -> ErrorList {
    let mut errors = validate(new);
    errors.extend(selector_immutable(new, old));
    errors
}
