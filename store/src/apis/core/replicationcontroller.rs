//! ReplicationController (v1): the selector and the object's labels taken
//! from the template's labels when unset (`SetDefaults_ReplicationController`),
//! one replica and the template's defaults; the checks of
//! `ValidateReplicationControllerSpec` (a selector, replicas, a template its
//! selector matches, restarting always) and of its status
//! (`ValidateReplicationControllerStatus`); controllers are selected by
//! `status.replicas`.

use serde_json::{Value, json};

use super::pod::{default_template, nonnegative, or_pointer, spec_of, validate_template};
use crate::apis::apps::{restarts_always, start_status, validate_replica_status};
use crate::apis::strategy::{Rules, Selectable};
use crate::machinery::field::{ErrorList, FieldError, Path};
use crate::machinery::names::name_is_dns_subdomain;
use crate::meta::selector::{Refusal, object_meta_fields};

pub(crate) static RULES: Rules = Rules {
    name: name_is_dns_subdomain,
    default,
    validate,
    validate_update: |new, _| validate(new),
    validate_status: Some(|new, old| {
        validate_replica_status(
            new,
            old,
            &[
                "replicas",
                "fullyLabeledReplicas",
                "readyReplicas",
                "availableReplicas",
                "observedGeneration",
            ],
        )
    }),
};

fn default(rc: &mut Value) {
    let labels = rc
        .pointer("/spec/template/metadata/labels")
        .filter(|l| l.is_object())
        .cloned();
    if let Some(labels) = labels {
        let empty = |v: Option<&Value>| v.and_then(Value::as_object).is_none_or(|m| m.is_empty());
        if empty(rc.pointer("/spec/selector"))
            && let Some(spec) = spec_of(rc)
        {
            spec.insert("selector".into(), labels.clone());
        }
        if empty(rc.pointer("/metadata/labels"))
            && let Some(metadata) = rc.get_mut("metadata").and_then(Value::as_object_mut)
        {
            metadata.insert("labels".into(), labels);
        }
    }
    let Some(spec) = spec_of(rc) else {
        return;
    };
    or_pointer(spec, "replicas", json!(1));
    if let Some(template) = spec.get_mut("template").filter(|t| t.is_object()) {
        default_template(template);
    }
}

/// What a new ReplicationController gets: a status of no replicas.
pub(crate) fn prepare_create(rc: &mut Value) {
    start_status(rc, json!({"replicas": 0}));
}

fn validate(rc: &Value) -> ErrorList {
    let empty = json!({});
    let spec = rc.get("spec").unwrap_or(&empty);
    let path = Path::new(["spec"]);
    let mut errors = nonnegative(spec, "minReadySeconds", &path);
    let selector = spec.get("selector").and_then(Value::as_object);
    if selector.is_none_or(|s| s.is_empty()) {
        errors.push(FieldError::required(&path.child("selector"), ""));
    }
    if spec.get("replicas").is_none_or(Value::is_null) {
        errors.push(FieldError::required(&path.child("replicas"), ""));
    } else {
        errors.extend(nonnegative(spec, "replicas", &path));
    }
    let template_path = path.child("template");
    let Some(template) = spec.get("template").filter(|t| t.is_object()) else {
        errors.push(FieldError::required(&template_path, ""));
        return errors;
    };
    if let Some(selector) = selector.filter(|s| !s.is_empty()) {
        let labels = template.pointer("/metadata/labels");
        let matches = selector
            .iter()
            .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v));
        if !matches {
            errors.push(FieldError::invalid(
                &template_path.child("metadata").child("labels"),
                labels.cloned().unwrap_or(Value::Null),
                "`selector` does not match template `labels`",
            ));
        }
    }
    errors.extend(validate_template(template, &template_path));
    errors.extend(restarts_always(
        template,
        &template_path,
        "ReplicationController",
    ));
    errors
}

/// core/v1's ReplicationController labels (`pkg/apis/core/v1/conversion.go`)
/// and its field set (`ControllerToSelectableFields` in
/// `pkg/registry/core/replicationcontroller/strategy.go`: the replicas its
/// status counts, 0 when unset).
pub(crate) static SELECTABLE: Selectable = Selectable {
    labels: &[
        ("metadata.name", "metadata.name"),
        ("metadata.namespace", "metadata.namespace"),
        ("status.replicas", "status.replicas"),
    ],
    refusal: Refusal::NotSupported,
    fields: |controller| {
        let mut set = object_meta_fields(controller);
        let replicas = controller
            .pointer("/status/replicas")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        set.insert("status.replicas".into(), replicas.to_string());
        set
    },
};
