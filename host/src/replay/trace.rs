//! One reconcile as it happened, as JSON lines: the `{"reconcile": ...}`
//! line (module, version, contract, time, request), one line per host call
//! with its answer, then `{"result": ...}`.

use std::time::SystemTime;

use serde_json::{Value, json};

use crate::contract::{Action, Request};
use crate::names::{object_ref_json, object_ref_of};
use crate::runtime::{CallRecord, Outcome, ReconcileError};

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
                "reason": crate::contract::reason_name(request.reason),
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
    pub(super) fn request(&self) -> Result<Request, String> {
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
            reason: crate::contract::reason_of(reason)
                .ok_or_else(|| format!("unknown reason {reason:?}"))?,
            attempt: self.request["attempt"].as_u64().unwrap_or(0) as u32,
        })
    }

    /// `namespace/name` of the target, or `name`.
    pub fn target_name(&self) -> String {
        let target = &self.request["target"];
        crate::names::namespaced_name(
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
pub(crate) fn calls_json(calls: &[CallRecord]) -> Vec<Value> {
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
