//! Job (batch/v1): defaults (`SetDefaults_Job`: one completion and one
//! pod at a time, six retries, non-indexed, not suspended, pods replaced
//! once terminating or failed; the template's labels as the Job's), the
//! selector and labels generated on create unless `manualSelector`
//! (`generateSelector`), the checks (`ValidateJob`; the spec's in
//! `jobspec.rs`) and what an update may not change (`ValidateJobSpecUpdate`).

use serde_json::{Map, Value, json};

use super::job_create::copy_template_labels;
pub(crate) use super::job_create::prepare_create;
use super::jobspec::validate_job_spec;
use crate::apis::apps::selector_text;
use crate::apis::core::pod::{
    default_template, go_internal_pod_spec, object_at, or_default, or_pointer,
};
use crate::apis::strategy::Rules;
use crate::go::json::encode::go_struct_json;
use crate::machinery::field::{
    ErrorList, ErrorType, FieldError, Path, error_with_written_value, immutable,
};
use crate::machinery::labels::{
    Selector, selector_kind, selector_matches, validate_label_selector,
};
use crate::machinery::names::{is_dns1123_label, name_is_dns_subdomain};
use crate::machinery::object::META_ORDER;

pub(crate) static RULES: Rules = Rules {
    name: name_is_dns_subdomain,
    default,
    validate,
    validate_update,
    validate_status: Some(super::job_status::validate_status),
};

/// The labels `generateSelector` gives a Job's pods, legacy and current.
pub(super) const LEGACY_UID: &str = "controller-uid";
pub(super) const UID: &str = "batch.kubernetes.io/controller-uid";
pub(super) const LEGACY_NAME: &str = "job-name";
pub(super) const NAME: &str = "batch.kubernetes.io/job-name";

fn default(job: &mut Value) {
    let Some(map) = job.as_object_mut() else {
        return;
    };
    if let Some(spec) = object_at(map, "spec") {
        default_job_spec(spec);
    }
    // At decode, before the field manager: the Job's creator owns them.
    copy_template_labels(map);
    // The counts Go omits at zero (`int32` with `omitempty`).
    if let Some(status) = map.get_mut("status").and_then(Value::as_object_mut) {
        status.retain(|key, value| {
            !(matches!(key.as_str(), "active" | "succeeded" | "failed") && value == 0)
        });
    }
}

/// `SetDefaults_Job` of a spec (not a CronJob's job template's).
fn default_job_spec(spec: &mut Map<String, Value>) {
    let unset = |spec: &Map<String, Value>, key: &str| spec.get(key).is_none_or(Value::is_null);
    if unset(spec, "completions") && unset(spec, "parallelism") {
        spec.insert("completions".into(), json!(1));
    }
    or_pointer(spec, "parallelism", json!(1));
    let backoff = if unset(spec, "backoffLimitPerIndex") {
        6
    } else {
        i64::from(i32::MAX)
    };
    or_pointer(spec, "backoffLimit", json!(backoff));
    or_pointer(spec, "completionMode", json!("NonIndexed"));
    or_pointer(spec, "suspend", json!(false));
    let replacement = if unset(spec, "podFailurePolicy") {
        "TerminatingOrFailed"
    } else {
        "Failed"
    };
    or_pointer(spec, "podReplacementPolicy", json!(replacement));
    or_pointer(spec, "manualSelector", json!(false));
    for rule in spec
        .get_mut("podFailurePolicy")
        .and_then(|p| p.get_mut("rules"))
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        for pattern in rule
            .get_mut("onPodConditions")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            if let Some(pattern) = pattern.as_object_mut() {
                or_default(pattern, "status", json!("True"));
            }
        }
    }
    default_template(spec.entry("template").or_insert_with(|| json!({})));
}

fn validate(job: &Value) -> ErrorList {
    let mut errors = validate_generated_selector(job);
    let empty = json!({});
    let spec = job.get("spec").unwrap_or(&empty);
    errors.extend(validate_spec(spec, &Path::new(["spec"])));
    let indexed = spec.get("completionMode").and_then(Value::as_str) == Some("Indexed");
    if let Some(completions) = spec.get("completions").and_then(Value::as_i64)
        && indexed
        && completions > 0
    {
        let name = job
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let hostname = format!("{name}-{}", completions - 1);
        if !is_dns1123_label(&hostname).is_empty() {
            errors.push(FieldError::invalid(
                &Path::new(["metadata", "name"]),
                name,
                format!("will not able to create pod with invalid DNS label: {hostname}"),
            ));
        }
    }
    errors
}

/// `validateGeneratedSelector`: unless manual, the template carries the
/// generated labels and the selector selects them.
fn validate_generated_selector(job: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    if job.pointer("/spec/manualSelector") == Some(&Value::Bool(true)) {
        return errors;
    }
    let Some(selector) = job.pointer("/spec/selector").filter(|s| !s.is_null()) else {
        return errors;
    };
    let text = |pointer: &str| {
        job.pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or_default()
    };
    let (name, uid) = (text("/metadata/name"), text("/metadata/uid"));
    if uid.is_empty() {
        errors.push(FieldError::required(&Path::new(["metadata", "uid"]), ""));
    }
    let labels = job.pointer("/spec/template/metadata/labels");
    let at = Path::new(["spec", "template", "metadata"]).child("labels");
    for (key, expected) in [
        (LEGACY_UID, uid),
        (LEGACY_NAME, name),
        (UID, uid),
        (NAME, name),
    ] {
        match labels.and_then(|l| l.get(key)).and_then(Value::as_str) {
            None => errors.push(FieldError::required(
                &at.key(key),
                format!("must be '{expected}'"),
            )),
            Some(actual) if actual != expected => errors.push(FieldError::invalid(
                &at.key(key),
                labels.cloned().unwrap_or(Value::Null),
                format!("must be '{expected}'"),
            )),
            Some(_) => {}
        }
    }
    let expected = json!({LEGACY_UID: uid, LEGACY_NAME: name, UID: uid, NAME: name});
    if selector_kind(Some(selector)) != Selector::Invalid
        && !selector_matches(Some(selector), Some(&expected))
    {
        errors.push(error_with_written_value(
            ErrorType::Invalid,
            &Path::new(["spec", "selector"]),
            &selector_text(selector),
            "`selector` not auto-generated",
        ));
    }
    errors
}

/// `ValidateJobSpec`: the job template's checks, a selector required and
/// matching the template.
fn validate_spec(spec: &Value, path: &Path) -> ErrorList {
    let mut errors = validate_job_spec(spec, path);
    let selector = spec.get("selector").filter(|s| !s.is_null());
    match selector {
        None => errors.push(FieldError::required(&path.child("selector"), "")),
        Some(selector) => {
            errors.extend(validate_label_selector(
                Some(selector),
                &path.child("selector"),
            ));
        }
    }
    let labels = spec
        .pointer("/template/metadata/labels")
        .filter(|l| !l.is_null());
    let matches = match selector_kind(selector) {
        Selector::Invalid | Selector::Everything => true,
        Selector::Nothing => false,
        Selector::Some => selector_matches(selector, labels),
    };
    if !matches {
        errors.push(FieldError::invalid(
            &path.child("template").child("metadata").child("labels"),
            labels.cloned().unwrap_or(Value::Null),
            "`selector` does not match template `labels`",
        ));
    }
    errors
}

fn validate_update(new: &Value, old: &Value) -> ErrorList {
    let empty = json!({});
    let (spec, old_spec) = (
        new.get("spec").unwrap_or(&empty),
        old.get("spec").unwrap_or(&empty),
    );
    let path = Path::new(["spec"]);
    let mut errors = validate_spec(spec, &path);
    let indexed = spec.get("completionMode").and_then(Value::as_str) == Some("Indexed");
    if !indexed {
        errors.extend(immutable(
            spec.get("completions"),
            old_spec.get("completions"),
            &path.child("completions"),
        ));
    } else if spec.get("completions") != old_spec.get("completions")
        && let Some(completions) = spec.get("completions").and_then(Value::as_i64)
        && spec.get("parallelism").and_then(Value::as_i64) != Some(completions)
    {
        errors.push(FieldError::invalid(
            &path.child("completions"),
            completions,
            "can only be modified in tandem with spec.parallelism",
        ));
    }
    if spec.get("selector") != old_spec.get("selector") {
        errors.push(error_with_written_value(
            ErrorType::Invalid,
            &path.child("selector"),
            &spec
                .get("selector")
                .map_or("null".to_string(), selector_text),
            "field is immutable",
        ));
    }
    errors.extend(validate_template_update(new, old));
    for key in [
        "completionMode",
        "podFailurePolicy",
        "backoffLimitPerIndex",
        "managedBy",
        "successPolicy",
    ] {
        errors.extend(immutable(
            spec.get(key),
            old_spec.get(key),
            &path.child(key),
        ));
    }
    errors
}

/// `validatePodTemplateUpdate`: the template of a running Job cannot
/// change; a suspended one that never started may change its scheduling
/// directives (labels, annotations, node selector and affinity,
/// tolerations, scheduling gates) and its containers' resources.
fn validate_template_update(new: &Value, old: &Value) -> ErrorList {
    let empty = json!({});
    let template = new.pointer("/spec/template").unwrap_or(&empty);
    let old_template = old.pointer("/spec/template").unwrap_or(&empty);
    let suspended = old.pointer("/spec/suspend") == Some(&Value::Bool(true))
        && old.pointer("/status/startTime").is_none_or(Value::is_null);
    if !suspended {
        if template == old_template {
            return ErrorList::new();
        }
        return vec![error_with_written_value(
            ErrorType::Invalid,
            &Path::new(["spec", "template"]),
            &go_internal_template(template),
            "field is immutable",
        )];
    }
    let spec = template.get("spec").unwrap_or(&empty);
    let loose = |spec: &Value, resources_from: &Value| {
        let mut spec = spec.clone();
        if let Some(map) = spec.as_object_mut() {
            for key in ["nodeSelector", "tolerations", "schedulingGates"] {
                map.remove(key);
            }
            if let Some(affinity) = map.get_mut("affinity").and_then(Value::as_object_mut) {
                affinity.remove("nodeAffinity");
            }
            for key in ["containers", "initContainers"] {
                let theirs = resources_from.get(key).and_then(Value::as_array);
                if let (Some(ours), Some(theirs)) =
                    (map.get_mut(key).and_then(Value::as_array_mut), theirs)
                    && ours.len() == theirs.len()
                {
                    for (a, b) in ours.iter_mut().zip(theirs) {
                        if a.get("name") == b.get("name")
                            && let Some(a) = a.as_object_mut()
                        {
                            match b.get("resources") {
                                Some(r) => a.insert("resources".into(), r.clone()),
                                None => a.remove("resources"),
                            };
                        }
                    }
                }
            }
        }
        spec
    };
    let old_spec = old_template.get("spec").unwrap_or(&empty);
    if loose(spec, spec) == loose(old_spec, spec) {
        return ErrorList::new();
    }
    vec![error_with_written_value(
        ErrorType::Invalid,
        &Path::new(["spec", "template", "spec"]),
        &go_internal_pod_spec(spec),
        "field is immutable",
    )]
}

/// The internal PodTemplateSpec as Go's JSON writes it: its metadata's
/// fields inline (with their tags), then `Spec`.
fn go_internal_template(template: &Value) -> String {
    let metadata = template.get("metadata").cloned().unwrap_or(json!({}));
    let mut text = go_struct_json(&metadata, META_ORDER);
    text.pop();
    if text.len() > 1 {
        text.push(',');
    }
    let spec = template.get("spec").unwrap_or(&Value::Null);
    format!("{text}\"Spec\":{}}}", go_internal_pod_spec(spec))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{default, prepare_create, validate};

    /// On create the template gets the generated labels, the selector the
    /// uid, and a Job without labels its template's (generated ones too).
    #[test]
    fn a_new_job_gets_its_generated_selector_and_labels() {
        let mut job = json!({
            "metadata": {"name": "j"},
            "spec": {"template": {"metadata": {"labels": {"x": "z"}}, "spec": {
                "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}
        });
        default(&mut job);
        job["metadata"]["uid"] = json!("u-1");
        prepare_create(&mut job);
        let generated = json!({
            "x": "z",
            "job-name": "j",
            "batch.kubernetes.io/job-name": "j",
            "controller-uid": "u-1",
            "batch.kubernetes.io/controller-uid": "u-1",
        });
        assert_eq!(job["spec"]["template"]["metadata"]["labels"], generated);
        assert_eq!(job["metadata"]["labels"], generated);
        assert_eq!(
            job["spec"]["selector"],
            json!({"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}})
        );
        assert_eq!(job["spec"]["manualSelector"], false);
        assert!(validate(&job).is_empty(), "{:?}", validate(&job));
    }
}
