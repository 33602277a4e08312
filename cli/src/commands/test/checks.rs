//! The checks of a case: its result, the objects present and absent,
//! the Events and refusals, each failure shown as a diff.

use rekon_host::contract::{Action, ObjectRef};
use rekon_host::runtime::{CallRecord, Outcome, ReconcileError};
use serde_json::{Value, json};

use super::cases::{ExpectedResult, format_ms};
use super::render::{flow, yaml};
use super::running::{Backend, describe, read, settled};

pub(super) fn check_result(
    expected: &ExpectedResult,
    actual: &Result<Action, ReconcileError>,
) -> Option<String> {
    let fits = match (expected, actual) {
        (ExpectedResult::NotError, Ok(_)) => true,
        (ExpectedResult::Done, Ok(Action::Done)) => true,
        (ExpectedResult::RequeueAfter(e), Ok(Action::RequeueAfter(a))) => e == a,
        (ExpectedResult::Error { message, retry }, Err(error)) => {
            error.to_string().contains(message.as_str())
                && retry.is_none_or(|retry| retry == error.retry())
        }
        _ => false,
    };
    if fits {
        return None;
    }
    let expected = match expected {
        ExpectedResult::NotError => "done or requeueAfter (not an error)".to_string(),
        ExpectedResult::Done => "done".to_string(),
        ExpectedResult::RequeueAfter(ms) => format!("{{requeueAfter: {}}}", format_ms(*ms)),
        ExpectedResult::Error { message, retry } => {
            let mut e = json!({ "error": message });
            if let Some(retry) = retry {
                e["retry"] = json!(retry);
            }
            flow(&e)
        }
    };
    let actual = match actual {
        Ok(Action::Done) => "done".to_string(),
        Ok(Action::RequeueAfter(ms)) => format!("{{requeueAfter: {}}}", format_ms(*ms)),
        Err(error) => flow(&json!({ "error": error.to_string(), "retry": error.retry() })),
    };
    Some(format!(
        "  result (- expected, + actual):\n  - {expected}\n  + {actual}"
    ))
}

pub(super) async fn check_present(
    backend: &Backend,
    target: &ObjectRef,
    expected: &Value,
) -> anyhow::Result<Option<String>> {
    let target = settled(backend, target).await;
    let cluster = backend.cluster();
    let Some(actual) = read(&*cluster, &target).await? else {
        let mut names: Vec<String> = cluster
            .list(&target.kind, target.namespace.as_deref(), None)
            .await
            .unwrap_or_default()
            .iter()
            .filter_map(|o| serde_json::from_str::<Value>(o).ok())
            .filter_map(|o| o["metadata"]["name"].as_str().map(str::to_string))
            .collect();
        names.sort();
        let place = target
            .namespace
            .as_deref()
            .map_or_else(String::new, |ns| format!(" in {ns}"));
        let there = if names.is_empty() {
            "none".to_string()
        } else {
            names.join(", ")
        };
        return Ok(Some(format!(
            "  present {}: missing (no such object; {}s{place}: {there})",
            describe(&target),
            target.kind.kind
        )));
    };
    let shown = project(expected, &actual);
    if shown == *expected {
        return Ok(None);
    }
    let mut out = format!(
        "  present {} differs (- expected, + actual):\n",
        describe(&target)
    );
    for line in rekon_rules::diff_lines(&yaml(expected), &yaml(&shown), 3) {
        out.push_str("    ");
        out.push_str(&line);
        out.push('\n');
    }
    Ok(Some(out))
}

pub(super) async fn check_absent(
    backend: &Backend,
    target: &ObjectRef,
) -> anyhow::Result<Option<String>> {
    let target = settled(backend, target).await;
    let cluster = backend.cluster();
    // A real server's garbage collector and namespace controller remove
    // objects a moment after what caused it: give them that moment.
    let deadline = std::time::Instant::now() + ABSENT_WAIT;
    let actual = loop {
        let Some(actual) = read(&*cluster, &target).await? else {
            return Ok(None);
        };
        if !backend.eventual() || std::time::Instant::now() > deadline {
            break actual;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    let metadata = &actual["metadata"];
    let note = if metadata["deletionTimestamp"].is_null() {
        String::new()
    } else {
        format!(
            " (being deleted, waiting on its finalizers {})",
            flow(&metadata["finalizers"])
        )
    };
    Ok(Some(format!(
        "  absent {}: it exists{note}",
        describe(&target)
    )))
}

/// How long an object expected absent may take to go on a real server.
pub(super) const ABSENT_WAIT: std::time::Duration = std::time::Duration::from_secs(3);
/// Most host calls listed under a failure.
pub(super) const MAX_CALLS_SHOWN: usize = 40;

/// Checks recorded entries (Events, refused calls) against the expected
/// ones: each expected entry matches a different recorded one; an empty
/// list expects none.
pub(super) fn check_entries(
    field: &str,
    noun: &str,
    expected: &[Value],
    actual: &[Value],
) -> Option<String> {
    let recorded = || {
        let mut out = format!("    recorded {noun}s:");
        if actual.is_empty() {
            out.push_str(" none");
        }
        for entry in actual {
            out.push_str("\n    + ");
            out.push_str(&flow(entry));
        }
        out
    };
    if expected.is_empty() {
        return (!actual.is_empty()).then(|| format!("  {field}: expected none\n{}", recorded()));
    }
    let owners = assign(expected, actual);
    let missing: Vec<&Value> = expected
        .iter()
        .enumerate()
        .filter(|(i, _)| !owners.contains(&Some(*i)))
        .map(|(_, e)| e)
        .collect();
    if missing.is_empty() {
        return None;
    }
    let mut out = format!("  {field}: not recorded (- expected, + recorded):");
    for entry in missing {
        out.push_str("\n    - ");
        out.push_str(&flow(entry));
    }
    out.push('\n');
    out.push_str(&recorded());
    Some(out)
}

/// Matches expected entries to recorded ones, each recorded entry used at
/// most once (augmenting paths: an early expectation gives way when a
/// later one fits nothing else). For each recorded entry, the expected
/// entry it stands for.
pub(super) fn assign(expected: &[Value], actual: &[Value]) -> Vec<Option<usize>> {
    let fits: Vec<Vec<usize>> = expected
        .iter()
        .map(|e| {
            (0..actual.len())
                .filter(|&j| entry_matches(e, &actual[j]))
                .collect()
        })
        .collect();
    pub(super) fn augment(
        i: usize,
        fits: &[Vec<usize>],
        owners: &mut [Option<usize>],
        seen: &mut [bool],
    ) -> bool {
        for &j in &fits[i] {
            if !seen[j] {
                seen[j] = true;
                if owners[j].is_none_or(|k| augment(k, fits, owners, seen)) {
                    owners[j] = Some(i);
                    return true;
                }
            }
        }
        false
    }
    let mut owners = vec![None; actual.len()];
    for i in 0..expected.len() {
        augment(i, &fits, &mut owners, &mut vec![false; actual.len()]);
    }
    owners
}

/// An expected entry against a recorded one: `message` is a part of the
/// recorded message, every other field given matches as in `present`.
pub(super) fn entry_matches(expected: &Value, actual: &Value) -> bool {
    let Some(fields) = expected.as_object() else {
        return false;
    };
    fields.iter().all(|(key, want)| {
        let got = actual.get(key).unwrap_or(&Value::Null);
        match (key.as_str(), want, got) {
            ("message", Value::String(part), Value::String(message)) => message.contains(part),
            _ => project(want, got) == *want,
        }
    })
}

/// `actual` cut to the shape of `expected`: maps keep only the keys
/// expected (a key expected `null` and absent shows as `null`), lists keep
/// every element (each cut by the expected element at its place), numbers
/// equal in value show as expected. `expected` matches `actual` exactly
/// when the result equals `expected`; otherwise the two render as a diff.
pub(super) fn project(expected: &Value, actual: &Value) -> Value {
    match (expected, actual) {
        (Value::Object(want), Value::Object(got)) => Value::Object(
            want.iter()
                .filter_map(|(key, w)| match got.get(key) {
                    Some(g) => Some((key.clone(), project(w, g))),
                    None if w.is_null() => Some((key.clone(), Value::Null)),
                    None => None,
                })
                .collect(),
        ),
        (Value::Array(want), Value::Array(got)) => Value::Array(
            got.iter()
                .enumerate()
                .map(|(i, g)| want.get(i).map_or_else(|| g.clone(), |w| project(w, g)))
                .collect(),
        ),
        (Value::Number(w), Value::Number(g)) if w.as_f64() == g.as_f64() => expected.clone(),
        _ => actual.clone(),
    }
}

/// The Events the reconcile recorded: `{type, reason, message, regarding}`.
pub(super) fn events(outcome: &Outcome) -> Vec<Value> {
    outcome
        .calls
        .iter()
        .filter(|c| c.call == "record-event" && c.result.get("ok").is_some())
        .map(|c| {
            json!({
                "type": enum_name(&c.args["type"]),
                "reason": c.args["reason"],
                "message": c.args["message"],
                "regarding": c.args["regarding"],
            })
        })
        .collect()
}

/// The calls that failed, but for reads of what does not exist:
/// `{verb, apiVersion, kind, namespace, name, code, reason, message}`.
pub(super) fn refused(outcome: &Outcome) -> Vec<Value> {
    outcome
        .calls
        .iter()
        .filter_map(|c| {
            let error = c.result.get("error")?;
            let read = matches!(c.call, "get" | "list" | "list-by-index");
            if read && error["code"] == 404 {
                return None;
            }
            let about = if c.call == "record-event" {
                &c.args["regarding"]
            } else {
                &c.args
            };
            let name = about
                .get("name")
                .or_else(|| c.args.pointer("/object/metadata/name"))
                .cloned()
                .unwrap_or(Value::Null);
            let mut entry = json!({
                "verb": c.call,
                "apiVersion": about["apiVersion"],
                "kind": about["kind"],
                "namespace": about["namespace"],
                "name": name,
                "code": error["code"],
                "reason": error["reason"],
                "message": error["message"],
            });
            if let Some(fields) = entry.as_object_mut() {
                fields.retain(|_, v| !v.is_null());
            }
            Some(entry)
        })
        .collect()
}

/// `Warning` out of `EventType::Warning` (how call records spell the WIT
/// enums).
pub(super) fn enum_name(value: &Value) -> Value {
    match value.as_str() {
        Some(text) => json!(text.rsplit("::").next().unwrap_or(text)),
        None => value.clone(),
    }
}

/// One line per host call: `patch ConfigMap team-a/shared -> ok`.
pub(super) fn call_lines(calls: &[CallRecord]) -> Vec<String> {
    let mut lines: Vec<String> = calls.iter().take(MAX_CALLS_SHOWN).map(call_line).collect();
    if calls.len() > MAX_CALLS_SHOWN {
        lines.push(format!("... and {} more", calls.len() - MAX_CALLS_SHOWN));
    }
    if lines.is_empty() {
        lines.push("none".to_string());
    }
    lines
}

pub(super) fn call_line(call: &CallRecord) -> String {
    let args = &call.args;
    if call.call == "log" {
        let fields: String = args["fields"]
            .as_object()
            .map(|f| f.iter().map(|(k, v)| format!(" {k}={}", flow(v))).collect())
            .unwrap_or_default();
        let level = enum_name(&args["level"]);
        return format!(
            "log {}: {}{fields}",
            level.as_str().unwrap_or_default(),
            args["message"].as_str().unwrap_or_default()
        );
    }
    let about = if call.call == "record-event" {
        &args["regarding"]
    } else {
        args
    };
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let name = about
        .get("name")
        .or_else(|| args.pointer("/object/metadata/name"))
        .map(text);
    let mut line = format!("{} {}", call.call, text(&about["kind"]));
    match (about["namespace"].as_str(), name) {
        (Some(ns), Some(name)) => line.push_str(&format!(" {ns}/{name}")),
        (None, Some(name)) => line.push_str(&format!(" {name}")),
        (Some(ns), None) => line.push_str(&format!(" in {ns}")),
        (None, None) => {}
    }
    if let Some(selector) = args["labelSelector"].as_str() {
        line.push_str(&format!(" -l {selector}"));
    }
    if call.call == "record-event" {
        line.push_str(&format!(
            " {} {}",
            text(&enum_name(&args["type"])),
            text(&args["reason"])
        ));
    }
    match call.result.get("error") {
        Some(error) => line.push_str(&format!(
            " -> {} {}: {}",
            error["code"],
            text(&error["reason"]),
            text(&error["message"])
        )),
        None => line.push_str(" -> ok"),
    }
    line
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{assign, project};
    use crate::commands::test::render::yaml;

    #[test]
    fn a_subset_matches_and_a_difference_shows_as_a_line_diff() {
        let actual = json!({"metadata": {"name": "x", "uid": "1"}, "data": {"a": "1", "b": "2"},
            "list": [{"k": 1, "extra": true}, {"k": 2}]});
        let subset = json!({"data": {"a": "1"}, "list": [{"k": 1.0}, {"k": 2}]});
        assert_eq!(project(&subset, &actual), subset);
        let wrong = json!({"data": {"a": "9"}, "gone": null});
        let shown = project(&wrong, &actual);
        assert_eq!(shown, json!({"data": {"a": "1"}, "gone": null}));
        let diff = rekon_rules::diff_lines(&yaml(&wrong), &yaml(&shown), 3);
        assert_eq!(
            diff,
            vec!["  data:", "-   a: '9'", "+   a: '1'", "  gone: null"]
        );
    }

    #[test]
    fn a_long_diff_keeps_three_lines_of_context() {
        let expected = "a\nb\nc\nd\ne\nf\ng\nh\ni\n";
        let actual = "a\nb\nc\nd\nE\nf\ng\nh\ni\n";
        let diff = rekon_rules::diff_lines(expected, actual, 3);
        assert_eq!(
            diff,
            vec![
                "  ...", "  b", "  c", "  d", "- e", "+ E", "  f", "  g", "  h", "  ..."
            ]
        );
    }

    #[test]
    fn each_expected_entry_takes_a_different_recorded_one() {
        let recorded = [
            json!({"type": "Normal", "reason": "Synced", "message": "copied to team-a"}),
            json!({"type": "Normal", "reason": "Synced", "message": "copied to team-b"}),
        ];
        // The first expectation fits both; the second only the first entry.
        let expected = [json!({"reason": "Synced"}), json!({"message": "team-a"})];
        assert_eq!(assign(&expected, &recorded), vec![Some(1), Some(0)]);
        let three = [
            json!({"reason": "Synced"}),
            json!({"reason": "Synced"}),
            json!({"reason": "Synced"}),
        ];
        let owners = assign(&three, &recorded);
        assert_eq!(owners.iter().flatten().count(), 2);
    }
}
