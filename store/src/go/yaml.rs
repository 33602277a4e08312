//! What go-yaml does with a mapping that repeats a key (sigs.k8s.io/yaml,
//! as the API server reads an apply body): the last value wins, and each
//! repetition is an error of its own (`line 8: key "a" already set in
//! map`) that strict decoding refuses and `fieldValidation=Warn` reports.
//!
//! Only block mappings are looked at (what people write by hand): the
//! scan is used once a YAML parser has refused the body for a repeated
//! key, so it never judges a body the parser takes.

use std::collections::HashMap;

/// A mapping being read: its indentation and the line each key is on.
struct Scope {
    indent: usize,
    keys: HashMap<String, usize>,
}

/// The key a block mapping line names, if it is one (`key:` or `key: v`,
/// quoted or not).
fn key_of(text: &str) -> Option<String> {
    let (key, rest) = if let Some(quoted) = text.strip_prefix('"') {
        let end = quoted.find('"')?;
        (&quoted[..end], &quoted[end + 1..])
    } else if let Some(quoted) = text.strip_prefix('\'') {
        let end = quoted.find('\'')?;
        (&quoted[..end], &quoted[end + 1..])
    } else {
        if text.starts_with(['{', '[', '#', '&', '*', '!', '|', '>']) {
            return None;
        }
        let end = text
            .find(": ")
            .or_else(|| text.ends_with(':').then(|| text.len() - 1))?;
        (text[..end].trim_end(), &text[end..])
    };
    (rest.starts_with(": ") || rest == ":").then(|| key.to_string())
}

/// `text` with each repeated key's earlier entries removed (so the last
/// value wins), and each repetition as go-yaml words it, in line order.
pub(crate) fn repeated_keys(text: &str) -> (String, Vec<String>) {
    let lines: Vec<&str> = text.lines().collect();
    let mut removed = vec![false; lines.len()];
    let mut problems = Vec::new();
    let mut scopes: Vec<Scope> = Vec::new();
    // A block scalar's lines (after `key: |`) are text: deeper than this.
    let mut block: Option<usize> = None;
    let indent_of = |line: &str| line.len() - line.trim_start_matches(' ').len();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed == "---" {
            continue;
        }
        let mut indent = indent_of(line);
        if let Some(limit) = block {
            if indent > limit {
                continue;
            }
            block = None;
        }
        let mut content = &line[indent..];
        // A list item starts a mapping of its own after `- `.
        while let Some(rest) = content.strip_prefix("- ") {
            indent += 2 + indent_of(rest);
            content = rest.trim_start_matches(' ');
            scopes.retain(|s| s.indent < indent);
            scopes.push(Scope {
                indent,
                keys: HashMap::new(),
            });
        }
        let Some(key) = key_of(content) else {
            continue;
        };
        scopes.retain(|s| s.indent <= indent);
        if scopes.last().is_none_or(|s| s.indent < indent) {
            scopes.push(Scope {
                indent,
                keys: HashMap::new(),
            });
        }
        let value = content[content.find(':').unwrap_or(0) + 1..].trim();
        if value.starts_with('|') || value.starts_with('>') {
            block = Some(indent);
        }
        let scope = scopes.last_mut().expect("a scope was pushed");
        if let Some(earlier) = scope.keys.insert(key.clone(), i) {
            problems.push(format!("line {}: key {key:?} already set in map", i + 1));
            // The earlier entry: its line and every deeper line after it.
            removed[earlier] = true;
            for (j, later) in lines.iter().enumerate().skip(earlier + 1) {
                let t = later.trim();
                if !t.is_empty() && !t.starts_with('#') && indent_of(later) <= indent {
                    break;
                }
                removed[j] = true;
            }
        }
    }
    let kept: Vec<&str> = lines
        .iter()
        .zip(&removed)
        .filter(|(_, gone)| !**gone)
        .map(|(line, _)| *line)
        .collect();
    (kept.join("\n") + "\n", problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_key_keeps_the_last_value_and_names_its_line() {
        let text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dup\ndata:\n  a: \"1\"\n  b: \"x\"\n  a: \"2\"\n";
        let (kept, problems) = repeated_keys(text);
        assert_eq!(problems, ["line 8: key \"a\" already set in map"]);
        assert_eq!(
            kept,
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: dup\ndata:\n  b: \"x\"\n  a: \"2\"\n"
        );
    }

    #[test]
    fn keys_of_other_mappings_and_list_items_are_not_repeats() {
        let text = "spec:\n  containers:\n  - name: a\n    image: x\n  - name: b\n    image: y\n  template:\n    name: c\nname: d\nscript: |\n  name: 1\n  name: 2\n";
        let (kept, problems) = repeated_keys(text);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(kept, text);
    }

    #[test]
    fn a_repeated_mapping_goes_with_everything_below_it() {
        let text = "data:\n  x: 1\ndata:\n  y: 2\n";
        let (kept, problems) = repeated_keys(text);
        assert_eq!(problems, ["line 3: key \"data\" already set in map"]);
        assert_eq!(kept, "data:\n  y: 2\n");
    }
}
