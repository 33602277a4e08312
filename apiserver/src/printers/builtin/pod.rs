//! A Pod's row as kubectl prints it (`printPod` in the real server's
//! `pkg/printers/internalversion`): ready containers of all (restartable
//! init containers count), the status from its phase, reason, init and
//! container states, the restarts, and its readiness gates.

use serde_json::{Value, json};

use super::super::column::age;
use super::cells::items;

/// What a Pod's row shows of its containers.
pub(super) struct PodStatus {
    pub(super) ready: usize,
    pub(super) total: usize,
    pub(super) reason: String,
    pub(super) restarts: String,
}

fn text<'a>(o: &'a Value, pointer: &str) -> &'a str {
    o.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

/// A sidecar: an init container that restarts always.
fn restartable(init: Option<&Value>) -> bool {
    init.is_some_and(|c| c["restartPolicy"] == "Always")
}

/// A terminated state's reason, or its signal or exit code.
fn terminated(state: &Value, prefix: &str) -> String {
    let reason = state["reason"].as_str().unwrap_or("");
    if !reason.is_empty() {
        return format!("{prefix}{reason}");
    }
    match state["signal"].as_i64().filter(|s| *s != 0) {
        Some(signal) => format!("{prefix}Signal:{signal}"),
        None => format!(
            "{prefix}ExitCode:{}",
            state["exitCode"].as_i64().unwrap_or(0)
        ),
    }
}

/// The latest `lastState.terminated.finishedAt` of `statuses`, if any.
fn last_restart<'a>(statuses: impl Iterator<Item = &'a Value>) -> Option<&'a str> {
    statuses
        .filter_map(|s| {
            s.pointer("/lastState/terminated/finishedAt")
                .and_then(Value::as_str)
        })
        .max()
}

/// `printPod`'s status of `o`.
pub(super) fn status(o: &Value) -> PodStatus {
    let inits = items(o, "/spec/initContainers");
    let init = |name: &Value| inits.iter().find(|c| c["name"] == *name);
    let total =
        items(o, "/spec/containers").len() + inits.iter().filter(|c| restartable(Some(c))).count();
    let phase = text(o, "/status/phase");
    let mut reason = match text(o, "/status/reason") {
        "" => phase.to_string(),
        given => given.to_string(),
    };
    let gated = items(o, "/status/conditions")
        .iter()
        .any(|c| c["type"] == "PodScheduled" && c["reason"] == "SchedulingGated");
    if gated {
        reason = "SchedulingGated".into();
    }
    let mut ready = 0;
    let init_statuses = items(o, "/status/initContainerStatuses");
    let mut sidecar_restarts = 0;
    let mut initializing = false;
    for (i, status) in init_statuses.iter().enumerate() {
        let sidecar = restartable(init(&status["name"]));
        if sidecar {
            sidecar_restarts += status["restartCount"].as_i64().unwrap_or(0);
        }
        let state = &status["state"];
        if state["terminated"].is_object() && state["terminated"]["exitCode"].as_i64() == Some(0) {
            continue;
        }
        if sidecar && status["started"] == true {
            if status["ready"] == true {
                ready += 1;
            }
            continue;
        }
        initializing = true;
        let waiting = state["waiting"]["reason"].as_str().unwrap_or("");
        reason = if state["terminated"].is_object() {
            terminated(&state["terminated"], "Init:")
        } else if !waiting.is_empty() && waiting != "PodInitializing" {
            format!("Init:{waiting}")
        } else {
            format!("Init:{i}/{}", inits.len())
        };
        break;
    }
    let initialized = items(o, "/status/conditions")
        .iter()
        .any(|c| c["type"] == "Initialized" && c["status"] == "True");
    let mut restarts = init_statuses
        .iter()
        .filter_map(|s| s["restartCount"].as_i64())
        .sum::<i64>();
    let mut last = last_restart(init_statuses.iter());
    if !initializing || initialized {
        restarts = sidecar_restarts;
        last = last_restart(
            init_statuses
                .iter()
                .filter(|s| restartable(init(&s["name"]))),
        );
        let statuses = items(o, "/status/containerStatuses");
        let mut running = false;
        for status in statuses.iter().rev() {
            restarts += status["restartCount"].as_i64().unwrap_or(0);
            let state = &status["state"];
            let waiting = state["waiting"]["reason"].as_str().unwrap_or("");
            if !waiting.is_empty() {
                reason = waiting.to_string();
            } else if state["terminated"].is_object() {
                reason = terminated(&state["terminated"], "");
            } else if status["ready"] == true && state["running"].is_object() {
                running = true;
                ready += 1;
            }
        }
        last = last.max(last_restart(statuses.iter()));
        if reason == "Completed" && running {
            let has_ready = items(o, "/status/conditions")
                .iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True");
            reason = if has_ready { "Running" } else { "NotReady" }.into();
        }
    }
    let deleting = o
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|t| !t.is_null());
    if deleting && text(o, "/status/reason") == "NodeLost" {
        reason = "Unknown".into();
    } else if deleting && !matches!(phase, "Succeeded" | "Failed") {
        reason = "Terminating".into();
    }
    if reason.is_empty() {
        reason = "Pending".into();
    }
    let restarts = match last {
        Some(at) if restarts != 0 => format!("{restarts} ({} ago)", age(at)),
        _ => restarts.to_string(),
    };
    PodStatus {
        ready,
        total,
        reason,
        restarts,
    }
}

/// The readiness gates whose condition is True, of all (`<none>`).
pub(super) fn readiness_gates(o: &Value) -> Value {
    let gates = items(o, "/spec/readinessGates");
    if gates.is_empty() {
        return json!("<none>");
    }
    let conditions = items(o, "/status/conditions");
    let met = gates
        .iter()
        .filter(|g| {
            conditions
                .iter()
                .find(|c| c["type"] == g["conditionType"])
                .is_some_and(|c| c["status"] == "True")
        })
        .count();
    json!(format!("{met}/{}", gates.len()))
}

/// A finished Pod's row condition (`Completed`), as `printPod` adds it.
pub(crate) fn row_conditions(o: &Value) -> Option<Value> {
    if o["kind"] != "Pod" || o["apiVersion"] != "v1" {
        return None;
    }
    match text(o, "/status/phase") {
        "Succeeded" => Some(
            json!([{"type": "Completed", "status": "True", "reason": "Succeeded", "message": "The pod has completed successfully."}]),
        ),
        "Failed" => Some(
            json!([{"type": "Completed", "status": "True", "reason": "Failed", "message": "The pod failed."}]),
        ),
        _ => None,
    }
}
