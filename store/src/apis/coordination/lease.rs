//! Lease (coordination.k8s.io/v1): a positive duration and no negative
//! transitions (`ValidateLeaseSpec`); `strategy` and `preferredHolder` are
//! dropped as the strategy drops them while the `CoordinatedLeaderElection`
//! gate is off, as it is by default. Its times are `metav1.MicroTime`,
//! which the real server parses strictly when it decodes the object
//! (`time.Parse` with six fractional digits): a `400` with Go's words for
//! where the parse stopped, not a field error ([`decode`]).

use serde_json::Value;

use crate::apis::shape::spec_mut;
use crate::apis::strategy::Rules;
use crate::go::time::parse::{Layout, parse};
use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::names::name_is_dns_subdomain;

pub(crate) static RULES: Rules = Rules {
    name: name_is_dns_subdomain,
    default,
    validate,
    validate_update: |new, _| validate(new),
    validate_status: None,
};

/// Not a default but `PrepareForCreate` and `PrepareForUpdate` with the
/// gate off: a stored Lease never has a strategy, so an update drops it
/// too. `spec` is always written.
fn default(lease: &mut Value) {
    if let Some(spec) = spec_mut(lease) {
        spec.remove("strategy");
        spec.remove("preferredHolder");
    }
}

fn validate(lease: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let spec = Path::new(["spec"]);
    let number = |key: &str| {
        lease
            .pointer(&format!("/spec/{key}"))
            .and_then(Value::as_i64)
    };
    if let Some(duration) = number("leaseDurationSeconds").filter(|d| *d <= 0) {
        errors.push(FieldError::invalid(
            &spec.child("leaseDurationSeconds"),
            duration,
            "must be greater than 0",
        ));
    }
    if let Some(transitions) = number("leaseTransitions").filter(|t| *t < 0) {
        errors.push(FieldError::invalid(
            &spec.child("leaseTransitions"),
            transitions,
            "must be greater than or equal to 0",
        ));
    }
    errors
}

/// Why `lease` does not decode: an `acquireTime` or `renewTime` that is not
/// a MicroTime (Go's `parsing time ...` error).
pub(crate) fn decode(lease: &Value) -> Option<String> {
    ["acquireTime", "renewTime"].into_iter().find_map(|field| {
        let time = lease.pointer(&format!("/spec/{field}"))?.as_str()?;
        parse(Layout::Rfc3339Micro, time).err()
    })
}
