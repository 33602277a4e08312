//! What of an answer is compared, and how a difference is shown.
//!
//! The real server validates an object's properties in Go's map order,
//! which changes from run to run: causes are compared as a sorted list,
//! and an aggregated message built from them (`X is invalid: [a, b]`) is
//! compared as its prefix and those causes. Server-assigned fields (uid,
//! resourceVersion, timestamps, managedFields) are left out of objects,
//! and the case's namespace is written `{ns}`; in a `whole: true` file the
//! managedFields stay, their times masked and their entries sorted by
//! operation, manager, version and subresource (a server orders them by
//! the second of their times, which two quick writes may or may not
//! share). Times a case wrote itself (before 2025) are kept.
//!
//! Addresses a Service is given (the real allocators pick them at random)
//! are written `<allocated>`: a `clusterIP`/`clusterIPs` value in
//! 10.0.0.17-10.0.0.254 and a `nodePort`/`healthCheckNodePort` from 30086
//! up, the dynamic bands of the service range (10.0.0.0/24) and node-port
//! range (30000-32767). An address a case asks for is taken from the static
//! bands below them (10.0.0.2-10.0.0.16, 30000-30085), which the
//! allocators leave to requests, so it is compared as it is.

use rekon_envtest::http::Response;
use serde_json::{Map, Value, json};

use crate::corpus::Step;

/// Replaces every string equal to `namespace` (and inside strings) with
/// `{ns}`, and every time (`lastTransitionTime`...) with `<time>`.
fn neutral(value: &mut Value, namespace: &str) {
    match value {
        // A cluster's CA (a namespace's kube-root-ca.crt) is its own.
        Value::String(s) if s.starts_with("-----BEGIN CERTIFICATE-----") => {
            *s = "<certificate>".into();
        }
        Value::String(s) => *s = scrub(&s.replace(namespace, "{ns}")),
        Value::Array(items) => items.iter_mut().for_each(|v| neutral(v, namespace)),
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                if key.ends_with("Time") || key.ends_with("Timestamp") && key != "deletionTimestamp"
                {
                    if !value.is_null() && !written_by_case(value) {
                        *value = json!("<time>");
                    }
                } else {
                    neutral(value, namespace);
                }
            }
        }
        _ => {}
    }
}

/// A time a case wrote itself (they are all before 2025; a server's own
/// are now): compared as it is, to see how the server normalised it.
fn written_by_case(value: &Value) -> bool {
    value.as_str().is_some_and(|text| {
        let year: Vec<char> = text.chars().take(4).collect();
        year.len() == 4 && year.iter().all(char::is_ascii_digit) && before_2025(&year)
    })
}

fn before_2025(year: &[char]) -> bool {
    year.iter().collect::<String>().as_str() < "2025"
}

/// A Table's `Age` cells written `<age>` (how long ago the object was
/// made is the moment's).
fn ages(table: &mut Value) {
    let Some(columns) = table["columnDefinitions"].as_array() else {
        return;
    };
    let ages: Vec<usize> = columns
        .iter()
        .enumerate()
        .filter(|(_, c)| c["name"] == "Age")
        .map(|(i, _)| i)
        .collect();
    for row in table["rows"].as_array_mut().into_iter().flatten() {
        for &i in &ages {
            if let Some(cell) = row["cells"].get_mut(i).filter(|c| c.is_string()) {
                *cell = json!("<age>");
            }
        }
    }
}

/// Allocated addresses written `<allocated>` (see the top of this file).
fn allocated(value: &mut Value) {
    match value {
        Value::Array(items) => items.iter_mut().for_each(allocated),
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                match (key.as_str(), &*value) {
                    ("clusterIP", Value::String(ip)) if dynamic_ip(ip) => {
                        *value = json!("<allocated>");
                    }
                    ("clusterIPs", Value::Array(ips)) => {
                        let ips: Vec<Value> = ips
                            .iter()
                            .map(|ip| match ip.as_str() {
                                Some(text) if dynamic_ip(text) => json!("<allocated>"),
                                _ => ip.clone(),
                            })
                            .collect();
                        *value = Value::Array(ips);
                    }
                    ("nodePort" | "healthCheckNodePort", Value::Number(port))
                        if port.as_i64().is_some_and(|p| (30086..=32767).contains(&p)) =>
                    {
                        *value = json!("<allocated>");
                    }
                    _ => allocated(value),
                }
            }
        }
        _ => {}
    }
}

/// An address of 10.0.0.0/24's dynamic band.
fn dynamic_ip(ip: &str) -> bool {
    ip.strip_prefix("10.0.0.")
        .and_then(|last| last.parse::<u8>().ok())
        .is_some_and(|last| (17..=254).contains(&last))
}

/// A text without the uids, times and resourceVersions a server makes up
/// (they show inside some messages).
fn scrub(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let hex = |c: char| c.is_ascii_hexdigit();
    let digit = |c: char| c.is_ascii_digit();
    let matches = |at: usize, shape: &str| {
        shape.chars().enumerate().all(|(k, s)| {
            chars.get(at + k).is_some_and(|&c| match s {
                'h' => hex(c),
                'd' => digit(c),
                other => c == other,
            })
        })
    };
    while i < chars.len() {
        if matches(i, "hhhhhhhh-hhhh-hhhh-hhhh-hhhhhhhhhhhh") {
            out.push_str("<uid>");
            i += 36;
        } else if matches(i, "dddd-dd-ddTdd:dd:ddZ") && !before_2025(&chars[i..i + 4]) {
            out.push_str("<time>");
            i += 20;
        } else if text[text.char_indices().nth(i).map_or(text.len(), |(b, _)| b)..]
            .starts_with("ResourceVersion in record (")
        {
            // A resourceVersion in a precondition's message.
            out.push_str("ResourceVersion in record (<rv>");
            i += 27;
            while chars.get(i).is_some_and(|c| c.is_ascii_digit()) {
                i += 1;
            }
        } else if matches(i, "kube-api-access-") {
            // A Pod's token volume, named with a random suffix.
            out.push_str("kube-api-access-<random>");
            i += 16;
            while chars.get(i).is_some_and(|c| c.is_ascii_alphanumeric()) {
                i += 1;
            }
        } else if matches(i, "resourceVersion\\\":\\\"") {
            out.push_str("resourceVersion\\\":\\\"<rv>");
            i += 20;
            while chars.get(i).is_some_and(|c| c.is_ascii_digit()) {
                i += 1;
            }
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// The resourceVersion each object of a case had when last seen, by
/// kind and name: whether a write moved it is compared, not its value.
#[derive(Default)]
pub struct Versions(std::collections::HashMap<String, String>);

impl Versions {
    /// `new` the first time an object is seen, then `moved` or `same`.
    fn movement(&mut self, object: &Value) -> Option<&'static str> {
        let version = object["metadata"]["resourceVersion"].as_str()?;
        let key = format!(
            "{}/{}",
            object["kind"].as_str().unwrap_or_default(),
            object["metadata"]["name"].as_str()?
        );
        Some(match self.0.insert(key, version.to_string()) {
            None => "new",
            Some(before) if before == version => "same",
            Some(_) => "moved",
        })
    }
}

/// An object without what the server assigns on its own; with `versions`
/// (a `whole: true` file), with its managedFields (their times masked)
/// and whether its resourceVersion moved.
fn object(mut object: Value, mut versions: Option<&mut Versions>) -> Value {
    let kind = object["kind"].clone();
    let movement = versions.as_deref_mut().and_then(|v| v.movement(&object));
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        let mut assigned = vec!["uid", "resourceVersion", "creationTimestamp", "selfLink"];
        match (&versions, metadata.get_mut("managedFields")) {
            (Some(_), Some(Value::Array(entries))) => {
                for entry in entries.iter_mut() {
                    if entry.get("time").is_some() {
                        entry["time"] = json!("<time>");
                    }
                }
                // A server orders entries of one operation by the second of
                // their times first: two writes a few milliseconds apart
                // fall in one second or two as it happens. With the times
                // masked, the entries are compared in an order of their own.
                entries.sort_by_key(|e| {
                    ["operation", "manager", "apiVersion", "subresource"]
                        .map(|k| e[k].as_str().unwrap_or_default().to_string())
                });
            }
            _ => assigned.push("managedFields"),
        }
        for field in assigned {
            metadata.remove(field);
        }
        if let Some(movement) = movement {
            metadata.insert("resourceVersion".into(), json!(movement));
        }
        if versions.is_some() && metadata.get("continue").is_some_and(|c| c != "") {
            metadata.insert("continue".into(), json!("<token>"));
        }
        if metadata.contains_key("deletionTimestamp") {
            metadata.insert("deletionTimestamp".into(), json!("<set>"));
        }
    }
    if let Some(items) = object.get_mut("items").and_then(Value::as_array_mut) {
        // A list's items carry no kind: each is known by its list's.
        let kind = kind
            .as_str()
            .and_then(|k| k.strip_suffix("List"))
            .map(str::to_string);
        for item in items.iter_mut() {
            let mut item_with_kind = item.take();
            let added = item_with_kind.get("kind").is_none() && kind.is_some();
            if added {
                item_with_kind["kind"] = json!(kind);
            }
            let mut summarised = self::object(item_with_kind, versions.as_deref_mut());
            if added && let Some(map) = summarised.as_object_mut() {
                map.remove("kind");
            }
            *item = summarised;
        }
    }
    if let Some(rows) = object.get_mut("rows").and_then(Value::as_array_mut) {
        // A Table's rows carry their objects (whole, or their metadata, as
        // `includeObject` asks): each is summarised as a list's item is.
        for row in rows.iter_mut() {
            if let Some(item) = row.get_mut("object").filter(|o| o.is_object()) {
                *item = self::object(item.take(), versions.as_deref_mut());
            }
        }
    }
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut)
        && object_is_list(metadata)
    {
        if versions.is_none() {
            metadata.remove("continue");
        }
        metadata.remove("resourceVersion");
    }
    object
}

fn object_is_list(metadata: &Map<String, Value>) -> bool {
    !metadata.contains_key("name")
}

/// The causes of a Status, sorted.
fn causes(status: &Value) -> Vec<Value> {
    let mut causes: Vec<Value> = status["details"]["causes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    causes.sort_by_key(|c| c.to_string());
    causes
}

/// The message, with an aggregate of the causes (in the answer's own
/// order) written once as `<causes>`.
fn message(status: &Value) -> Value {
    let Some(message) = status["message"].as_str() else {
        return Value::Null;
    };
    let rendered: Vec<String> = status["details"]["causes"]
        .as_array()
        .map(|causes| {
            causes
                .iter()
                .map(|c| {
                    let field = c["field"].as_str().unwrap_or_default();
                    let text = c["message"].as_str().unwrap_or_default();
                    if field.is_empty() {
                        text.to_string()
                    } else {
                        format!("{field}: {text}")
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    let aggregate = match rendered.len() {
        0 => return json!(message),
        1 => rendered[0].clone(),
        _ => format!("[{}]", rendered.join(", ")),
    };
    match message.strip_suffix(&aggregate) {
        Some(prefix) => json!(format!("{prefix}<causes>")),
        None => json!(message),
    }
}

/// What is compared of one answer.
pub fn of(
    answer: &Response,
    namespace: &str,
    step: &Step,
    versions: Option<&mut Versions>,
) -> Value {
    let body = answer.json();
    let mut summary = Map::new();
    summary.insert("code".into(), json!(answer.status));
    let mut warnings: Vec<String> = answer
        .header("warning")
        .iter()
        .map(|w| {
            // `299 - "text"`, the text's quotes escaped.
            let text = w.trim_start_matches("299 - ");
            let text = text.strip_prefix('"').unwrap_or(text);
            let text = text.strip_suffix('"').unwrap_or(text);
            text.replace("\\\"", "\"")
        })
        .collect();
    warnings.sort();
    if body["kind"] == "Status" && body["status"] == "Failure" {
        summary.insert("reason".into(), body["reason"].clone());
        if !step.brief {
            summary.insert("message".into(), message(&body));
            summary.insert("causes".into(), json!(causes(&body)));
        }
    } else if !step.brief && body.is_object() {
        let mut body = object(body, versions);
        allocated(&mut body);
        if body["kind"] == "Table" {
            ages(&mut body);
        }
        summary.insert("object".into(), body);
    }
    if !warnings.is_empty() && !step.brief {
        summary.insert("warnings".into(), json!(warnings));
    }
    let mut summary = Value::Object(summary);
    neutral(&mut summary, namespace);
    summary
}

/// `value` with every object's keys in order (what is compared does not
/// depend on it; a diff of the text then shows only what differs).
fn sorted(value: &Value) -> Value {
    match value {
        Value::Array(items) => Value::Array(items.iter().map(sorted).collect()),
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sorted(&map[k])))
                    .collect(),
            )
        }
        other => other.clone(),
    }
}

/// A line-by-line difference of two summaries (`-` real, `+` embedded).
pub fn diff(real: &Value, embedded: &Value) -> String {
    let real = serde_json::to_string_pretty(&sorted(real)).unwrap_or_default();
    let embedded = serde_json::to_string_pretty(&sorted(embedded)).unwrap_or_default();
    let (a, b): (Vec<&str>, Vec<&str>) = (real.lines().collect(), embedded.lines().collect());
    // Longest common subsequence, enough for summaries of a few hundred lines.
    let mut table = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            table[i][j] = if a[i] == b[j] {
                table[i + 1][j + 1] + 1
            } else {
                table[i + 1][j].max(table[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, String::new());
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            i += 1;
            j += 1;
        } else if j < b.len() && (i == a.len() || table[i][j + 1] >= table[i + 1][j]) {
            out.push_str(&format!("  + {}\n", b[j]));
            j += 1;
        } else {
            out.push_str(&format!("  - {}\n", a[i]));
            i += 1;
        }
    }
    out
}
