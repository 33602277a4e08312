//! The validations the real server runs on a checked expression
//! (`cel.ASTValidators`, `cel/validator.go`): a literal first argument of
//! `matches`, `duration` or `timestamp` must be a valid pattern, duration
//! or time (`invalid matches argument`), and the elements of a list or map
//! literal must be of one type (`expected type 'int' but found 'string'`),
//! except in the arguments of `format`, whose clauses are checked against
//! its arguments instead ([`formatcheck`]).

use std::collections::HashMap;

use cel::IdedExpr;
use cel::common::ast::{EntryExpr, Expr, LiteralValue, SourceInfo};

use super::check::Issue;
use super::formatcheck;
use super::types::Ty;
use crate::go::regexp::compile;
use crate::go::time::duration::parse_duration;
use crate::go::time::strfmt::parse_date_time;

/// The issues of `expr`, whose expressions have the types `types`.
pub(crate) fn issues(expr: &IdedExpr, info: &SourceInfo, types: &HashMap<u64, Ty>) -> Vec<Issue> {
    let mut walk = Walk {
        info,
        types,
        issues: Vec::new(),
    };
    walk.visit(expr, false);
    walk.issues
}

struct Walk<'a> {
    info: &'a SourceInfo,
    types: &'a HashMap<u64, Ty>,
    issues: Vec<Issue>,
}

/// Whether two types are the same, type parameters aside
/// (`IsEquivalentType`).
fn equivalent(a: &Ty, b: &Ty) -> bool {
    let (pa, pb) = (a.params(), b.params());
    a.kind() == b.kind()
        && pa.len() == pb.len()
        && (matches!(a, Ty::Param(_)) || a.type_name() == b.type_name())
        && pa.iter().zip(&pb).all(|(x, y)| equivalent(x, y))
}

impl Walk<'_> {
    fn report(&mut self, id: u64, message: String) {
        let offset = self.info.offset_for(id).map_or(0, |(s, _)| s as usize);
        self.issues.push(Issue { offset, message });
    }

    fn type_of(&self, e: &IdedExpr) -> Ty {
        self.types.get(&e.id).cloned().unwrap_or(Ty::Dyn)
    }

    fn mismatch(&mut self, id: u64, expected: &Ty, found: &Ty) {
        self.report(
            id,
            format!("expected type '{expected}' but found '{found}'"),
        );
    }

    fn visit(&mut self, e: &IdedExpr, exempt: bool) {
        match &e.expr {
            Expr::Call(call) => {
                self.check_literal_argument(&call.func_name, call.args.first());
                if let Some((id, message)) = formatcheck::check(e.id, call, self.types) {
                    self.report(id, message);
                }
                let exempt = exempt || call.func_name == "format";
                if let Some(t) = &call.target {
                    self.visit(t, exempt);
                }
                call.args.iter().for_each(|a| self.visit(a, exempt));
            }
            Expr::Select(s) => self.visit(&s.operand, exempt),
            Expr::List(list) => {
                if !exempt {
                    let mut first: Option<Ty> = None;
                    for (i, elem) in list.elements.iter().enumerate() {
                        let mut t = self.type_of(elem);
                        if list.optional_indices.contains(&i) {
                            t = t.unwrap_optional().cloned().unwrap_or(t);
                        }
                        match &first {
                            None => first = Some(t),
                            Some(f) if !equivalent(f, &t) => {
                                let f = f.clone();
                                self.mismatch(elem.id, &f, &t);
                                break;
                            }
                            Some(_) => {}
                        }
                    }
                }
                list.elements.iter().for_each(|x| self.visit(x, exempt));
            }
            Expr::Map(map) => {
                let mut first: Option<(Ty, Ty)> = None;
                for entry in &map.entries {
                    let EntryExpr::MapEntry(entry) = &entry.expr else {
                        continue;
                    };
                    let kt = self.type_of(&entry.key);
                    let mut vt = self.type_of(&entry.value);
                    if entry.optional {
                        vt = vt.unwrap_optional().cloned().unwrap_or(vt);
                    }
                    match &first {
                        None => first = Some((kt, vt)),
                        Some((k, v)) if !exempt => {
                            let (k, v) = (k.clone(), v.clone());
                            if !equivalent(&k, &kt) {
                                self.mismatch(entry.key.id, &k, &kt);
                            }
                            if !equivalent(&v, &vt) {
                                self.mismatch(entry.value.id, &v, &vt);
                            }
                        }
                        Some(_) => {}
                    }
                    self.visit(&entry.key, exempt);
                    self.visit(&entry.value, exempt);
                }
            }
            Expr::Struct(s) => {
                for entry in &s.entries {
                    if let EntryExpr::StructField(f) = &entry.expr {
                        self.visit(&f.value, exempt);
                    }
                }
            }
            Expr::Comprehension(c) => {
                for part in [
                    &c.iter_range,
                    &c.accu_init,
                    &c.loop_cond,
                    &c.loop_step,
                    &c.result,
                ] {
                    self.visit(part, exempt);
                }
            }
            Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
        }
    }

    /// `matches`, `duration` and `timestamp` with a literal first argument.
    fn check_literal_argument(&mut self, function: &str, first: Option<&IdedExpr>) {
        let Some(first) = first else {
            return;
        };
        let Expr::Literal(literal) = &first.expr else {
            return;
        };
        let valid = match (function, literal) {
            ("matches", LiteralValue::String(s)) => compile(s.inner()).is_ok(),
            ("duration", LiteralValue::String(s)) => go_duration_in_range(s.inner()),
            // Declared, but the real server cannot convert an int.
            ("duration", LiteralValue::Int(_)) => false,
            ("timestamp", LiteralValue::String(s)) => valid_timestamp(s.inner()),
            _ => true,
        };
        if !valid {
            self.report(first.id, format!("invalid {function} argument"));
        }
    }
}

/// A duration `duration()` accepts: Go's form, within CEL's range.
fn go_duration_in_range(s: &str) -> bool {
    parse_duration(s).is_ok_and(|nanos| i128::from(nanos).abs() <= 315_576_000_000 * 1_000_000_000)
}

/// A time `timestamp()` accepts: RFC 3339, years 1 to 9999.
fn valid_timestamp(s: &str) -> bool {
    use chrono::Datelike;
    s.as_bytes()
        .get(10)
        .is_some_and(|b| *b == b'T' || *b == b't')
        && chrono::DateTime::parse_from_rfc3339(s).is_ok()
        && parse_date_time(s).is_some_and(|t| (1..=9999).contains(&t.year()))
}
