//! What a new Job gets (`SetDefaults_Job` and the strategy's
//! `PrepareForCreate` in `pkg/registry/batch/job/strategy.go`): its
//! template's labels when it has none, the selector and pod labels
//! `generateSelector` makes unless `manualSelector`, an empty status; and
//! the labels a read of one stored without any decodes it with.

use serde_json::{Map, Value, json};

use super::job::{LEGACY_NAME, LEGACY_UID, NAME, UID};
use crate::apis::apps::start_status;
use crate::apis::core::pod::object_at;

/// The Job's labels, when it has none, are its template's.
pub(super) fn copy_template_labels(job: &mut Map<String, Value>) {
    let Some(labels) = job
        .get("spec")
        .and_then(|s| s.pointer("/template/metadata/labels"))
        .filter(|l| l.is_object())
        .cloned()
    else {
        return;
    };
    let metadata = job.entry("metadata").or_insert_with(|| json!({}));
    if let Some(metadata) = metadata.as_object_mut()
        && metadata
            .get("labels")
            .and_then(Value::as_object)
            .is_none_or(Map::is_empty)
        && labels.as_object().is_some_and(|l| !l.is_empty())
    {
        metadata.insert("labels".into(), labels);
    }
}

/// What a new Job gets: the generated selector and template labels
/// (unless `manualSelector`), its template's labels when it has none, an
/// empty status.
pub(crate) fn prepare_create(job: &mut Value) {
    let name = job
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let uid = job
        .pointer("/metadata/uid")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let Some(map) = job.as_object_mut() else {
        return;
    };
    // `SetDefaults_Job` gave the Job its template's label map itself, so
    // the labels the selector generates in the template are the Job's too.
    let template_labels = |map: &Map<String, Value>| {
        map.get("spec")
            .and_then(|s| s.pointer("/template/metadata/labels"))
            .cloned()
    };
    let shared = template_labels(map).is_some()
        && map.get("metadata").and_then(|m| m.get("labels")).cloned() == template_labels(map);
    if let Some(spec) = map.get_mut("spec").and_then(Value::as_object_mut)
        && spec.get("manualSelector") != Some(&Value::Bool(true))
    {
        generate_selector(spec, &name, &uid);
    }
    if shared
        && let Some(labels) = template_labels(map)
        && let Some(metadata) = map.get_mut("metadata").and_then(Value::as_object_mut)
    {
        metadata.insert("labels".into(), labels);
    }
    // A Job whose template had no labels at decode is stored without any
    // of its own: each read gives it its template's ([`decoded`]).
    start_status(job, json!({}));
}

/// A stored Job as a read decodes it (`SetDefaults_Job` runs on every
/// decode): a Job stored without labels (its template had none when it
/// was created) shows its template's, generated ones included. Its first
/// update stores them, so that write always moves its resourceVersion.
pub(crate) fn decoded(job: &Value) -> Option<Value> {
    let has_own = job
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .is_some_and(|l| !l.is_empty());
    let template = job
        .pointer("/spec/template/metadata/labels")
        .and_then(Value::as_object)
        .is_some_and(|l| !l.is_empty());
    if has_own || !template {
        return None;
    }
    let mut job = job.clone();
    if let Some(map) = job.as_object_mut() {
        copy_template_labels(map);
    }
    Some(job)
}

/// `generateSelector`.
fn generate_selector(spec: &mut Map<String, Value>, name: &str, uid: &str) {
    if let Some(labels) = object_at(spec, "template")
        .and_then(|t| object_at(t, "metadata"))
        .and_then(|m| object_at(m, "labels"))
    {
        for (key, value) in [
            (LEGACY_NAME, name),
            (NAME, name),
            (LEGACY_UID, uid),
            (UID, uid),
        ] {
            labels.entry(key).or_insert_with(|| json!(value));
        }
    }
    if let Some(labels) = object_at(spec, "selector").and_then(|s| object_at(s, "matchLabels")) {
        labels.entry(UID).or_insert_with(|| json!(uid));
    }
}
