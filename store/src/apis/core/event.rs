//! Event (v1), written through core/v1: the fields Go always writes
//! (`involvedObject`, `source`, the timestamps as `null`, empty reporting
//! fields), and the checks of a core/v1 write (`legacyValidateEvent`): the
//! involved object in the event's namespace, and, for an event with an
//! `eventTime`, its reporting component and instance, action and reason.
//!
//! Events written through events.k8s.io/v1 are stored as these (see
//! `apis/events.rs`) and take the same shape; their own checks
//! (`ValidateEventCreate` for that version) are left out. The fields an
//! Event is selected by are its `involvedObject`'s, its reason, source,
//! reporting component and type.

use serde_json::{Value, json};

use crate::apis::strategy::{Rules, Selectable};
use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::names::{is_qualified_name, name_is_path_segment};
use crate::machinery::object::text_at;
use crate::meta::selector::{FieldSet, Refusal, object_meta_fields};

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

/// core/v1's Event labels (`AddFieldLabelConversionsForEvent` in
/// `pkg/apis/core/v1/conversion.go`) and the Event's field set.
pub(crate) static SELECTABLE: Selectable = Selectable {
    labels: &[
        ("involvedObject.kind", "involvedObject.kind"),
        ("involvedObject.namespace", "involvedObject.namespace"),
        ("involvedObject.name", "involvedObject.name"),
        ("involvedObject.uid", "involvedObject.uid"),
        ("involvedObject.apiVersion", "involvedObject.apiVersion"),
        (
            "involvedObject.resourceVersion",
            "involvedObject.resourceVersion",
        ),
        ("involvedObject.fieldPath", "involvedObject.fieldPath"),
        ("reason", "reason"),
        ("reportingComponent", "reportingComponent"),
        ("source", "source"),
        ("type", "type"),
        ("metadata.namespace", "metadata.namespace"),
        ("metadata.name", "metadata.name"),
    ],
    refusal: Refusal::NotSupported,
    fields,
};

/// An Event's field set (`ToSelectableFields` in
/// `pkg/registry/core/event/strategy.go`), read from the stored core/v1
/// Event: `source` is the source's component, or the reporting controller
/// when that is empty. events.k8s.io/v1 lists select by it too, through
/// their own labels (`apis/events.rs`).
pub(crate) fn fields(event: &Value) -> FieldSet {
    let mut set = object_meta_fields(event);
    let text = |pointer: &str| text_at(event, pointer).to_string();
    for field in [
        "kind",
        "namespace",
        "name",
        "uid",
        "apiVersion",
        "resourceVersion",
        "fieldPath",
    ] {
        set.insert(
            format!("involvedObject.{field}"),
            text(&format!("/involvedObject/{field}")),
        );
    }
    let source = match text_at(event, "/source/component") {
        "" => text("/reportingComponent"),
        component => component.to_string(),
    };
    set.extend([
        ("reason".to_string(), text("/reason")),
        (
            "reportingComponent".to_string(),
            text("/reportingComponent"),
        ),
        ("source".to_string(), source),
        ("type".to_string(), text("/type")),
    ]);
    set
}
