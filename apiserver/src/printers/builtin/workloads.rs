//! Printers of workloads: apps and batch.

use serde_json::{Value, json};

use super::cells::{
    condition, containers, int, items, kind_resource, labels, len, ready_of_desired, selector,
    text_or,
};
use super::columns::{Cells, column};
use crate::printers::column::{age, human_duration};

/// Desired, Current, Ready (ReplicaSet, ReplicationController), with the
/// selector printed by `selector`.
pub(super) fn replicated(selector: fn(&Value) -> Value) -> Cells {
    vec![
        column("Desired", |o| {
            json!(
                o.pointer("/spec/replicas")
                    .and_then(Value::as_i64)
                    .unwrap_or(1)
            )
        }),
        column("Current", |o| int(o, "/status/replicas")),
        column("Ready", |o| int(o, "/status/readyReplicas")),
        column("Containers", |o| {
            containers(o, "/spec/template/spec", "name")
        }),
        column("Images", |o| containers(o, "/spec/template/spec", "image")),
        column("Selector", selector),
    ]
}

pub(super) fn apps(kind: &str) -> Option<Cells> {
    let template = |mut columns: Cells| {
        columns.push(column("Containers", |o| {
            containers(o, "/spec/template/spec", "name")
        }));
        columns.push(column("Images", |o| {
            containers(o, "/spec/template/spec", "image")
        }));
        columns
    };
    let selector_column = || column("Selector", |o| json!(selector(o.pointer("/spec/selector"))));
    Some(match kind {
        "Deployment" => {
            let mut columns = template(vec![
                column("Ready", ready_of_desired),
                column("Up-to-date", |o| int(o, "/status/updatedReplicas")),
                column("Available", |o| int(o, "/status/availableReplicas")),
            ]);
            columns.push(selector_column());
            columns
        }
        "ReplicaSet" => replicated(|o| json!(selector(o.pointer("/spec/selector")))),
        "StatefulSet" => template(vec![column("Ready", ready_of_desired)]),
        "DaemonSet" => {
            let mut columns = template(vec![
                column("Desired", |o| int(o, "/status/desiredNumberScheduled")),
                column("Current", |o| int(o, "/status/currentNumberScheduled")),
                column("Ready", |o| int(o, "/status/numberReady")),
                column("Up-to-date", |o| int(o, "/status/updatedNumberScheduled")),
                column("Available", |o| int(o, "/status/numberAvailable")),
                column("Node Selector", |o| {
                    json!(labels(o.pointer("/spec/template/spec/nodeSelector")))
                }),
            ]);
            columns.push(selector_column());
            columns
        }
        "ControllerRevision" => vec![
            column("Controller", |o| {
                let owner = items(o, "/metadata/ownerReferences")
                    .iter()
                    .find(|r| r["controller"] == true);
                json!(owner.map_or("<none>".into(), |r| format!(
                    "{}/{}",
                    kind_resource(r["kind"].as_str().unwrap_or("")),
                    r["name"].as_str().unwrap_or("")
                )))
            }),
            column("Revision", |o| int(o, "/revision")),
        ],
        _ => return None,
    })
}

pub(super) fn batch(kind: &str) -> Option<Cells> {
    Some(match kind {
        "Job" => vec![
            column("Status", job_status),
            column("Completions", |o| {
                let succeeded = o
                    .pointer("/status/succeeded")
                    .and_then(Value::as_i64)
                    .unwrap_or(0);
                let parallelism = o
                    .pointer("/spec/parallelism")
                    .and_then(Value::as_i64)
                    .unwrap_or(0);
                json!(
                    match o.pointer("/spec/completions").and_then(Value::as_i64) {
                        Some(completions) => format!("{succeeded}/{completions}"),
                        None if parallelism > 1 => format!("{succeeded}/1 of {parallelism}"),
                        None => format!("{succeeded}/1"),
                    }
                )
            }),
            column("Duration", |o| {
                let at = |p: &str| {
                    o.pointer(p)
                        .and_then(Value::as_str)
                        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
                        .map(|t| t.with_timezone(&chrono::Utc))
                };
                json!(match at("/status/startTime") {
                    None => String::new(),
                    Some(start) => {
                        let end = at("/status/completionTime").unwrap_or_else(chrono::Utc::now);
                        human_duration((end - start).num_seconds())
                    }
                })
            }),
            column("Containers", |o| {
                containers(o, "/spec/template/spec", "name")
            }),
            column("Images", |o| containers(o, "/spec/template/spec", "image")),
            column("Selector", |o| json!(selector(o.pointer("/spec/selector")))),
        ],
        "CronJob" => vec![
            column("Schedule", |o| text_or(o, "/spec/schedule", "")),
            column("Timezone", |o| text_or(o, "/spec/timeZone", "<none>")),
            column("Suspend", |o| {
                // A string, as Go's printBoolPtr prints it; unset is
                // false, as the real server defaults it.
                let suspended = o.pointer("/spec/suspend").and_then(Value::as_bool);
                json!(if suspended == Some(true) {
                    "True"
                } else {
                    "False"
                })
            }),
            column("Active", |o| json!(len(o, "/status/active"))),
            column("Last Schedule", |o| {
                match o
                    .pointer("/status/lastScheduleTime")
                    .and_then(Value::as_str)
                {
                    Some(t) => json!(age(t)),
                    None => json!("<none>"),
                }
            }),
            column("Containers", |o| {
                containers(o, "/spec/jobTemplate/spec/template/spec", "name")
            }),
            column("Images", |o| {
                containers(o, "/spec/jobTemplate/spec/template/spec", "image")
            }),
            column("Selector", |o| {
                json!(selector(o.pointer("/spec/jobTemplate/spec/selector")))
            }),
        ],
        _ => return None,
    })
}

pub(super) fn job_status(o: &Value) -> Value {
    if o.pointer("/metadata/deletionTimestamp")
        .is_some_and(|t| !t.is_null())
    {
        return json!("Terminating");
    }
    for state in [
        "Complete",
        "Failed",
        "FailureTarget",
        "SuccessCriteriaMet",
        "Suspended",
    ] {
        if condition(o, state).as_deref() == Some("True") {
            return json!(state);
        }
    }
    json!("Running")
}
