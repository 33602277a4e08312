//! Event (v1), written through core/v1: the fields Go always writes
//! (`involvedObject`, `source`, the timestamps as `null`, empty reporting
//! fields), and the checks of a core/v1 write (`legacyValidateEvent`): the
//! involved object in the event's namespace, and, for an event with an
//! `eventTime`, its reporting component and instance, action and reason.
//!
//! Events written through events.k8s.io/v1 are stored as these (see
//! `apis/events.rs`) and take the same shape; their own checks
//! (`ValidateEventCreate` for that version) are left out.

use serde_json::{Value, json};

use crate::apis::strategy::Rules;
use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::names::{is_qualified_name, name_is_path_segment};
use crate::machinery::object::text_at;

pub(crate) static RULES: Rules = Rules {
    // Only the generic metadata checks apply, with path-segment names.
    name: name_is_path_segment,
    default: shape,
    validate,
    validate_update: |new, _| validate(new),
    validate_status: None,
};

/// The core/v1 Event as Go writes it: structs and times that are never
/// left out, strings without `omitempty`.
pub(crate) fn shape(obj: &mut Value) {
    let Some(event) = obj.as_object_mut() else {
        return;
    };
    for (key, value) in [
        ("involvedObject", json!({})),
        ("source", json!({})),
        ("firstTimestamp", Value::Null),
        ("lastTimestamp", Value::Null),
        ("eventTime", Value::Null),
        ("reportingComponent", json!("")),
        ("reportingInstance", json!("")),
    ] {
        event.entry(key).or_insert(value);
    }
}

/// `legacyValidateEvent` for a core/v1 request.
fn validate(obj: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let namespace = text_at(obj, "/metadata/namespace");
    let involved = text_at(obj, "/involvedObject/namespace");
    let mismatch = || {
        FieldError::invalid(
            &Path::new(["involvedObject", "namespace"]),
            involved,
            "does not match event.namespace",
        )
    };
    let timed = obj.get("eventTime").is_some_and(|t| !t.is_null());
    if !timed {
        if involved.is_empty() {
            if !namespace.is_empty() && namespace != "default" {
                errors.push(mismatch());
            }
        } else if namespace != involved {
            errors.push(mismatch());
        }
        return errors;
    }
    if involved.is_empty() && namespace != "default" && namespace != "kube-system" {
        errors.push(mismatch());
    }
    let component = text_at(obj, "/reportingComponent");
    let component_path = Path::new(["reportingComponent"]);
    if component.is_empty() {
        errors.push(FieldError::required(&component_path, ""));
    }
    for message in is_qualified_name(component) {
        errors.push(FieldError::invalid(&component_path, component, message));
    }
    for (key, limit) in [("reportingInstance", 128), ("action", 128), ("reason", 128)] {
        let value = text_at(obj, &format!("/{key}"));
        if value.is_empty() {
            errors.push(FieldError::required(&Path::new([key]), ""));
        }
        if value.len() > limit {
            errors.push(FieldError::invalid(
                &Path::new([key]),
                "",
                format!("can have at most {limit} characters"),
            ));
        }
    }
    if text_at(obj, "/message").len() > 1024 {
        errors.push(FieldError::invalid(
            &Path::new(["message"]),
            "",
            "can have at most 1024 characters",
        ));
    }
    errors
}
