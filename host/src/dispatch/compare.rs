//! How a shadow version compares with the serving one on a request: the
//! writes each made (the objects the server stored or would store, and the
//! calls), as text, and their unified diff.

use serde_json::{Value, json};

/// Longest line of a diff (longer ones are cut, saying how much).
const DIFF_LINE: usize = 200;

/// The calls that write (what is compared).
const WRITES: [&str; 7] = [
    "create",
    "replace",
    "replace-status",
    "patch",
    "patch-status",
    "delete",
    "record-event",
];

/// How the versions compared on an object's latest shadowed request.
#[derive(Clone, Debug)]
pub struct Compared {
    /// The request's reason.
    pub reason: String,
    /// The unified diff of the serving version's writes (`-`) and the
    /// shadow's (`+`); empty when they agree.
    pub diff: Vec<String>,
    /// Why the shadow failed (trapped, ran out of time or memory,
    /// returned an error the serving version did not).
    pub error: Option<String>,
}

impl Compared {
    /// Whether the versions did the same.
    pub fn agrees(&self) -> bool {
        self.diff.is_empty() && self.error.is_none()
    }
}

/// The writes among recorded calls, as text to compare: each call, what it
/// is about and the object the server stored (or would store), without
/// what differs between any two writes (resourceVersion, uid, times,
/// managedFields, generation); a refused write with its error.
pub(crate) fn writes_text(calls: &[Value]) -> String {
    let mut out = String::new();
    for call in calls {
        let name = call["call"].as_str().unwrap_or_default();
        if !WRITES.contains(&name) {
            continue;
        }
        let args = &call["args"];
        let what = if name == "record-event" {
            json!({ "regarding": args["regarding"], "type": args["type"],
                "reason": args["reason"], "message": args["message"] })
        } else {
            let mut about = json!({ "apiVersion": args["apiVersion"], "kind": args["kind"],
                "namespace": args["namespace"],
                "name": args.get("name").cloned()
                    .unwrap_or_else(|| args["object"]["metadata"]["name"].clone()) });
            match (call["result"].get("ok"), call["result"].get("error")) {
                (Some(stored), _) if stored.is_object() => {
                    about["stored"] = comparable(stored.clone());
                }
                (_, Some(error)) => about["refused"] = error.clone(),
                _ => {}
            }
            about
        };
        out.push_str(&format!("{name}:\n"));
        out.push_str(&serde_json::to_string_pretty(&what).unwrap_or_default());
        out.push('\n');
    }
    out
}

/// A stored object without the fields that differ between any two writes.
fn comparable(mut object: Value) -> Value {
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        for field in [
            "resourceVersion",
            "uid",
            "creationTimestamp",
            "generation",
            "managedFields",
        ] {
            metadata.remove(field);
        }
    }
    if let Some(conditions) = object
        .pointer_mut("/status/conditions")
        .and_then(Value::as_array_mut)
    {
        for condition in conditions.iter_mut().filter_map(Value::as_object_mut) {
            condition.remove("lastTransitionTime");
        }
    }
    object
}

/// The unified diff of the serving version's writes and the shadow's.
pub(crate) fn diff(serving: &str, shadow: &str, versions: (&str, &str)) -> Vec<String> {
    let lines = rekon_rules::diff_lines(serving, shadow, 3);
    if lines.is_empty() {
        return lines;
    }
    let mut out = vec![
        format!("--- serving {}", versions.0),
        format!("+++ shadow {}", versions.1),
    ];
    out.extend(lines.into_iter().map(|line| {
        if line.len() <= DIFF_LINE {
            return line;
        }
        let mut end = DIFF_LINE;
        while !line.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}... ({} more bytes)", &line[..end], line.len() - end)
    }));
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{diff, writes_text};

    #[test]
    fn writes_compare_on_what_would_be_stored_not_on_bookkeeping() {
        let patch = |rv: &str, replicas: i64| {
            json!({"call": "patch", "args": {"apiVersion": "apps/v1", "kind": "Deployment",
                "namespace": "shop", "name": "web", "patch": {}},
                "result": {"ok": {"metadata": {"name": "web", "resourceVersion": rv,
                    "managedFields": [{"time": rv}]}, "spec": {"replicas": replicas}}}})
        };
        let read = json!({"call": "get", "args": {}, "result": {"ok": {}}});
        let a = writes_text(&[read.clone(), patch("1", 2)]);
        let b = writes_text(&[patch("7", 2)]);
        assert_eq!(a, b, "reads and bookkeeping are left out");
        let c = writes_text(&[patch("7", 3)]);
        let d = diff(&a, &c, ("1.0.0", "1.1.0"));
        assert_eq!(d[0], "--- serving 1.0.0");
        assert!(
            d.iter()
                .any(|l| l.starts_with('-') && l.contains("\"replicas\": 2"))
        );
        assert!(
            d.iter()
                .any(|l| l.starts_with('+') && l.contains("\"replicas\": 3"))
        );
        assert!(diff(&a, &b, ("1", "2")).is_empty());
    }
}
