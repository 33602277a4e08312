//! A JSONPath evaluated as client-go's `util/jsonpath/jsonpath.go`
//! evaluates it, missing keys allowed.

use std::borrow::Cow;

use serde_json::Value;

use super::{Found, Node, Param};

/// `value`'s child `pick` chooses, borrowed as `value` is.
fn child<'a>(value: &Found<'a>, pick: impl Fn(&Value) -> Option<&Value>) -> Option<Found<'a>> {
    match value {
        Cow::Borrowed(v) => pick(v).map(Cow::Borrowed),
        Cow::Owned(v) => pick(v).cloned().map(Cow::Owned),
    }
}

/// `value`'s children: an object's values or a list's items.
fn children<'a>(value: &Found<'a>) -> Vec<Found<'a>> {
    let count = match &**value {
        Value::Object(map) => map.len(),
        Value::Array(items) => items.len(),
        _ => 0,
    };
    (0..count)
        .filter_map(|i| {
            child(value, |v| match v {
                Value::Object(map) => map.values().nth(i),
                other => other.get(i),
            })
        })
        .collect()
}

/// The nodes evaluated in turn (`evalList`); `Err` where Go's evaluation fails.
pub(super) fn list<'a>(mut values: Vec<Found<'a>>, nodes: &[Node]) -> Result<Vec<Found<'a>>, ()> {
    for node in nodes {
        values = walk(values, node)?;
    }
    Ok(values)
}

fn walk<'a>(input: Vec<Found<'a>>, node: &Node) -> Result<Vec<Found<'a>>, ()> {
    let mut out = Vec::new();
    match node {
        Node::Field(name) => {
            for value in input.iter().filter(|v| !v.is_null()) {
                out.extend(child(value, |v| v.get(name.as_str())));
            }
        }
        Node::Wildcard => input.iter().for_each(|v| out.extend(children(v))),
        Node::Recursive => {
            for value in input.iter().filter(|v| !v.is_null()) {
                let below = children(value);
                if !below.is_empty() {
                    out.push(value.clone());
                    out.extend(walk(below, node)?);
                }
            }
        }
        Node::Array(params) => {
            for value in input.iter().filter(|v| !v.is_null()) {
                let len = value.as_array().ok_or(())?.len() as i64;
                let (start, end) = bounds(params, len)?;
                let Some((start, end)) = start.zip(end) else {
                    return Ok(out);
                };
                let step = match params[2] {
                    Param {
                        known: true, value, ..
                    } if value <= 0 => return Err(()),
                    Param {
                        known: true, value, ..
                    } => value as usize,
                    _ => 1,
                };
                for i in (start..end).step_by(step) {
                    out.extend(child(value, |v| v.get(i as usize)));
                }
            }
        }
        Node::Union(lists) => {
            for nodes in lists {
                out.extend(list(input.clone(), nodes)?);
            }
        }
        Node::Filter(left, right, op) => {
            for value in &input {
                let items = children(value);
                if !value.is_array() {
                    return Err(());
                }
                for item in items {
                    if passes(&item, left, right, op)? {
                        out.push(item);
                    }
                }
            }
        }
        Node::Constant(constant) => out = vec![Cow::Owned(constant.clone()); input.len()],
        Node::Identifier => return Err(()),
    }
    Ok(out)
}

/// A slice's start and end in a list of `len` (`evalArray`); `None` for
/// an empty selection, `Err` out of range.
fn bounds(params: &[Param; 3], len: i64) -> Result<(Option<i64>, Option<i64>), ()> {
    let mut start = if params[0].known { params[0].value } else { 0 };
    if start < 0 {
        start += len;
    }
    let mut end = if params[1].known {
        params[1].value
    } else {
        len
    };
    if end < 0 || (end == 0 && params[1].derived) {
        end += len;
    }
    if end == start {
        return Ok((None, None));
    }
    if start >= len || start < 0 || end > len || end < 0 || start > end {
        return Err(());
    }
    Ok((Some(start), Some(end)))
}

/// Whether `item` passes a filter (`evalFilter`).
fn passes(item: &Found<'_>, left: &[Node], right: &[Node], op: &str) -> Result<bool, ()> {
    let lefts = list(vec![item.clone()], left);
    if op == "exists" {
        return Ok(lefts.is_ok_and(|l| !l.is_empty()));
    }
    let one = |values: Vec<Found<'_>>| match values.len() {
        0 => Ok(None),
        1 => Ok(values.into_iter().next().map(Cow::into_owned)),
        _ => Err(()),
    };
    let Some(left) = one(lefts?)? else {
        return Ok(false);
    };
    let Some(right) = one(list(vec![item.clone()], right)?)? else {
        return Ok(false);
    };
    compare(&left, &right, op)
}

/// Go's template comparison of two basic values (`funcs.go`): the same
/// kind, or signed against unsigned integers.
fn compare(left: &Value, right: &Value, op: &str) -> Result<bool, ()> {
    use std::cmp::Ordering;
    let order = match (left, right) {
        (Value::String(a), Value::String(b)) => a.cmp(b),
        (Value::Bool(a), Value::Bool(b)) if matches!(op, "==" | "!=") => a.cmp(b),
        (Value::Number(a), Value::Number(b)) => {
            match (a.as_i64(), b.as_i64(), a.as_u64(), b.as_u64()) {
                (Some(a), Some(b), _, _) => a.cmp(&b),
                (None, None, Some(a), Some(b)) => a.cmp(&b),
                (Some(a), None, _, Some(b)) => (a as i128).cmp(&(b as i128)),
                (None, Some(b), Some(a), _) => (a as i128).cmp(&(b as i128)),
                _ if a.is_f64() && b.is_f64() => a
                    .as_f64()
                    .partial_cmp(&b.as_f64())
                    .unwrap_or(Ordering::Less),
                _ => return Err(()),
            }
        }
        _ => return Err(()),
    };
    Ok(match op {
        "==" => order == Ordering::Equal,
        "!=" => order != Ordering::Equal,
        "<" => order == Ordering::Less,
        ">" => order == Ordering::Greater,
        "<=" => order != Ordering::Greater,
        ">=" => order != Ordering::Less,
        _ => return Err(()),
    })
}
