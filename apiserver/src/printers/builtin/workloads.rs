//! Printers of workloads: apps and batch.

use serde_json::{Value, json};

use super::cells::{
    condition, containers, int, items, kind_resource, labels, len, ready_of_desired, selector,
    text_or,
};
use super::columns::{CONTAINERS, IMAGES, age_column, column, wide};
use crate::printers::column::{Column, age, human_duration};

/// Desired, Current, Ready (ReplicaSet, ReplicationController), with the
/// selector printed by `selector`.
pub(super) fn replicated(selector: fn(&Value) -> Value) -> Vec<Column> {
    vec![
        column(
            "Desired",
            "integer",
            "Replicas is the number of desired replicas.",
            |o| {
                json!(
                    o.pointer("/spec/replicas")
                        .and_then(Value::as_i64)
                        .unwrap_or(1)
                )
            },
        ),
        column(
            "Current",
            "integer",
            "Replicas is the most recently observed number of replicas.",
            |o| int(o, "/status/replicas"),
        ),
        column(
            "Ready",
            "integer",
            "The number of ready replicas for this replica set.",
            |o| int(o, "/status/readyReplicas"),
        ),
        age_column(),
        wide("Containers", "string", CONTAINERS, |o| {
            containers(o, "/spec/template/spec", "name")
        }),
        wide("Images", "string", IMAGES, |o| {
            containers(o, "/spec/template/spec", "image")
        }),
        wide(
            "Selector",
            "string",
            "Selector is a label query over pods that should match the replica count.",
            selector,
        ),
    ]
}

pub(super) fn apps(kind: &str) -> Option<Vec<Column>> {
    let template = |mut columns: Vec<Column>| {
        columns.push(wide("Containers", "string", CONTAINERS, |o| {
            containers(o, "/spec/template/spec", "name")
        }));
        columns.push(wide("Images", "string", IMAGES, |o| {
            containers(o, "/spec/template/spec", "image")
        }));
        columns
    };
    let selector_column = || {
        wide("Selector", "string", "Label selector for pods.", |o| {
            json!(selector(o.pointer("/spec/selector")))
        })
    };
    Some(match kind {
        "Deployment" => {
            let mut columns = template(vec![
                column(
                    "Ready",
                    "string",
                    "Number of the pod with ready state",
                    ready_of_desired,
                ),
                column(
                    "Up-to-date",
                    "integer",
                    "Total number of non-terminated pods targeted by this deployment that have the desired template spec.",
                    |o| int(o, "/status/updatedReplicas"),
                ),
                column(
                    "Available",
                    "integer",
                    "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.",
                    |o| int(o, "/status/availableReplicas"),
                ),
                age_column(),
            ]);
            columns.push(selector_column());
            columns
        }
        "ReplicaSet" => replicated(|o| json!(selector(o.pointer("/spec/selector")))),
        "StatefulSet" => template(vec![
            column(
                "Ready",
                "string",
                "Number of the pod with ready state",
                ready_of_desired,
            ),
            age_column(),
        ]),
        "DaemonSet" => {
            let mut columns = template(vec![
                column(
                    "Desired",
                    "integer",
                    "The total number of nodes that should be running the daemon pod.",
                    |o| int(o, "/status/desiredNumberScheduled"),
                ),
                column(
                    "Current",
                    "integer",
                    "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod.",
                    |o| int(o, "/status/currentNumberScheduled"),
                ),
                column(
                    "Ready",
                    "integer",
                    "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition.",
                    |o| int(o, "/status/numberReady"),
                ),
                column(
                    "Up-to-date",
                    "integer",
                    "The total number of nodes that are running updated daemon pod",
                    |o| int(o, "/status/updatedNumberScheduled"),
                ),
                column(
                    "Available",
                    "integer",
                    "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available.",
                    |o| int(o, "/status/numberAvailable"),
                ),
                column(
                    "Node Selector",
                    "string",
                    "NodeSelector is a selector which must be true for the pod to fit on a node.",
                    |o| json!(labels(o.pointer("/spec/template/spec/nodeSelector"))),
                ),
                age_column(),
            ]);
            columns.push(selector_column());
            columns
        }
        "ControllerRevision" => vec![
            column("Controller", "string", "Controller of the object", |o| {
                let owner = items(o, "/metadata/ownerReferences")
                    .into_iter()
                    .find(|r| r["controller"] == true);
                json!(owner.map_or("<none>".into(), |r| format!(
                    "{}/{}",
                    kind_resource(r["kind"].as_str().unwrap_or("")),
                    r["name"].as_str().unwrap_or("")
                )))
            }),
            column(
                "Revision",
                "integer",
                "Revision indicates the revision of the state represented by Data.",
                |o| int(o, "/revision"),
            ),
            age_column(),
        ],
        _ => return None,
    })
}

pub(super) fn batch(kind: &str) -> Option<Vec<Column>> {
    Some(match kind {
        "Job" => vec![
            column("Status", "string", "Status of the job.", job_status),
            column(
                "Completions",
                "string",
                "The completion status of the job.",
                |o| {
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
                },
            ),
            column(
                "Duration",
                "string",
                "Time required to complete the job.",
                |o| {
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
                },
            ),
            age_column(),
            wide("Containers", "string", CONTAINERS, |o| {
                containers(o, "/spec/template/spec", "name")
            }),
            wide("Images", "string", IMAGES, |o| {
                containers(o, "/spec/template/spec", "image")
            }),
            wide(
                "Selector",
                "string",
                "A label query over pods that should match the pod count.",
                |o| json!(selector(o.pointer("/spec/selector"))),
            ),
        ],
        "CronJob" => vec![
            column("Schedule", "string", "The schedule in Cron format.", |o| {
                text_or(o, "/spec/schedule", "")
            }),
            column(
                "Timezone",
                "string",
                "The time zone name for the given schedule.",
                |o| text_or(o, "/spec/timeZone", "<none>"),
            ),
            column(
                "Suspend",
                "boolean",
                "This flag tells the controller to suspend subsequent executions.",
                |o| {
                    // A string, as Go's printBoolPtr prints it; unset is
                    // false, as the real server defaults it.
                    let suspended = o.pointer("/spec/suspend").and_then(Value::as_bool);
                    json!(if suspended == Some(true) {
                        "True"
                    } else {
                        "False"
                    })
                },
            ),
            column(
                "Active",
                "integer",
                "A list of pointers to currently running jobs.",
                |o| json!(len(o, "/status/active")),
            ),
            column(
                "Last Schedule",
                "string",
                "Information when was the last time the job was successfully scheduled.",
                |o| match o
                    .pointer("/status/lastScheduleTime")
                    .and_then(Value::as_str)
                {
                    Some(t) => json!(age(t)),
                    None => json!("<none>"),
                },
            ),
            age_column(),
            wide("Containers", "string", CONTAINERS, |o| {
                containers(o, "/spec/jobTemplate/spec/template/spec", "name")
            }),
            wide("Images", "string", IMAGES, |o| {
                containers(o, "/spec/jobTemplate/spec/template/spec", "image")
            }),
            wide(
                "Selector",
                "string",
                "A label query over pods that should match the pod count.",
                |o| json!(selector(o.pointer("/spec/jobTemplate/spec/selector"))),
            ),
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
