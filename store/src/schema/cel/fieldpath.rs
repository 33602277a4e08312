//! A rule's `fieldPath`, read as the real server reads it
//! (`ValidFieldPath`, `apiserver/schema/cel/validation.go`): a JSON path of
//! field names (`.spec.x`) and quoted keys (`['a.b']`), each a property of
//! the schema or a key of its `additionalProperties`.

use crate::schema::Schema;

/// Splits a path into `.`, `[`, `]` and the text between them; a token
/// that starts with a quote runs to the next unescaped quote (Go's
/// `bufio.Scanner` with the split function of `ValidFieldPath`).
fn tokens(path: &str) -> Vec<&str> {
    let bytes = path.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    while start < bytes.len() {
        let data = &bytes[start..];
        let mut end = data.len();
        if data[0] == b'\'' {
            if let Some(i) = (1..data.len()).find(|&i| data[i] == b'\'' && data[i - 1] != b'\\') {
                end = i + 1;
            }
        } else if let Some(i) = data.iter().position(|b| matches!(b, b'.' | b'[' | b']')) {
            end = if i == 0 { 1 } else { i };
        }
        out.push(&path[start..start + end]);
        start += end;
    }
    out
}

/// Reads the escapes of a single-quoted string (`\'`, `\\`, `\n`, ...).
fn unescape(text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(d) = chars.next() else {
            out.push(c);
            break;
        };
        out.push(match d {
            'a' => '\u{7}',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\u{b}',
            '\'' => '\'',
            '\\' => '\\',
            other => {
                return Err(format!(
                    "invalid string literal: invalid escape char \\{other}"
                ));
            }
        });
    }
    Ok(out)
}

/// The path's steps: a property name (`true`) or a map key (`false`).
pub(crate) type Steps = Vec<(String, bool)>;

/// Checks `path` against `schema`: its steps, or why it is not valid.
pub(crate) fn valid_field_path(path: &str, schema: &Schema) -> Result<Steps, String> {
    let mut steps = Vec::new();
    let mut node = Some(schema);
    let mut toks = tokens(path).into_iter();
    let not_valid = || "does not refer to a valid field".to_string();
    let mut step = |name: String, node: &mut Option<&Schema>| -> Result<(), String> {
        let current = node.ok_or_else(not_valid)?;
        if !current.properties.is_empty() {
            *node = Some(current.properties.get(&name).ok_or_else(not_valid)?);
            steps.push((name, true));
        } else if current.additional_properties.is_some() {
            *node = current.additional_schema();
            steps.push((name, false));
        } else {
            return Err(not_valid());
        }
        Ok(())
    };
    while let Some(tok) = toks.next() {
        match tok {
            "[" => {
                let quoted = toks.next().ok_or("unexpected end of JSON path")?;
                if quoted.len() < 2 || !quoted.starts_with('\'') || !quoted.ends_with('\'') {
                    return Err(format!("expected single quoted string but got {quoted}"));
                }
                step(unescape(&quoted[1..quoted.len() - 1])?, &mut node)?;
                match toks.next() {
                    Some("]") => {}
                    Some(other) => return Err(format!("expected ] but got {other}")),
                    None => return Err("unexpected end of JSON path".into()),
                }
            }
            "." => {
                let name = toks.next().ok_or("unexpected end of JSON path")?;
                step(name.to_string(), &mut node)?;
            }
            other => return Err(format!("expected [ or . but got: {other}")),
        }
    }
    Ok(steps)
}

/// The steps as a field path's text: `a.b`, `a[key]` (`field.Path`'s
/// `String`).
pub(crate) fn steps_text(steps: &Steps) -> String {
    let mut out = String::new();
    for (name, named) in steps {
        if *named {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(name);
        } else {
            out.push('[');
            out.push_str(name);
            out.push(']');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Schema {
        Schema::from_json(&json!({
            "type": "object",
            "properties": {
                "a": {"type": "object", "properties": {"b.c": {"type": "string"}}},
                "m": {"type": "object", "additionalProperties": {"type": "object", "properties": {"x": {"type": "integer"}}}},
                "l": {"type": "array", "items": {"type": "string"}},
            },
        }))
    }

    #[test]
    fn field_paths_name_properties_and_map_keys() {
        let s = schema();
        let steps = valid_field_path(".a['b.c']", &s).expect("valid");
        assert_eq!(steps_text(&steps), "a.b.c");
        let steps = valid_field_path(".m['k'].x", &s).expect("valid");
        assert_eq!(steps_text(&steps), "m[k].x");
        assert_eq!(
            steps_text(&valid_field_path(".m.k", &s).expect("valid")),
            "m[k]"
        );
    }

    #[test]
    fn field_paths_the_schema_does_not_have_are_refused() {
        let s = schema();
        for path in [".b", ".l[1]", ".l.x", "a", ".a.", ".a['b.c'"] {
            assert!(valid_field_path(path, &s).is_err(), "{path}");
        }
        assert_eq!(
            valid_field_path("a", &s).unwrap_err(),
            "expected [ or . but got: a"
        );
    }
}
