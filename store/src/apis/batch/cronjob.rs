//! CronJob (batch/v1): defaults (`SetDefaults_CronJob`: concurrent runs
//! allowed, not suspended, 3 successful and 1 failed job kept, and the job
//! template's pod defaults), the checks of `validateCronJobSpec` (the
//! schedule as the real server's parser reads it, the time zone, the
//! policies, the job template) and the name's 52 characters.

use serde_json::{Value, json};

use super::jobspec::validate_job_spec;
use crate::apis::apps::{selector_text, start_status};
use crate::apis::core::pod::{
    default_template, nonnegative, object_at, one_of, or_default, or_pointer, spec_of,
    template_warnings,
};
use crate::apis::strategy::Rules;
use crate::go::cron::schedule_error;
use crate::machinery::field::{ErrorList, ErrorType, FieldError, Path, error_with_written_value};
use crate::machinery::names::{is_dns1123_label, name_is_dns_subdomain};

pub(crate) static RULES: Rules = Rules {
    name: name_is_dns_subdomain,
    default,
    validate,
    validate_update,
    validate_status: None,
};

fn default(cron_job: &mut Value) {
    let Some(spec) = spec_of(cron_job) else {
        return;
    };
    or_default(spec, "concurrencyPolicy", json!("Allow"));
    or_pointer(spec, "suspend", json!(false));
    or_pointer(spec, "successfulJobsHistoryLimit", json!(3));
    or_pointer(spec, "failedJobsHistoryLimit", json!(1));
    if let Some(template) = object_at(spec, "jobTemplate") {
        object_at(template, "metadata");
        if let Some(job_spec) = object_at(template, "spec") {
            default_template(job_spec.entry("template").or_insert_with(|| json!({})));
        }
    }
}

/// What a new CronJob gets: an empty status.
pub(crate) fn prepare_create(cron_job: &mut Value) {
    start_status(cron_job, json!({}));
}

/// A name that is not a DNS label (on create), the job template's
/// warnings (on create and when the generation rose), a time zone in the
/// schedule (on update).
pub(crate) fn warnings(cron_job: &Value, old: Option<&Value>) -> Vec<String> {
    let mut warnings = Vec::new();
    if old.is_none() {
        let name = cron_job
            .pointer("/metadata/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let messages = is_dns1123_label(name);
        if !messages.is_empty() {
            warnings.push(format!(
                "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [{}]",
                messages.join(" ")
            ));
        }
    }
    warnings.extend(template_warnings(
        cron_job,
        old,
        "/spec/jobTemplate/spec/template",
    ));
    let schedule = cron_job
        .pointer("/spec/schedule")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if old.is_some() && schedule.contains("TZ") {
        warnings.push("cannot use TZ or CRON_TZ in spec.spec.schedule, use timeZone instead, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details".to_string());
    }
    warnings
}

fn validate(cron_job: &Value) -> ErrorList {
    let mut errors = validate_spec(cron_job, None);
    let name = cron_job
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if name.len() > 52 {
        errors.push(FieldError::invalid(
            &Path::new(["metadata", "name"]),
            name,
            "must be no more than 52 characters",
        ));
    }
    errors
}

fn validate_update(new: &Value, old: &Value) -> ErrorList {
    validate_spec(new, Some(old))
}

/// `validateCronJobSpec`.
fn validate_spec(cron_job: &Value, old: Option<&Value>) -> ErrorList {
    let empty = json!({});
    let spec = cron_job.get("spec").unwrap_or(&empty);
    let path = Path::new(["spec"]);
    let mut errors = ErrorList::new();
    let schedule = spec
        .get("schedule")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let old_schedule = old
        .and_then(|o| o.pointer("/spec/schedule"))
        .and_then(Value::as_str);
    let zone = spec.get("timeZone").filter(|z| !z.is_null());
    if schedule.is_empty() {
        errors.push(FieldError::required(&path.child("schedule"), ""));
    } else {
        let at = path.child("schedule");
        if let Some(error) = schedule_error(schedule) {
            errors.push(FieldError::invalid(&at, schedule, error));
        }
        let allow_zone = old_schedule.is_some_and(|s| s.contains("TZ"));
        if allow_zone && schedule.contains("TZ") && zone.is_some() {
            errors.push(FieldError::invalid(
                &at,
                schedule,
                "cannot use both timeZone field and TZ or CRON_TZ in schedule",
            ));
        } else if !allow_zone && schedule.contains("TZ") {
            errors.push(FieldError::invalid(
                &at,
                schedule,
                "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
            ));
        }
    }
    errors.extend(nonnegative(spec, "startingDeadlineSeconds", &path));
    let old_zone = old
        .and_then(|o| o.pointer("/spec/timeZone"))
        .filter(|z| !z.is_null());
    if old.is_none() || old_zone != zone {
        errors.extend(validate_time_zone(zone, &path.child("timeZone")));
    }
    errors.extend(one_of(
        spec.get("concurrencyPolicy")
            .and_then(Value::as_str)
            .unwrap_or_default(),
        &["Allow", "Forbid", "Replace"],
        &path.child("concurrencyPolicy"),
    ));
    let template = spec.get("jobTemplate").unwrap_or(&empty);
    let template_path = path.child("jobTemplate");
    let job_spec = template.get("spec").unwrap_or(&empty);
    errors.extend(validate_job_spec(job_spec, &template_path.child("spec")));
    if let Some(selector) = job_spec.get("selector").filter(|s| !s.is_null()) {
        errors.push(error_with_written_value(
            ErrorType::Invalid,
            &template_path.child("spec").child("selector"),
            &selector_text(selector),
            "`selector` will be auto-generated",
        ));
    }
    if job_spec.get("manualSelector") == Some(&Value::Bool(true)) {
        errors.push(FieldError::not_supported(
            &template_path.child("spec").child("manualSelector"),
            json!(true),
            &["nil".to_string(), "false".to_string()],
        ));
    }
    errors.extend(nonnegative(spec, "successfulJobsHistoryLimit", &path));
    errors.extend(nonnegative(spec, "failedJobsHistoryLimit", &path));
    errors
}

/// `validateTimeZone`: a name of the IANA database, not `Local`. Whether
/// the zone exists is not known here: names of the right shape pass.
fn validate_time_zone(zone: Option<&Value>, path: &Path) -> ErrorList {
    let mut errors = ErrorList::new();
    let Some(zone) = zone.and_then(Value::as_str) else {
        return errors;
    };
    if zone.is_empty() {
        errors.push(FieldError::invalid(
            path,
            zone,
            "timeZone must be nil or non-empty string",
        ));
        return errors;
    }
    let bad_part = zone.split('/').any(|part| {
        part == "."
            || part == ".."
            || part.starts_with('-')
            || part.is_empty()
            || part.len() > 14
            || !part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || ".-_+".contains(c))
    });
    if bad_part {
        errors.push(FieldError::invalid(
            path,
            zone,
            format!("unknown time zone {zone}"),
        ));
        return errors;
    }
    if zone.eq_ignore_ascii_case("Local") {
        errors.push(FieldError::invalid(
            path,
            zone,
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
        ));
    } else if !known_zone(zone) {
        errors.push(FieldError::invalid(
            path,
            zone,
            format!("unknown time zone {zone}"),
        ));
    }
    errors
}

/// Whether the system's time zone database (where Go's `LoadLocation`
/// looks first) knows `zone`; without a database every name is taken.
fn known_zone(zone: &str) -> bool {
    let database = std::path::Path::new("/usr/share/zoneinfo");
    !database.is_dir() || zone == "UTC" || database.join(zone).is_file()
}
