//! RuntimeClass (node.k8s.io/v1): its handler immutable
//! (`ValidateRuntimeClassUpdate`, `pkg/apis/node/validation`).
//!
//! Left out: the handler's format and the overhead's and scheduling's
//! checks on create.

use serde_json::Value;

use crate::apis::strategy::{Rules, nothing};
use crate::machinery::field::{ErrorList, Path, immutable};
use crate::machinery::names::name_is_dns_subdomain;

pub(crate) static RULES: Rules = Rules {
    name: name_is_dns_subdomain,
    default: crate::apis::strategy::no_defaults,
    validate: nothing,
    validate_update,
    validate_status: None,
};

fn validate_update(new: &Value, old: &Value) -> ErrorList {
    immutable(
        new.get("handler"),
        old.get("handler"),
        &Path::new(["handler"]),
    )
}
