//! Replaying a trace against a module offline: its host calls answered
//! from the recording, and what the module did compared with what was
//! recorded.

use std::sync::Arc;

use serde_json::Value;

use super::cluster::ReplayCluster;
use super::trace::{Trace, calls_json, redact, result_json};
use crate::runtime::{DispatchOptions, Module};

/// How a replayed reconcile compares with its recording.
#[derive(Debug)]
pub struct Replayed {
    /// `namespace/name` of the object.
    pub target: String,
    /// The request's reason.
    pub reason: String,
    /// What differs: each a line saying which call (or the result) and how.
    pub differences: Vec<String>,
    /// The calls the recording has no answer to (answered `404 NotRecorded`).
    pub unanswered: Vec<String>,
}

impl Replayed {
    /// Whether the module did what the recording did.
    pub fn agrees(&self) -> bool {
        self.differences.is_empty() && self.unanswered.is_empty()
    }
}

/// Runs `trace`'s request against `module`, its host calls answered from
/// the trace, and compares what the module did with what was recorded.
/// A trace of another module is refused.
pub async fn replay(module: &Module, trace: &Trace) -> Result<Replayed, String> {
    let name = &module.manifest().name;
    if &trace.module != name {
        return Err(format!(
            "a reconcile of module {:?}, not of {name:?}",
            trace.module
        ));
    }
    let request = trace.request()?;
    let cluster = Arc::new(ReplayCluster::new(&trace.calls));
    let outcome = module
        .reconcile(
            cluster.clone(),
            &request,
            DispatchOptions {
                record: true,
                wall_clock: Some(trace.time),
                ..DispatchOptions::default()
            },
        )
        .await;
    let mut replayed = calls_json(&outcome.calls);
    replayed.iter_mut().for_each(redact);
    let mut differences = compare_calls(&trace.calls, &replayed);
    let result = result_json(&outcome.result);
    if result != trace.result {
        differences.push(format!(
            "result: recorded {}, replayed {}",
            trace.result, result
        ));
    }
    Ok(Replayed {
        target: trace.target_name(),
        reason: trace.request["reason"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        differences,
        unanswered: cluster.unanswered(),
    })
}

/// The calls that reach the cluster (logs are left out of comparisons).
fn cluster_calls(calls: &[Value]) -> Vec<&Value> {
    calls.iter().filter(|c| c["call"] != "log").collect()
}

/// Where two call sequences differ, call by call (name and arguments).
fn compare_calls(recorded: &[Value], replayed: &[Value]) -> Vec<String> {
    let (recorded, replayed) = (cluster_calls(recorded), cluster_calls(replayed));
    let mut differences = Vec::new();
    for i in 0..recorded.len().max(replayed.len()) {
        match (recorded.get(i), replayed.get(i)) {
            (Some(a), Some(b)) if a["call"] == b["call"] && a["args"] == b["args"] => {}
            // The same call with other arguments: a unified diff of them,
            // as `rekon rollout status` shows a shadow's.
            (Some(a), Some(b)) if a["call"] == b["call"] => {
                let pretty = |v: &Value| serde_json::to_string_pretty(v).unwrap_or_default();
                let lines = rekon_rules::diff_lines(&pretty(&a["args"]), &pretty(&b["args"]), 3);
                let mut text = format!(
                    "call {}: {} with other arguments\n--- recorded\n+++ replayed",
                    i + 1,
                    a["call"].as_str().unwrap_or_default()
                );
                for line in lines {
                    text.push('\n');
                    text.push_str(&line);
                }
                differences.push(text);
            }
            (Some(a), Some(b)) => differences.push(format!(
                "call {}: recorded {} {}, replayed {} {}",
                i + 1,
                a["call"].as_str().unwrap_or_default(),
                a["args"],
                b["call"].as_str().unwrap_or_default(),
                b["args"]
            )),
            (Some(a), None) => differences.push(format!(
                "call {}: recorded {} {}, not made on replay",
                i + 1,
                a["call"].as_str().unwrap_or_default(),
                a["args"]
            )),
            (None, Some(b)) => differences.push(format!(
                "call {}: made on replay only: {} {}",
                i + 1,
                b["call"].as_str().unwrap_or_default(),
                b["args"]
            )),
            (None, None) => {}
        }
    }
    differences
}
