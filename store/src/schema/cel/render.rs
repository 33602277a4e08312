//! Messages as cel-go words them: compile issues with their source line and
//! a caret (`common/error.go`, `ToDisplayString`), and evaluation errors
//! (`common/types/err.go`).

use cel::{ExecutionError, ParseErrors, Value};

use crate::go::strconv::go_float;

/// One issue, at a line (from 1) and a column (in characters, from 0).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Located {
    /// The line, from 1.
    pub line: usize,
    /// The column, in characters, from 0.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

/// The line (from 1) and column (in characters, from 0) of a byte offset.
pub(crate) fn locate(source: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(source.len());
    let before = source.get(..offset).unwrap_or(source);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count())
}

/// The parse errors, located; the parser's own complaints about a tree
/// it could not build are left out when syntax errors explain them.
pub(crate) fn parse_issues(source: &str, errors: &ParseErrors) -> Vec<Located> {
    let syntax = errors
        .errors
        .iter()
        .any(|e| e.msg.starts_with("Syntax error"));
    errors
        .errors
        .iter()
        .filter(|e| !(syntax && e.msg.starts_with("Incomplete ")))
        .map(|e| {
            let mut located = Located {
                line: usize::try_from(e.pos.0).unwrap_or(1).max(1),
                column: usize::try_from(e.pos.1 - 1).unwrap_or(0),
                message: e.msg.clone(),
            };
            if e.msg == "unsupported syntax: '`'"
                && let Some(at) = source.find('`')
            {
                (located.line, located.column) = locate(source, at);
            }
            located
        })
        .collect()
}

/// The most issues shown; the rest are counted.
const MAX_SHOWN: usize = 100;

/// The issues as cel-go shows them: in source order, each as
/// `ERROR: <input>:1:5: message`, with its line and a caret under the spot.
pub(crate) fn display(source: &str, issues: &[Located]) -> String {
    let mut sorted: Vec<&Located> = issues.iter().collect();
    sorted.sort_by_key(|i| (i.line, i.column));
    let mut out: Vec<String> = sorted
        .iter()
        .take(MAX_SHOWN)
        .map(|issue| {
            let mut text = format!(
                "ERROR: <input>:{}:{}: {}",
                issue.line,
                issue.column + 1,
                issue.message
            );
            if let Some(line) = source.split('\n').nth(issue.line - 1) {
                let snippet = line.strip_suffix('\r').unwrap_or(line).replace('\t', " ");
                text.push_str("\n | ");
                text.push_str(&snippet);
                text.push_str("\n | ");
                let mut chars = snippet.chars();
                for c in chars.by_ref().take(issue.column) {
                    text.push(if c.len_utf8() > 1 { '\u{ff0e}' } else { '.' });
                }
                let wide = chars.next().is_some_and(|c| c.len_utf8() > 1);
                text.push(if wide { '\u{ff3e}' } else { '^' });
            }
            text
        })
        .collect();
    if sorted.len() > MAX_SHOWN {
        out.push(format!(
            "{} more errors were truncated",
            sorted.len() - MAX_SHOWN
        ));
    }
    out.join("\n")
}

/// A value as Go's `%v` prints a CEL value in an error.
fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.to_string(),
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::Float(f) => go_float(*f),
        Value::Bool(b) => b.to_string(),
        Value::Null => "<nil>".into(),
        other => format!("{other:?}"),
    }
}

/// An evaluation error as cel-go words it: `no such key: x`,
/// `index out of bounds: 3`, `division by zero`, `integer overflow`,
/// `no such overload` (`no such overload: size`, and
/// `no such overload: lowerAscii(int)` for the functions dispatched by
/// signature), or the message of a library function.
pub(crate) fn runtime_message(error: &ExecutionError) -> String {
    match error {
        ExecutionError::NoSuchKey(key) => format!("no such key: {key}"),
        ExecutionError::IndexOutOfBounds(index) => {
            format!("index out of bounds: {}", value_text(index))
        }
        ExecutionError::DivisionByZero(_) => "division by zero".into(),
        ExecutionError::RemainderByZero(_) => "modulus by zero".into(),
        ExecutionError::Overflow(_, lhs, _) => match lhs {
            Value::UInt(_) => "unsigned integer overflow".into(),
            Value::Duration(_) => "duration overflow".into(),
            Value::Timestamp(_) => "timestamp overflow".into(),
            _ => "integer overflow".into(),
        },
        ExecutionError::NoSuchOverload(overload) => {
            let function = overload.function();
            if function == "size" {
                "no such overload: size".into()
            } else if function.starts_with(['_', '!', '-', '@'])
                || matches!(function, "contains" | "startsWith" | "endsWith" | "matches")
            {
                // Operators and the standard library's string functions
                // check their operands themselves.
                "no such overload".into()
            } else {
                let types = overload.argument_types().join(", ");
                format!("no such overload: {function}({types})")
            }
        }
        ExecutionError::UnsupportedBinaryOperator(..)
        | ExecutionError::ValuesNotComparable(..)
        | ExecutionError::UnexpectedType { .. }
        | ExecutionError::UnsupportedTargetType { .. }
        | ExecutionError::NotSupportedAsMethod { .. } => "no such overload".into(),
        ExecutionError::FunctionError { function, message } => match function.as_str() {
            "int" | "uint" | "double" | "bool" | "duration" | "timestamp" => {
                if message.starts_with("type conversion error") {
                    message.clone()
                } else if message.contains("overflow") {
                    message.to_lowercase()
                } else if message.contains("range") {
                    format!("{function} overflow")
                } else {
                    format!("type conversion error from 'string' to '{function}'")
                }
            }
            _ => message.clone(),
        },
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issues_show_their_line_and_a_caret() {
        let issues = [Located {
            line: 1,
            column: 4,
            message: "undefined field 'b'".into(),
        }];
        assert_eq!(
            display("self.b > 0", &issues),
            "ERROR: <input>:1:5: undefined field 'b'\n | self.b > 0\n | ....^"
        );
    }

    #[test]
    fn a_byte_offset_is_located_in_characters_on_its_line() {
        assert_eq!(locate("a +\n  'é' + x", 11), (2, 6));
        assert_eq!(locate("self.b", 4), (1, 4));
    }
}
