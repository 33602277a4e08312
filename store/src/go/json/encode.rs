//! JSON as Go's `encoding/json` writes it: map keys sorted, a struct's
//! fields in its own order, `<`, `>` and `&` escaped, floats as Go formats
//! them.

use serde_json::Value;

use crate::go::strconv::{decimal_form, exponent_form, push_quoted};

/// JSON as Go's `encoding/json` writes it: object keys sorted, `<`, `>`
/// and `&` escaped, numbers as parsed.
pub fn go_json(value: &Value) -> String {
    let mut out = String::new();
    write_go_json(value, &mut out);
    out
}

/// A patched object of a built-in kind as the real server writes it in a
/// patch's refusal: what the patch changed (from `before`) was decoded
/// into maps, its keys sorted as [`go_json`] sorts them; what it left alone
/// is written as it was encoded, in the object's own order.
pub fn go_json_patched(value: &Value, before: &Value) -> String {
    let mut out = String::new();
    write_json(value, Order::Patched(Some(before)), &mut out);
    out
}

/// Compact JSON indented as `json.MarshalIndent(v, "", " ")` writes it
/// (`json.Indent`): one space a level, `": "` after keys, an empty object
/// or list kept as `{}` or `[]`.
pub(crate) fn indent(compact: &str) -> String {
    let mut out = String::with_capacity(compact.len() * 2);
    let mut depth = 0usize;
    let (mut in_string, mut escaped, mut opened) = (false, false, false);
    let newline = |out: &mut String, depth: usize| {
        out.push('\n');
        out.push_str(&" ".repeat(depth));
    };
    for c in compact.chars() {
        if in_string {
            out.push(c);
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        if opened {
            opened = false;
            if c == '}' || c == ']' {
                depth -= 1;
                out.push(c);
                continue;
            }
            newline(&mut out, depth);
        }
        match c {
            '{' | '[' => {
                out.push(c);
                depth += 1;
                opened = true;
            }
            '}' | ']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            ',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            ':' => out.push_str(": "),
            '"' => {
                out.push(c);
                in_string = true;
            }
            c if c.is_whitespace() => {}
            c => out.push(c),
        }
    }
    out
}

/// [`go_json`], written at the end of `out`.
pub fn write_go_json(value: &Value, out: &mut String) {
    write_json(value, Order::Sorted, out);
}

/// How [`write_json`] orders an object's keys.
#[derive(Clone, Copy)]
enum Order<'a> {
    /// Sorted, as Go writes a map.
    Sorted,
    /// In the object's own order, as Go writes a struct it decoded.
    Own,
    /// In the object's own order where it equals `before`, sorted where a
    /// patch changed it ([`go_json_patched`]).
    Patched(Option<&'a Value>),
}

/// JSON as Go writes it, object keys ordered as `order` says.
fn write_json(value: &Value, order: Order<'_>, out: &mut String) {
    let order = match order {
        Order::Patched(before) if before == Some(value) => Order::Own,
        order => order,
    };
    let child = |at: &dyn Fn(&Value) -> Option<&Value>| match order {
        Order::Patched(before) => Order::Patched(before.and_then(at)),
        order => order,
    };
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            if !matches!(order, Order::Own) {
                keys.sort();
            }
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_string(key, out);
                out.push(':');
                write_json(&map[key], child(&|b| b.get(key)), out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(item, child(&|b| b.get(i)), out);
            }
            out.push(']');
        }
        Value::String(text) => write_go_string(text, out),
        Value::Number(n) if n.as_i64().is_none() && n.as_u64().is_none() => {
            out.push_str(&go_json_float(n.as_f64().unwrap_or_default()));
        }
        other => {
            use std::fmt::Write as _;
            let _ = write!(out, "{other}");
        }
    }
}

/// A string as Go's `encoding/json` quotes it: JSON's escapes, and `<`,
/// `>`, `&` as `\u003c`, `\u003e`, `\u0026`.
pub(crate) fn write_go_string(text: &str, out: &mut String) {
    push_quoted(text, out, |c, out| match c {
        '<' => out.push_str("\\u003c"),
        '>' => out.push_str("\\u003e"),
        '&' => out.push_str("\\u0026"),
        c if (c as u32) < 0x20 => {
            use std::fmt::Write as _;
            let _ = write!(out, "\\u{:04x}", c as u32);
        }
        c => out.push(c),
    });
}

/// A float as Go's `encoding/json` writes it: plain decimal, with an
/// exponent below 1e-6 or from 1e21 on (`e-07` cleaned to `e-7`).
fn go_json_float(value: f64) -> String {
    let abs = value.abs();
    if abs == 0.0 || (1e-6..1e21).contains(&abs) {
        return if abs == 0.0 {
            "0".into()
        } else {
            decimal_form(value)
        };
    }
    let text = exponent_form(value);
    match text.split_once("e-0") {
        Some((mantissa, exponent)) => format!("{mantissa}e-{exponent}"),
        None => text,
    }
}

/// A value as Go's `encoding/json` writes a struct: fields in the given
/// order (the struct's), absent ones left out, then the rest of `value`'s
/// keys sorted.
pub(crate) fn go_struct_json(value: &Value, order: &[&str]) -> String {
    let Some(map) = value.as_object() else {
        return go_json(value);
    };
    let mut keys: Vec<&str> = order
        .iter()
        .copied()
        .filter(|k| map.contains_key(*k))
        .collect();
    let mut rest: Vec<&str> = map
        .keys()
        .map(String::as_str)
        .filter(|k| !order.contains(k))
        .collect();
    rest.sort_unstable();
    keys.extend(rest);
    let fields: Vec<String> = keys
        .into_iter()
        .map(|k| {
            format!(
                "{}:{}",
                go_json(&Value::String(k.to_string())),
                go_json(&map[k])
            )
        })
        .collect();
    format!("{{{}}}", fields.join(","))
}
