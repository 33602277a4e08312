//! Recording live reconciles and replaying them against another version of
//! a module.
//!
//! A **trace** is one reconcile as it happened: the module and its version,
//! the request (target, reason, attempt, the object), every host call with
//! its answer, and the result. Written as JSON lines, it is the trace
//! `rekon reconcile` prints (one line per call, then `{"result": ...}`)
//! after a `{"reconcile": {...}}` line that says what was asked of which
//! module; several traces follow each other in one file.
//!
//! - [`Recording`]: a module's reconciles kept while it runs, the last N in
//!   memory (served at `/recordings/<module>` on the metrics port) and, when
//!   asked, every one appended to a file. Secrets' `data` and `stringData`
//!   are redacted before anything is kept.
//! - [`replay`]: runs a trace's request against a module offline, its host
//!   calls answered from the recording, and says where the module's calls
//!   or result differ, and which calls the recording cannot answer.

use std::collections::VecDeque;
use std::io::Write as _;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use serde_json::{Value, json};

use crate::cluster::Cluster;
use crate::contract::{
    Action, ApiError, EventType, Gvk, Index, ObjectRef, PatchType, Propagation, Request, api_error,
};
use crate::runtime::{DispatchOptions, Module, Outcome, ReconcileError};
use crate::shared::{api_version, object_ref_json, object_ref_of};

/// What the first line of a trace names its format with.
pub const TRACE_FORMAT: &str = "rekon.dev/trace/v1";

/// The value redacted Secret data is replaced with: `redacted`, in base64.
pub const REDACTED: &str = "cmVkYWN0ZWQ=";

/// One reconcile as it happened.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    /// The module's name, as its manifest gives it.
    pub module: String,
    /// The module's version, as its manifest gives it.
    pub version: String,
    /// The contract the module was built for (`0.4.0`).
    pub contract: String,
    /// When the reconcile started (the guest's clock stands still at this
    /// time when it is replayed).
    pub time: SystemTime,
    /// The request: `target`, `reason`, `attempt`, `object`.
    pub request: Value,
    /// Every host call: `call`, `args`, `result`.
    pub calls: Vec<Value>,
    /// `{"ok": "done"}`, `{"ok": {"requeueAfterMs": N}}` or `{"error": {...}}`.
    pub result: Value,
}

impl Trace {
    /// The trace of one reconcile of `module` (its calls recorded).
    pub fn of(
        module: &crate::contract::Manifest,
        contract: &str,
        time: SystemTime,
        request: &Request,
        outcome: &Outcome,
    ) -> Trace {
        let object = request
            .object
            .as_deref()
            .and_then(|o| serde_json::from_str::<Value>(o).ok());
        let mut trace = Trace {
            module: module.name.clone(),
            version: module.version.clone(),
            contract: contract.to_string(),
            time,
            request: json!({
                "target": object_ref_json(&request.target),
                "reason": crate::controller::reason_name(request.reason),
                "attempt": request.attempt,
                "object": object,
            }),
            calls: calls_json(&outcome.calls),
            result: result_json(&outcome.result),
        };
        redact(&mut trace.request);
        for call in &mut trace.calls {
            redact(call);
        }
        trace
    }

    /// The trace as JSON lines, each ending with a newline.
    pub fn to_lines(&self) -> String {
        let time = chrono::DateTime::<chrono::Utc>::from(self.time)
            .to_rfc3339_opts(chrono::SecondsFormat::Micros, true);
        let mut out = json!({ "reconcile": {
            "format": TRACE_FORMAT,
            "module": self.module,
            "version": self.version,
            "contract": self.contract,
            "time": time,
            "request": self.request,
        }})
        .to_string();
        out.push('\n');
        for call in &self.calls {
            out.push_str(&call.to_string());
            out.push('\n');
        }
        out.push_str(&json!({ "result": self.result }).to_string());
        out.push('\n');
        out
    }

    /// The traces in JSON-lines `text` (`source` names it in errors).
    pub fn parse_all(text: &str, source: &str) -> Result<Vec<Trace>, String> {
        let mut traces = Vec::new();
        let mut open: Option<Trace> = None;
        for (number, line) in text.lines().enumerate() {
            let at = || format!("{source}:{}", number + 1);
            if line.trim().is_empty() {
                continue;
            }
            let value: Value =
                serde_json::from_str(line).map_err(|e| format!("{}: not JSON: {e}", at()))?;
            if let Some(header) = value.get("reconcile") {
                if open.is_some() {
                    return Err(format!(
                        "{}: a reconcile starts before the last one's result",
                        at()
                    ));
                }
                open = Some(header_trace(header).map_err(|why| format!("{}: {why}", at()))?);
            } else if value.get("call").is_some() {
                open.as_mut()
                    .ok_or_else(|| {
                        format!(
                            "{}: a call before any {{\"reconcile\": ...}} line (a trace records the request too: `rekon reconcile` output alone cannot be replayed)",
                            at()
                        )
                    })?
                    .calls
                    .push(value);
            } else if let Some(result) = value.get("result") {
                let mut trace = open.take().ok_or_else(|| {
                    format!("{}: a result without its {{\"reconcile\": ...}} line", at())
                })?;
                trace.result = result.clone();
                traces.push(trace);
            } else {
                return Err(format!(
                    "{}: neither a reconcile, a call nor a result",
                    at()
                ));
            }
        }
        if open.is_some() {
            return Err(format!("{source}: the last reconcile has no result"));
        }
        Ok(traces)
    }

    /// The request to replay.
    fn request(&self) -> Result<Request, String> {
        let target = object_ref_of(&json!({
            "apiVersion": self.request["target"]["apiVersion"],
            "kind": self.request["target"]["kind"],
            "metadata": {
                "name": self.request["target"]["name"],
                "namespace": self.request["target"]["namespace"],
            },
        }))
        .ok_or("the request names no target")?;
        let reason = self.request["reason"].as_str().unwrap_or_default();
        Ok(Request {
            target,
            object: self
                .request
                .get("object")
                .filter(|o| !o.is_null())
                .map(Value::to_string),
            reason: crate::controller::reason_of(reason)
                .ok_or_else(|| format!("unknown reason {reason:?}"))?,
            attempt: self.request["attempt"].as_u64().unwrap_or(0) as u32,
        })
    }

    /// `namespace/name` of the target, or `name`.
    pub fn target_name(&self) -> String {
        let target = &self.request["target"];
        crate::shared::namespaced_name(
            target["namespace"].as_str(),
            target["name"].as_str().unwrap_or_default(),
        )
    }
}

fn header_trace(header: &Value) -> Result<Trace, String> {
    let format = header["format"].as_str().unwrap_or_default();
    if format != TRACE_FORMAT {
        return Err(format!(
            "a trace of format {format:?}, this rekon reads {TRACE_FORMAT:?}"
        ));
    }
    let time = header["time"]
        .as_str()
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .map(|t| SystemTime::from(t.with_timezone(&chrono::Utc)))
        .ok_or("a reconcile without its time")?;
    let text = |key: &str| header[key].as_str().unwrap_or_default().to_string();
    Ok(Trace {
        module: text("module"),
        version: text("version"),
        contract: text("contract"),
        time,
        request: header["request"].clone(),
        calls: Vec::new(),
        result: Value::Null,
    })
}

/// Recorded calls as JSON (`call`, `args`, `result`).
pub(crate) fn calls_json(calls: &[crate::CallRecord]) -> Vec<Value> {
    calls
        .iter()
        .map(|c| serde_json::to_value(c).unwrap_or_default())
        .collect()
}

/// A reconcile's result as a trace and `rekon reconcile` print it:
/// `{"ok": "done"}`, `{"ok": {"requeueAfterMs": N}}` or
/// `{"error": {"kind", "message", "retry"}}`.
pub fn result_json(result: &Result<Action, ReconcileError>) -> Value {
    match result {
        Ok(Action::Done) => json!({ "ok": "done" }),
        Ok(Action::RequeueAfter(ms)) => json!({ "ok": { "requeueAfterMs": ms } }),
        Err(error) => json!({ "error": {
            "kind": error.metric_label(),
            "message": error.to_string(),
            "retry": error.retry(),
        }}),
    }
}

/// Replaces the `data` and `stringData` values of every Secret in `value`.
pub fn redact(value: &mut Value) {
    match value {
        Value::Object(map) => {
            let secret = map.get("kind").and_then(Value::as_str) == Some("Secret")
                && map.get("apiVersion").and_then(Value::as_str) == Some("v1");
            for (key, field) in map.iter_mut() {
                match (secret, key.as_str(), field) {
                    (true, "data", Value::Object(data)) => {
                        data.values_mut().for_each(|v| *v = json!(REDACTED));
                    }
                    (true, "stringData", Value::Object(data)) => {
                        data.values_mut().for_each(|v| *v = json!("redacted"));
                    }
                    (_, _, field) => redact(field),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact),
        // Answers carry objects as JSON text.
        Value::String(text) if text.contains("\"Secret\"") => {
            if let Ok(mut inner) = serde_json::from_str::<Value>(text) {
                redact(&mut inner);
                *text = inner.to_string();
            }
        }
        _ => {}
    }
}

/// A module's reconciles kept while it runs: the last `last` in memory,
/// and every one appended to a file when one is named.
pub struct Recording {
    last: usize,
    ring: Mutex<VecDeque<Trace>>,
    file: Option<Mutex<std::fs::File>>,
}

impl std::fmt::Debug for Recording {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recording")
            .field("last", &self.last)
            .finish_non_exhaustive()
    }
}

impl Recording {
    /// A recording keeping the last `last` traces, appending each to `file`
    /// too when given (created if missing).
    pub fn new(last: usize, file: Option<&Path>) -> std::io::Result<Recording> {
        let file = match file {
            Some(path) => Some(Mutex::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(path)?,
            )),
            None => None,
        };
        Ok(Recording {
            last,
            ring: Mutex::new(VecDeque::new()),
            file,
        })
    }

    /// Keeps one more trace.
    pub fn push(&self, trace: Trace) {
        if let Some(file) = &self.file {
            let mut file = file.lock().expect("recording file lock");
            if let Err(error) = file.write_all(trace.to_lines().as_bytes()) {
                tracing::warn!(module = %trace.module, error = %error, "cannot append to the recording file");
            }
        }
        if self.last == 0 {
            return;
        }
        let mut ring = self.ring.lock().expect("recording lock");
        if ring.len() == self.last {
            ring.pop_front();
        }
        ring.push_back(trace);
    }

    /// The traces kept in memory, oldest first.
    pub fn traces(&self) -> Vec<Trace> {
        self.ring
            .lock()
            .expect("recording lock")
            .iter()
            .cloned()
            .collect()
    }
}

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

/// What identifies a call to the cluster for replay: the call and what it
/// is about (kind, namespace, name; a list's selector; an index and value;
/// an Event's object and reason).
fn call_key(call: &str, args: &Value) -> String {
    let text = |v: &Value| match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    let about = match call {
        "list" => format!(
            "{} {} {} {}",
            text(&args["apiVersion"]),
            text(&args["kind"]),
            text(&args["namespace"]),
            text(&args["labelSelector"])
        ),
        "list-by-index" => format!(
            "{} {} {}",
            text(&args["index"]),
            text(&args["value"]),
            text(&args["namespace"])
        ),
        "create" => format!(
            "{} {} {} {}",
            text(&args["apiVersion"]),
            text(&args["kind"]),
            text(&args["namespace"]),
            text(&args["object"]["metadata"]["name"])
        ),
        "record-event" => format!(
            "{} {} {} {} {}",
            text(&args["regarding"]["apiVersion"]),
            text(&args["regarding"]["kind"]),
            text(&args["regarding"]["namespace"]),
            text(&args["regarding"]["name"]),
            text(&args["reason"])
        ),
        _ => format!(
            "{} {} {} {}",
            text(&args["apiVersion"]),
            text(&args["kind"]),
            text(&args["namespace"]),
            text(&args["name"])
        ),
    };
    format!("{call} {about}")
}

/// A cluster that answers from a recording: each call gets the answer the
/// recording has for the first unused call with the same key.
struct ReplayCluster {
    answers: Mutex<Vec<(String, Option<Value>)>>,
    unanswered: Mutex<Vec<String>>,
}

impl ReplayCluster {
    fn new(calls: &[Value]) -> ReplayCluster {
        ReplayCluster {
            answers: Mutex::new(
                calls
                    .iter()
                    .filter(|c| c["call"] != "log")
                    .map(|c| {
                        (
                            call_key(c["call"].as_str().unwrap_or_default(), &c["args"]),
                            Some(c["result"].clone()),
                        )
                    })
                    .collect(),
            ),
            unanswered: Mutex::new(Vec::new()),
        }
    }

    fn unanswered(&self) -> Vec<String> {
        self.unanswered.lock().expect("replay lock").clone()
    }

    /// The recorded answer to the call `key`: its `ok` value, or its error.
    fn answer(&self, key: String) -> Result<Value, ApiError> {
        let mut answers = self.answers.lock().expect("replay lock");
        let found = answers
            .iter_mut()
            .find(|(k, answer)| *k == key && answer.is_some())
            .and_then(|(_, answer)| answer.take());
        let Some(answer) = found else {
            drop(answers);
            let message = format!("the recording has no answer to {key}");
            self.unanswered.lock().expect("replay lock").push(key);
            return Err(api_error(404, "NotRecorded", &message));
        };
        match answer.get("error") {
            Some(error) => Err(api_error(
                error["code"].as_u64().unwrap_or(500) as u16,
                error["reason"].as_str().unwrap_or_default(),
                error["message"].as_str().unwrap_or_default(),
            )),
            None => Ok(answer.get("ok").cloned().unwrap_or(Value::Null)),
        }
    }

    fn text(&self, key: String) -> Result<String, ApiError> {
        self.answer(key).map(|v| v.to_string())
    }
}

/// [`call_key`] of a call about one object.
fn target_key(call: &str, target: &ObjectRef) -> String {
    call_key(call, &object_ref_json(target))
}

#[async_trait::async_trait]
impl Cluster for ReplayCluster {
    async fn get(&self, target: &ObjectRef) -> Result<String, ApiError> {
        self.text(target_key("get", target))
    }

    async fn list(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        label_selector: Option<&str>,
    ) -> Result<Vec<String>, ApiError> {
        let args = json!({ "apiVersion": api_version(kind), "kind": kind.kind,
            "namespace": namespace, "labelSelector": label_selector });
        items(self.answer(call_key("list", &args))?)
    }

    async fn list_by_index(
        &self,
        index: &Index,
        value: &str,
        namespace: Option<&str>,
    ) -> Result<Vec<String>, ApiError> {
        let args = json!({ "index": index.name, "value": value, "namespace": namespace });
        items(self.answer(call_key("list-by-index", &args))?)
    }

    async fn create(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        object: &str,
        _field_manager: &str,
    ) -> Result<String, ApiError> {
        let object: Value = serde_json::from_str(object).unwrap_or_default();
        let args = json!({ "apiVersion": api_version(kind), "kind": kind.kind,
            "namespace": namespace, "object": object });
        self.text(call_key("create", &args))
    }

    async fn replace(
        &self,
        target: &ObjectRef,
        _object: &str,
        status: bool,
        _field_manager: &str,
    ) -> Result<String, ApiError> {
        let call = if status { "replace-status" } else { "replace" };
        self.text(target_key(call, target))
    }

    async fn patch(
        &self,
        target: &ObjectRef,
        _patch_type: &PatchType,
        _body: &str,
        status: bool,
        _field_manager: &str,
    ) -> Result<String, ApiError> {
        let call = if status { "patch-status" } else { "patch" };
        self.text(target_key(call, target))
    }

    async fn delete(
        &self,
        target: &ObjectRef,
        _propagation: Option<Propagation>,
    ) -> Result<(), ApiError> {
        self.answer(target_key("delete", target)).map(|_| ())
    }

    async fn record_event(
        &self,
        regarding: &ObjectRef,
        _event_type: EventType,
        reason: &str,
        _message: &str,
        _component: &str,
    ) -> Result<(), ApiError> {
        let args = json!({ "regarding": object_ref_json(regarding), "reason": reason });
        self.answer(call_key("record-event", &args)).map(|_| ())
    }
}

/// A list's recorded items, each as JSON text.
fn items(answer: Value) -> Result<Vec<String>, ApiError> {
    match answer {
        Value::Array(items) => Ok(items.iter().map(Value::to_string).collect()),
        other => Err(api_error(
            500,
            "InternalError",
            &format!("the recorded answer to a list is not a list: {other}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn secrets_data_is_redacted_wherever_it_appears() {
        let secret = json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "s"}, "data": {"password": "aHVudGVyMg=="},
            "stringData": {"token": "t0k3n"}});
        let mut call = json!({"call": "list", "args": {}, "result": {"ok": [secret.clone()]}});
        redact(&mut call);
        assert_eq!(call["result"]["ok"][0]["data"]["password"], REDACTED);
        assert_eq!(call["result"]["ok"][0]["stringData"]["token"], "redacted");
        // An object given as JSON text (a patch body) too.
        let mut args = json!({"patch": secret.to_string()});
        redact(&mut args);
        assert!(!args["patch"].as_str().unwrap().contains("aHVudGVyMg"));
        // A ConfigMap's data is kept.
        let mut cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}});
        redact(&mut cm);
        assert_eq!(cm["data"]["a"], "b");
    }

    #[test]
    fn a_trace_reads_back_as_written_and_bad_files_say_where() {
        let trace = Trace {
            module: "app".into(),
            version: "1.0.0".into(),
            contract: "0.4.0".into(),
            time: SystemTime::UNIX_EPOCH + Duration::from_micros(1_700_000_000_123_456),
            request: json!({"target": {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "default", "name": "a"},
                "reason": "added", "attempt": 0, "object": null}),
            calls: vec![json!({"call": "get", "args": {"name": "a"}, "result": {"ok": null}})],
            result: json!({"ok": "done"}),
        };
        let text = format!("{}{}", trace.to_lines(), trace.to_lines());
        assert_eq!(
            Trace::parse_all(&text, "t").unwrap(),
            vec![trace.clone(), trace]
        );
        let error = Trace::parse_all("{\"call\": \"get\"}\n", "t.jsonl").unwrap_err();
        assert!(error.starts_with("t.jsonl:1: a call before any"), "{error}");
        let other = "{\"reconcile\": {\"format\": \"rekon.dev/trace/v9\"}}\n";
        let error = Trace::parse_all(other, "t.jsonl").unwrap_err();
        assert!(
            error.contains("this rekon reads \"rekon.dev/trace/v1\""),
            "{error}"
        );
    }
}
