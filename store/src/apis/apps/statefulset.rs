//! StatefulSet (apps/v1): defaults (`SetDefaults_StatefulSet`: ordered
//! pods, a rolling update from partition 0, claims retained, one replica,
//! 10 revisions; claim templates as claims), its checks
//! (`ValidateStatefulSetSpec`) and the fields an update may change
//! (`ValidateStatefulSetUpdate`).

use serde_json::{Map, Value, json};

use super::{
    restarts_always, selector_text, start_status, template_mismatch, validate_int_or_percent,
    validate_required_selector,
};
use crate::apis::core::pod::{
    default_claim_spec, default_template, nonnegative, object_at, or_default, or_pointer, spec_of,
    template_warnings, validate_template,
};
use crate::apis::strategy::Rules;
use crate::go::json::encode::go_json;
use crate::machinery::field::{ErrorList, ErrorType, FieldError, Path, error_with_written_value};
use crate::machinery::labels::{Selector, selector_kind};
use crate::machinery::names::{is_dns1123_label, name_is_dns_label};
use crate::machinery::objectmeta::{validate_annotations, validate_labels};

pub(crate) static RULES: Rules = Rules {
    name: name_is_dns_label,
    default,
    validate,
    validate_update,
    validate_status: Some(validate_status),
};

/// `ValidateStatefulSetStatusUpdate`.
fn validate_status(new: &Value, old: &Value) -> ErrorList {
    super::validate_status(
        new,
        old,
        &super::StatusRules {
            counts: &[
                "replicas",
                "readyReplicas",
                "currentReplicas",
                "updatedReplicas",
                "availableReplicas",
                "observedGeneration",
                "collisionCount",
            ],
            within_replicas: &[
                "readyReplicas",
                "currentReplicas",
                "updatedReplicas",
                "availableReplicas",
            ],
            available_within_ready: Some("cannot be greater than status.readyReplicas"),
            collisions: true,
        },
    )
}

fn default(set: &mut Value) {
    let Some(spec) = spec_of(set) else {
        return;
    };
    or_default(spec, "podManagementPolicy", json!("OrderedReady"));
    if let Some(strategy) = object_at(spec, "updateStrategy") {
        if strategy
            .get("type")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            strategy.insert("type".into(), json!("RollingUpdate"));
            or_pointer(strategy, "rollingUpdate", json!({}));
        }
        if strategy.get("type") == Some(&json!("RollingUpdate"))
            && let Some(rolling) = strategy
                .get_mut("rollingUpdate")
                .and_then(Value::as_object_mut)
        {
            or_pointer(rolling, "partition", json!(0));
        }
    }
    if let Some(retention) = object_at(spec, "persistentVolumeClaimRetentionPolicy") {
        or_default(retention, "whenDeleted", json!("Retain"));
        or_default(retention, "whenScaled", json!("Retain"));
    }
    or_pointer(spec, "replicas", json!(1));
    or_pointer(spec, "revisionHistoryLimit", json!(10));
    // A string without omitempty: always written.
    spec.entry("serviceName").or_insert_with(|| json!(""));
    default_template(spec.entry("template").or_insert_with(|| json!({})));
    for claim in spec
        .get_mut("volumeClaimTemplates")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        if let Some(claim) = claim.as_object_mut() {
            default_claim(claim);
        }
    }
}

/// A claim template is a whole PersistentVolumeClaim: its type, its
/// spec's defaults, a pending status.
fn default_claim(claim: &mut Map<String, Value>) {
    claim.insert("apiVersion".into(), json!("v1"));
    claim.insert("kind".into(), json!("PersistentVolumeClaim"));
    let spec = claim.entry("spec").or_insert_with(|| json!({}));
    default_claim_spec(spec);
    if let Some(status) = object_at(claim, "status") {
        or_default(status, "phase", json!("Pending"));
    }
}

/// What a new StatefulSet gets: a status of no replicas.
pub(crate) fn prepare_create(set: &mut Value) {
    start_status(set, json!({"availableReplicas": 0, "replicas": 0}));
}

/// The template's warnings (on create and when the generation rose), and
/// a negative history limit's.
pub(crate) fn warnings(set: &Value, old: Option<&Value>) -> Vec<String> {
    let mut warnings = template_warnings(set, old, "/spec/template");
    if set
        .pointer("/spec/revisionHistoryLimit")
        .and_then(Value::as_i64)
        .is_some_and(|l| l < 0)
    {
        warnings.push(
            "spec.revisionHistoryLimit: a negative value retains all historical revisions; a value >= 0 is recommended"
                .to_string(),
        );
    }
    warnings
}

fn validate(set: &Value) -> ErrorList {
    validate_spec(set, true)
}

/// `ValidateStatefulSetSpec`; on create the service name is checked too.
fn validate_spec(set: &Value, create: bool) -> ErrorList {
    let empty = json!({});
    let spec = set.get("spec").unwrap_or(&empty);
    let path = Path::new(["spec"]);
    let mut errors = ErrorList::new();
    match spec
        .get("podManagementPolicy")
        .and_then(Value::as_str)
        .unwrap_or_default()
    {
        "" => errors.push(FieldError::required(&path.child("podManagementPolicy"), "")),
        "OrderedReady" | "Parallel" => {}
        other => errors.push(FieldError::invalid(
            &path.child("podManagementPolicy"),
            other,
            "must be 'OrderedReady' or 'Parallel'",
        )),
    }
    errors.extend(validate_strategy(
        spec.get("updateStrategy").unwrap_or(&empty),
        &path.child("updateStrategy"),
    ));
    if let Some(retention) = spec
        .get("persistentVolumeClaimRetentionPolicy")
        .filter(|r| !r.is_null())
    {
        let at = path.child("persistentVolumeClaimRetentionPolicy");
        for key in ["whenDeleted", "whenScaled"] {
            let value = retention
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default();
            if value != "Retain" && value != "Delete" {
                errors.push(FieldError::not_supported(
                    &at.child(key),
                    value,
                    &["Retain".to_string(), "Delete".to_string()],
                ));
            }
        }
    }
    errors.extend(nonnegative(spec, "replicas", &path));
    errors.extend(nonnegative(spec, "minReadySeconds", &path));
    if let Some(start) = spec.pointer("/ordinals/start").and_then(Value::as_i64)
        && start < 0
    {
        errors.push(FieldError::invalid(
            &path.child("ordinals.start"),
            start,
            super::NEGATIVE,
        ));
    }
    if create {
        errors.extend(validate_claim_templates(spec, &path));
    }
    let service = spec
        .get("serviceName")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if create && !service.is_empty() {
        for message in is_dns1123_label(service) {
            errors.push(FieldError::invalid(
                &path.child("serviceName"),
                service,
                message,
            ));
        }
    }
    errors.extend(validate_required_selector(spec, &path, "statefulset"));
    let selector = spec.get("selector");
    if selector_kind(selector) == Selector::Invalid {
        errors.push(error_with_written_value(
            ErrorType::Invalid,
            &path.child("selector"),
            &selector_text(selector.unwrap_or(&Value::Null)),
            "",
        ));
    } else {
        errors.extend(template_mismatch(spec, &path));
        let template = spec.get("template").unwrap_or(&empty);
        let template_path = path.child("template");
        errors.extend(validate_template(
            &template_to_validate(spec, template),
            &template_path,
        ));
        let metadata = template.get("metadata").unwrap_or(&empty);
        errors.extend(validate_labels(metadata, &template_path.child("labels")));
        errors.extend(validate_annotations(
            metadata,
            &template_path.child("annotations"),
        ));
    }
    errors.extend(restarts_always(
        spec.get("template").unwrap_or(&empty),
        &path.child("template"),
        "StatefulSet",
    ));
    errors
}

/// `validateVolumeClaimTemplates`: each template's spec as a claim's.
fn validate_claim_templates(spec: &Value, path: &Path) -> ErrorList {
    let claims = spec.get("volumeClaimTemplates").and_then(Value::as_array);
    let check = crate::apis::core::persistentvolumeclaim::RULES.validate;
    claims
        .into_iter()
        .flatten()
        .enumerate()
        .flat_map(|(i, claim)| {
            let at = path.child("volumeClaimTemplates").index(i);
            check(claim).into_iter().map(move |mut error| {
                error.field = at.join(&error.field);
                error
            })
        })
        .collect()
}

/// The template as the real server checks it: without hostname and
/// subdomain (the controller sets them), with a volume per claim template.
fn template_to_validate(spec: &Value, template: &Value) -> Value {
    let mut template = template.clone();
    let claims: Vec<String> = spec
        .get("volumeClaimTemplates")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.pointer("/metadata/name").and_then(Value::as_str))
        .map(str::to_string)
        .collect();
    if let Some(pod) = template.get_mut("spec").and_then(Value::as_object_mut) {
        pod.remove("hostname");
        pod.remove("subdomain");
        if !claims.is_empty() {
            let mut volumes: Vec<Value> = claims
                .iter()
                .map(|name| json!({"name": name, "persistentVolumeClaim": {"claimName": name}}))
                .collect();
            for volume in pod
                .get("volumes")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let name = volume
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if !claims.iter().any(|c| c == name) {
                    volumes.push(volume.clone());
                }
            }
            pod.insert("volumes".into(), Value::Array(volumes));
        }
    }
    template
}

/// The update strategy: `RollingUpdate` (partition, max unavailable) or
/// `OnDelete` (nothing else).
fn validate_strategy(strategy: &Value, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let rolling = strategy.get("rollingUpdate").filter(|r| !r.is_null());
    match strategy
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
    {
        "" => errors.push(FieldError::required(path, "")),
        "OnDelete" => {
            if let Some(rolling) = rolling {
                errors.push(error_with_written_value(
                    ErrorType::Invalid,
                    &path.child("rollingUpdate"),
                    &internal_rolling(rolling),
                    "only allowed for updateStrategy 'RollingUpdate'",
                ));
            }
        }
        "RollingUpdate" => {
            if let Some(rolling) = rolling {
                let at = path.child("rollingUpdate");
                errors.extend(nonnegative(rolling, "partition", &at));
                if let Some(max) = rolling.get("maxUnavailable").filter(|m| !m.is_null()) {
                    let max_path = at.child("maxUnavailable");
                    errors.extend(validate_int_or_percent(Some(max), &max_path, true));
                    if super::int_or_percent(Some(max)) == 0 {
                        errors.push(FieldError::invalid(&max_path, max.clone(), "cannot be 0"));
                    }
                }
            }
        }
        other => errors.push(error_with_written_value(
            ErrorType::Invalid,
            path,
            &format!(
                "{{\"Type\":{},\"RollingUpdate\":{}}}",
                go_json(&json!(other)),
                rolling.map_or("null".to_string(), internal_rolling)
            ),
            "must be 'RollingUpdate' or 'OnDelete'",
        )),
    }
    errors
}

/// The internal `RollingUpdateStatefulSetStrategy` as Go's JSON writes it.
fn internal_rolling(rolling: &Value) -> String {
    format!(
        "{{\"Partition\":{},\"MaxUnavailable\":{}}}",
        rolling
            .get("partition")
            .and_then(Value::as_i64)
            .unwrap_or(0),
        rolling
            .get("maxUnavailable")
            .filter(|m| !m.is_null())
            .map_or("null".to_string(), go_json),
    )
}

fn validate_update(new: &Value, old: &Value) -> ErrorList {
    let mut errors = validate_spec(new, false);
    let mutable = [
        "replicas",
        "template",
        "updateStrategy",
        "minReadySeconds",
        "ordinals",
        "revisionHistoryLimit",
        "persistentVolumeClaimRetentionPolicy",
    ];
    let rest = |set: &Value| {
        let mut spec = set.get("spec").cloned().unwrap_or(Value::Null);
        if let Some(spec) = spec.as_object_mut() {
            for key in mutable {
                spec.remove(key);
            }
        }
        spec
    };
    if rest(new) != rest(old) {
        errors.push(FieldError::forbidden(
            &Path::new(["spec"]),
            "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        ));
    }
    errors
}
