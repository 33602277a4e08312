//! A JSONPath read as client-go's `util/jsonpath/parser.go` reads it.

use serde_json::json;

use super::{Node, Param, terminator};

/// The inside of an action up to its `}` (`parseInsideAction`).
pub(super) fn action(chars: &[char], at: &mut usize) -> Option<Vec<Node>> {
    let mut nodes = Vec::new();
    let starts = |at: usize, prefix: &str| {
        prefix
            .chars()
            .enumerate()
            .all(|(k, c)| chars.get(at + k) == Some(&c))
    };
    loop {
        if starts(*at, "}") {
            *at += 1;
            return Some(nodes);
        }
        if starts(*at, "[?(") {
            *at += 3;
            nodes.push(filter(chars, at)?);
            continue;
        }
        if starts(*at, "..") {
            if matches!(nodes.last(), Some(Node::Recursive)) {
                return None;
            }
            *at += 2;
            nodes.push(Node::Recursive);
            if chars
                .get(*at)
                .is_some_and(|c| *c == '_' || c.is_alphanumeric())
            {
                nodes.push(field(chars, at));
            }
            continue;
        }
        let c = *chars.get(*at)?;
        *at += 1;
        match c {
            '\r' | '\n' => return None,
            ' ' | '@' | '$' => {}
            '[' => nodes.extend(array(chars, at)?),
            '"' | '\'' => nodes.push(quoted(chars, at, c)?),
            '.' => nodes.push(field(chars, at)),
            '+' | '-' => nodes.push(number(chars, at)?),
            c if c.is_ascii_digit() => nodes.push(number(chars, at)?),
            c if c == '_' || c.is_alphanumeric() => {
                let start = *at - 1;
                while !terminator(chars.get(*at).copied()) {
                    *at += 1;
                }
                let word: String = chars[start..*at].iter().collect();
                nodes.push(match word.as_str() {
                    "true" => Node::Constant(json!(true)),
                    "false" => Node::Constant(json!(false)),
                    _ => Node::Identifier,
                });
            }
            _ => return None,
        }
    }
}

/// `text` read as the action `{text}` (`parseAction`).
fn sub_action(text: &str) -> Option<Vec<Node>> {
    let chars: Vec<char> = format!("{text}}}").chars().collect();
    let mut at = 0;
    let nodes = action(&chars, &mut at)?;
    (at == chars.len()).then_some(nodes)
}

/// A field after its `.`, up to a terminator not escaped by `\`.
fn field(chars: &[char], at: &mut usize) -> Node {
    let start = *at;
    loop {
        match chars.get(*at) {
            Some('\\') => *at += 2,
            c if terminator(c.copied()) => break,
            _ => *at += 1,
        }
    }
    let name: String = chars[start..(*at).min(chars.len())].iter().collect();
    match name.as_str() {
        "*" => Node::Wildcard,
        _ => Node::Field(name.replace('\\', "")),
    }
}

/// A number: an int, else a float (`parseNumber`).
fn number(chars: &[char], at: &mut usize) -> Option<Node> {
    let start = *at - 1;
    while chars
        .get(*at)
        .is_some_and(|c| *c == '.' || c.is_ascii_digit())
    {
        *at += 1;
    }
    let text: String = chars[start..*at].iter().collect();
    match text.parse::<i64>() {
        Ok(int) => Some(Node::Constant(json!(int))),
        Err(_) => Some(Node::Constant(json!(text.parse::<f64>().ok()?))),
    }
}

/// A quoted text after its opening quote (`parseQuote`, `UnquoteExtend`).
fn quoted(chars: &[char], at: &mut usize, quote: char) -> Option<Node> {
    let start = *at;
    loop {
        match chars.get(*at)? {
            '\n' => return None,
            c if *c == quote && chars[*at - 1] != '\\' => break,
            _ => *at += 1,
        }
    }
    let mut text = String::new();
    let mut inner = chars[start..*at].iter();
    *at += 1;
    while let Some(&c) = inner.next() {
        text.push(match c {
            '\\' => match inner.next()? {
                'n' => '\n',
                't' => '\t',
                'r' => '\r',
                &other => other,
            },
            c => c,
        });
    }
    Some(Node::Constant(json!(text)))
}

/// The inside of `[...]`: a union, a quoted key or a slice (`parseArray`).
fn array(chars: &[char], at: &mut usize) -> Option<Vec<Node>> {
    let start = *at;
    while *chars.get(*at)? != ']' {
        if chars[*at] == '\n' {
            return None;
        }
        *at += 1;
    }
    let mut text: String = chars[start..*at].iter().collect();
    *at += 1;
    if text == "*" {
        text = ":".into();
    }
    if text.contains(',') {
        let lists = text
            .split(',')
            .map(|part| sub_action(&format!("[{}]", part.trim_matches(' '))))
            .collect::<Option<Vec<_>>>()?;
        return Some(vec![Node::Union(lists)]);
    }
    if let Some(key) = text.strip_prefix('\'').and_then(|t| t.strip_suffix('\''))
        && !key.contains('\'')
    {
        return sub_action(&format!(".{key}"));
    }
    let parts: Vec<&str> = text.split(':').collect();
    if parts.len() > 3 {
        return None;
    }
    let mut params = [Param::default(); 3];
    for (i, param) in params.iter_mut().enumerate() {
        match parts.get(i) {
            Some(part) if !part.is_empty() => {
                let digits = part.strip_prefix('-').unwrap_or(part);
                if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
                    return None;
                }
                *param = Param {
                    value: part.parse().ok()?,
                    known: true,
                    derived: false,
                };
            }
            None if i == 1 => {
                *param = Param {
                    value: params_start(&parts)? + 1,
                    known: true,
                    derived: true,
                };
            }
            _ => {}
        }
    }
    Some(vec![Node::Array(params)])
}

/// The start of a lone index (`[3]`), 0 when empty.
fn params_start(parts: &[&str]) -> Option<i64> {
    match parts.first() {
        Some(part) if !part.is_empty() => part.parse().ok(),
        _ => Some(0),
    }
}

/// A filter after its `[?(` (`parseFilter`).
fn filter(chars: &[char], at: &mut usize) -> Option<Node> {
    let start = *at;
    let (mut begin, mut end, mut pair) = (false, false, ' ');
    loop {
        let c = *chars.get(*at)?;
        *at += 1;
        match c {
            '\n' => return None,
            '"' | '\'' if !begin => (begin, pair) = (true, c),
            '"' | '\'' => end |= chars[*at - 2] != '\\' && c == pair,
            ')' if begin == end => break,
            _ => {}
        }
    }
    if chars.get(*at) != Some(&']') {
        return None;
    }
    *at += 1;
    let text: String = chars[start..*at - 2].iter().collect();
    let operator = |c: char| matches!(c, '!' | '<' | '>' | '=');
    let left_end = text.find(operator).unwrap_or(text.len());
    let rest = &text[left_end..];
    let op_end = rest.find(|c| !operator(c)).unwrap_or(rest.len());
    if left_end == 0 || op_end == 0 || op_end == rest.len() {
        return Some(Node::Filter(
            sub_action(&text)?,
            Vec::new(),
            "exists".into(),
        ));
    }
    Some(Node::Filter(
        sub_action(&text[..left_end])?,
        sub_action(&rest[op_end..])?,
        rest[..op_end].to_string(),
    ))
}
