//! How cases and their failures are shown: YAML in flow style.

use serde_json::{Value, json};

/// A value as block YAML.
pub(super) fn yaml(value: &Value) -> String {
    serde_yaml_ng::to_string(value).unwrap_or_else(|_| format!("{value}\n"))
}

/// A value as one line of flow YAML: `{type: Warning, reason: X}`.
pub(super) fn flow(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let fields: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{}: {}", plain(k), flow(v)))
                .collect();
            format!("{{{}}}", fields.join(", "))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(flow).collect();
            format!("[{}]", items.join(", "))
        }
        Value::String(text) => plain(text),
        other => other.to_string(),
    }
}

/// A string as flow YAML: bare when it reads back as the same string,
/// quoted otherwise.
pub(super) fn plain(text: &str) -> String {
    let bare = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_alphanumeric() || " -_./".contains(c))
        && !text.starts_with([' ', '-'])
        && !text.ends_with(' ')
        && serde_yaml_ng::from_str::<Value>(text).ok() == Some(json!(text));
    if bare {
        text.to_string()
    } else {
        Value::String(text.to_string()).to_string()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::flow;

    #[test]
    fn flow_yaml_quotes_only_what_needs_it() {
        assert_eq!(
            flow(&json!({"type": "Warning", "message": "a: b", "code": 403, "on": "true"})),
            r#"{type: Warning, message: "a: b", code: 403, on: "true"}"#
        );
    }
}
