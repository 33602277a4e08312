//! The field selectors a Job list or watch takes (beside `job.rs`, which
//! holds the rest of the Job's rules): batch/v1's Job labels (`pkg/apis/
//! batch/v1/conversion.go`, which words its refusal for Job) and the Job's
//! field set (`JobToSelectableFields` in `pkg/registry/batch/job/strategy.go`:
//! `status.successful` is the count of succeeded pods, 0 when unset).

use serde_json::Value;

use crate::apis::strategy::Selectable;
use crate::meta::selector::{Refusal, object_meta_fields};

/// The Job's field selectors.
pub(crate) static SELECTABLE: Selectable = Selectable {
    labels: &[
        ("metadata.name", "metadata.name"),
        ("metadata.namespace", "metadata.namespace"),
        ("status.successful", "status.successful"),
    ],
    refusal: Refusal::ForKind("Job"),
    fields: |job| {
        let mut set = object_meta_fields(job);
        let succeeded = job
            .pointer("/status/succeeded")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        set.insert("status.successful".into(), succeeded.to_string());
        set
    },
};
