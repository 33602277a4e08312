//! A Job's status write: the checks of `ValidateJobUpdateStatus` that its
//! status strategy turns on when the write changes whether the Job is
//! complete or finished (`getStatusValidationOptions`) — a Complete
//! condition needs `SuccessCriteriaMet` and a completion time, a finished
//! Job a start time and no active pods.

use serde_json::Value;

use crate::machinery::field::{ErrorList, ErrorType, FieldError, Path, error_with_written_value};

/// Whether `job` has the condition `kind` with status True.
fn condition(job: &Value, kind: &str) -> bool {
    job.pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| c["type"] == kind && c["status"] == "True")
}

fn finished(job: &Value) -> bool {
    condition(job, "Complete") || condition(job, "Failed")
}

/// The checks of a status write of `new` over `old`.
pub(super) fn validate_status(new: &Value, old: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let status = Path::new(["status"]);
    let field = |name: &str| {
        new.pointer(&format!("/status/{name}"))
            .filter(|v| !v.is_null())
    };
    let complete = condition(new, "Complete");
    let complete_changed = complete != condition(old, "Complete");
    let failed_changed = condition(new, "Failed") != condition(old, "Failed");
    let finished_changed = finished(new) != finished(old);
    let omitted =
        |path: &Path, detail: &str| error_with_written_value(ErrorType::Invalid, path, detail, "");
    if (complete_changed || failed_changed) && complete && condition(new, "Failed") {
        errors.push(omitted(
            &status.child("conditions"),
            "cannot set Complete=True and Failed=true conditions",
        ));
    }
    if complete_changed {
        if let Some(time) = field("completionTime").filter(|_| !complete) {
            errors.push(FieldError::invalid(
                &status.child("completionTime"),
                time.clone(),
                "cannot set completionTime when there is no Complete=True condition",
            ));
        }
        if complete && field("completionTime").is_none() {
            errors.push(FieldError::required(
                &status.child("completionTime"),
                "completionTime is required for Complete jobs",
            ));
        }
        if complete && !condition(new, "SuccessCriteriaMet") {
            errors.push(omitted(
                &status.child("conditions"),
                "cannot set Complete=True condition without the SuccessCriteriaMet=true condition",
            ));
        }
    }
    let active = field("active").and_then(Value::as_i64).unwrap_or(0);
    let active_changed = active
        != old
            .pointer("/status/active")
            .and_then(Value::as_i64)
            .unwrap_or(0);
    if (finished_changed || active_changed) && active > 0 && finished(new) {
        errors.push(FieldError::invalid(
            &status.child("active"),
            active,
            "active>0 is invalid for finished job",
        ));
    }
    let start_changed =
        field("startTime") != old.pointer("/status/startTime").filter(|v| !v.is_null());
    if (finished_changed || start_changed) && field("startTime").is_none() && finished(new) {
        errors.push(FieldError::required(
            &status.child("startTime"),
            "startTime is required for finished job",
        ));
    }
    errors
}
