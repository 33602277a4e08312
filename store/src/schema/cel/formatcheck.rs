//! The static check of `'...'.format([...])` with a literal format string
//! and a list literal (cel-go's `stringFormatValidator`,
//! `ext/formatting.go`): each clause must have an argument of a type it
//! formats, and no argument may be left over.

use std::collections::HashMap;

use cel::IdedExpr;
use cel::common::ast::{CallExpr, EntryExpr, Expr, LiteralValue};

use super::types::Ty;

/// A problem: the expression it is about, and the message.
pub(crate) type Problem = (u64, String);

/// The problem of a `format` call, if it is one to check.
pub(crate) fn check(call_id: u64, call: &CallExpr, types: &HashMap<u64, Ty>) -> Option<Problem> {
    if call.func_name != "format" || call.args.len() != 1 {
        return None;
    }
    let Expr::Literal(LiteralValue::String(format)) = &call.target.as_deref()?.expr else {
        return None;
    };
    let Expr::List(list) = &call.args[0].expr else {
        return None;
    };
    let checker = Checker {
        types,
        args: &list.elements,
    };
    match checker.run(format.inner()) {
        Err((id, message)) => Some((id.unwrap_or(call_id), message)),
        Ok(requested) if list.elements.len() > requested => Some((
            call_id,
            format!(
                "too many arguments supplied to string.format (expected {requested}, got {})",
                list.elements.len()
            ),
        )),
        Ok(_) => None,
    }
}

struct Checker<'a> {
    types: &'a HashMap<u64, Ty>,
    args: &'a [IdedExpr],
}

/// The kinds of types a clause formats, by cel-go's kind names.
const STRINGS: &[u8] = &[11, 12, 4, 5, 6, 3, 7, 10, 8, 9, 15, 2];

impl Checker<'_> {
    fn type_of(&self, e: &IdedExpr) -> Ty {
        self.types.get(&e.id).cloned().unwrap_or(Ty::Dyn)
    }

    /// Whether `e` has one of the kinds (`verifyTypeOneOf`).
    fn one_of(&self, e: &IdedExpr, kinds: &[u8]) -> bool {
        let t = self.type_of(e);
        matches!(t, Ty::Dyn) || kinds.contains(&t.kind())
    }

    /// `verifyString`: the expression, or the first element of a list or
    /// map literal inside it, that `%s` cannot format.
    fn unformattable<'e>(&self, e: &'e IdedExpr) -> Option<&'e IdedExpr> {
        if !self.one_of(e, STRINGS) {
            return Some(e);
        }
        match &e.expr {
            Expr::List(l) => l.elements.iter().find_map(|x| self.unformattable(x)),
            Expr::Map(m) => m.entries.iter().find_map(|entry| match &entry.expr {
                EntryExpr::MapEntry(me) => self
                    .unformattable(&me.key)
                    .or_else(|| self.unformattable(&me.value)),
                EntryExpr::StructField(_) => None,
            }),
            _ => None,
        }
    }

    fn clause_error(&self, e: &IdedExpr, what: &str) -> (Option<u64>, String) {
        let name = self.type_of(e).type_name().to_string();
        (
            Some(e.id),
            format!("error during formatting: {what}, was given {name}"),
        )
    }

    /// Walks the format string (`parseFormatString`): the number of
    /// arguments it takes, or the first problem.
    fn run(&self, format: &str) -> Result<usize, (Option<u64>, String)> {
        let bytes = format.as_bytes();
        let (mut i, mut index) = (0, 0);
        while i < bytes.len() {
            if bytes[i] != b'%' {
                i += 1;
                continue;
            }
            if bytes.get(i + 1) == Some(&b'%') {
                i += 2;
                continue;
            }
            if i + 1 >= bytes.len() {
                return Err((None, "unexpected end of string".into()));
            }
            let Some(arg) = self.args.get(index) else {
                return Err((None, format!("index {index} out of range")));
            };
            let mut j = i + 1;
            if bytes[j] == b'.' {
                j += 1;
                while j < bytes.len() && bytes[j].is_ascii_digit() {
                    j += 1;
                }
                if j >= bytes.len() {
                    return Err((
                        None,
                        "could not parse formatting clause: error while parsing precision: could not find end of precision specifier"
                            .into(),
                    ));
                }
            }
            let clause = format[j..].chars().next().unwrap_or_default();
            let problem = match clause {
                's' => self.unformattable(arg).map(|bad| {
                    self.clause_error(
                        bad,
                        "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps",
                    )
                }),
                'd' => (!self.one_of(arg, &[4, 5]))
                    .then(|| self.clause_error(arg, "decimal clause can only be used on integers")),
                'f' => (!self.one_of(arg, &[6, 7]))
                    .then(|| self.clause_error(arg, "fixed-point clause can only be used on doubles")),
                'e' => (!self.one_of(arg, &[6, 7]))
                    .then(|| self.clause_error(arg, "scientific clause can only be used on doubles")),
                'b' => (!self.one_of(arg, &[4, 5, 3]))
                    .then(|| self.clause_error(arg, "only integers and bools can be formatted as binary")),
                'x' | 'X' => (!self.one_of(arg, &[4, 5, 7, 8])).then(|| {
                    self.clause_error(arg, "only integers, byte buffers, and strings can be formatted as hex")
                }),
                'o' => (!self.one_of(arg, &[4, 5]))
                    .then(|| self.clause_error(arg, "octal clause can only be used on integers")),
                other => Some((
                    None,
                    format!("could not parse formatting clause: unrecognized formatting clause \"{other}\""),
                )),
            };
            if let Some(problem) = problem {
                return Err(problem);
            }
            i = j + clause.len_utf8();
            index += 1;
        }
        Ok(index)
    }
}
